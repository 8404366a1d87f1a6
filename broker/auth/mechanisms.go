package auth

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Mechanisms returns the SASL mechanisms a listener enables, by the names
// of its sasl.enabled.mechanisms, in that order: PLAIN, SCRAM-SHA-256,
// SCRAM-SHA-512. The SCRAM mechanisms and PLAIN check the credentials
// creds finds (nil: none); PLAIN checks the users of plainJAAS first, the
// listener's listener.name.<l>.plain.sasl.jaas.config ("" for none, see
// ParsePlainJAAS). A name klog does not serve, one given twice, or a
// malformed plainJAAS is an error.
func Mechanisms(names []string, creds CredentialSource, plainJAAS string) ([]Mechanism, error) {
	var users map[string]string
	if strings.TrimSpace(plainJAAS) != "" {
		var err error
		if users, err = ParsePlainJAAS(plainJAAS); err != nil {
			return nil, err
		}
	}
	out := make([]Mechanism, 0, len(names))
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("%w: %q is enabled twice", ErrUnknownMechanism, name)
		}
		seen[name] = true
		if name == PLAIN {
			salt := make([]byte, fakeSaltBytes)
			rand.Read(salt)
			out = append(out, &plainMechanism{creds: creds, users: users, fakeSalt: salt})
			continue
		}
		m, ok := newSCRAM(name, creds)
		if !ok {
			return nil, fmt.Errorf("%w: %q (klog serves %s, %s and %s)", ErrUnknownMechanism, name, PLAIN, SCRAMSHA256, SCRAMSHA512)
		}
		out = append(out, m)
	}
	return out, nil
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
	toks, err := jaasTokens(s)
	if err != nil {
		return nil, err
	}
	if len(toks) < 3 || toks[len(toks)-1] != ";" {
		return nil, fmt.Errorf("JAAS config: want %s, a control flag, options and ';'", plainLoginModule)
	}
	if toks[0] != plainLoginModule {
		return nil, fmt.Errorf("JAAS config: login module %q is not %s", toks[0], plainLoginModule)
	}
	switch toks[1] {
	case "required", "requisite", "sufficient", "optional":
	default:
		return nil, fmt.Errorf("JAAS config: %q is not a control flag (required, requisite, sufficient, optional)", toks[1])
	}
	users := map[string]string{}
	opts := toks[2 : len(toks)-1]
	for i := 0; i < len(opts); i += 3 {
		if i+2 >= len(opts) || opts[i+1] != "=" || opts[i] == "=" || opts[i] == ";" {
			return nil, fmt.Errorf("JAAS config: options must be name=value")
		}
		if user, ok := strings.CutPrefix(opts[i], "user_"); ok && user != "" {
			users[user] = strings.TrimPrefix(opts[i+2], "\x00")
		}
	}
	return users, nil
}

// jaasTokens splits a JAAS config into words, '=', ';' and quoted
// values; a quoted value's token starts with NUL, so that no quoted value
// reads as '=' or ';'.
func jaasTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '=' || c == ';':
			toks = append(toks, string(c))
			i++
		case c == '"':
			var b strings.Builder
			b.WriteByte(0)
			for i++; ; i++ {
				if i >= len(s) {
					return nil, fmt.Errorf("JAAS config: unterminated quoted value")
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
				} else if s[i] == '"' {
					break
				}
				b.WriteByte(s[i])
			}
			toks = append(toks, b.String())
			i++
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n=;\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}
