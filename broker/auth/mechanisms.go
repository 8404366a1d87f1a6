package auth

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/klogdev/klog/internal/jaas"
)

// MechanismConfig is a listener's value of config name for mechanism, "" when
// unset: name "sasl.jaas.config" is the mechanism's JAAS config
// (listener.name.<l>.<mechanism>.sasl.jaas.config); others, such as
// sasl.server.callback.handler.class and the sasl.oauthbearer.* configs,
// as Kafka reads them for a mechanism (the listener's
// listener.name.<l>.<mechanism>.<name>, else listener.name.<l>.<name>,
// else the broker's). A nil MechanismConfig has nothing set.
type MechanismConfig func(mechanism, name string) string

// Mechanisms returns the SASL mechanisms a listener enables, by the names
// of its sasl.enabled.mechanisms, in that order: PLAIN, SCRAM-SHA-256,
// SCRAM-SHA-512, OAUTHBEARER. The SCRAM mechanisms and PLAIN check the
// credentials creds finds (nil: none); PLAIN checks the users of its
// JAAS config first (see ParsePlainJAAS); OAUTHBEARER validates tokens
// as config sets (newOAuthBearer). A name klog does not serve, one given
// twice, or a malformed config is an error.
func Mechanisms(names []string, creds CredentialSource, config MechanismConfig) ([]Mechanism, error) {
	if config == nil {
		config = func(string, string) string { return "" }
	}
	out := make([]Mechanism, 0, len(names))
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("%w: %q is enabled twice", ErrUnknownMechanism, name)
		}
		seen[name] = true
		switch name {
		case PLAIN:
			m, err := newPlain(creds, config(PLAIN, "sasl.jaas.config"))
			if err != nil {
				return nil, err
			}
			out = append(out, m)
			continue
		case OAUTHBEARER:
			m, err := newOAuthBearer(func(n string) string { return config(OAUTHBEARER, n) })
			if err != nil {
				return nil, fmt.Errorf("OAUTHBEARER: %w", err)
			}
			out = append(out, m)
			continue
		}
		m, ok := newSCRAM(name, creds)
		if !ok {
			return nil, fmt.Errorf("%w: %q (klog serves %s, %s, %s and %s)", ErrUnknownMechanism, name, PLAIN, SCRAMSHA256, SCRAMSHA512, OAUTHBEARER)
		}
		out = append(out, m)
	}
	return out, nil
}

// newPlain makes PLAIN, checking the users of jaas (see ParsePlainJAAS,
// "" for none) and then creds.
func newPlain(creds CredentialSource, jaas string) (*plainMechanism, error) {
	var users map[string]string
	if strings.TrimSpace(jaas) != "" {
		var err error
		if users, err = ParsePlainJAAS(jaas); err != nil {
			return nil, err
		}
	}
	salt := make([]byte, fakeSaltBytes)
	rand.Read(salt)
	return &plainMechanism{creds: creds, users: users, fakeSalt: salt}, nil
}

// plainLoginModule is the login module a PLAIN JAAS config names.
const plainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"

// ParsePlainJAAS returns the users and passwords of a PLAIN JAAS config,
// Kafka's sasl.jaas.config for PLAIN:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required
//	    username="admin" password="admin-secret"
//	    user_admin="admin-secret" user_alice="alice-secret";
//
// One login module, PlainLoginModule, with a control flag and options
// name=value, values quoted ("\"" and "\\" escaped inside) or bare; each
// user_NAME option is a user NAME with its password. username and
// password, the node's own login as a client, are not users.
func ParsePlainJAAS(s string) (map[string]string, error) {
	opts, err := parseJAAS(s, plainLoginModule)
	if err != nil {
		return nil, err
	}
	users := map[string]string{}
	for name, v := range opts {
		if user, ok := strings.CutPrefix(name, "user_"); ok && user != "" {
			users[user] = v
		}
	}
	return users, nil
}

// parseJAAS returns the options of a JAAS config of one login module,
// module.
func parseJAAS(s, module string) (map[string]string, error) {
	name, opts, err := jaas.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("JAAS config: %w", err)
	}
	if name != module {
		return nil, fmt.Errorf("JAAS config: login module %q is not %s", name, module)
	}
	return opts, nil
}
