package auth

// PLAIN (RFC 4616), as Kafka's PlainSaslServer serves it: one message,
// authzid NUL user NUL password, answered with nothing. The authorization
// id must be empty or the user's. The password is checked against, in
// order:
//
//   - the users of the listener's JAAS config
//     (listener.name.<l>.plain.sasl.jaas.config's user_NAME="password"
//     entries, Kafka's PlainServerCallbackHandler): a user named there is
//     decided there;
//   - else the user's SCRAM credentials in the metadata, a klog addition
//     (Kafka's PLAIN knows only its JAAS users): the password is salted
//     with each credential's salt and iterations and its StoredKey
//     compared in constant time, so a user made with `klog user create`
//     logs in with PLAIN too.
//
// An unknown user costs the salting of a password as a known one does.
// Messages are Kafka's, which names what failed ("Invalid username or
// password") without saying whether the user exists.

import (
	"crypto/sha256"
	"crypto/subtle"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxPlainToken bounds a PLAIN message: RFC 4616 asks servers to accept
// 255 octets for each of its three parts.
const maxPlainToken = 1024

type plainMechanism struct {
	creds CredentialSource
	users map[string]string // the JAAS config's users and passwords
	// fakeSalt is what an unknown user's password is salted with.
	fakeSalt []byte
}

func (m *plainMechanism) Name() string { return PLAIN }

func (m *plainMechanism) Start() Exchange { return &plainExchange{m: m} }

type plainExchange struct {
	m    *plainMechanism
	used bool
	user string // set once authenticated
}

func (x *plainExchange) Principal() string {
	if x.user == "" {
		return ""
	}
	return "User:" + x.user
}

func (x *plainExchange) Expiry() time.Time { return time.Time{} }

func (x *plainExchange) Next(token []byte) ([]byte, bool, error) {
	if x.used {
		return nil, false, invalidCredentials(PLAIN, "a message after the exchange ended")
	}
	x.used = true
	if len(token) > maxPlainToken {
		return nil, false, refused("Authentication failed: Invalid username or password", "the message is too long")
	}
	if !utf8.Valid(token) {
		return nil, false, refused("Authentication failed: Invalid username or password", "the message is not UTF-8")
	}
	parts := strings.SplitN(string(token), "\x00", 4)
	if len(parts) != 3 {
		return nil, false, refused("Invalid SASL/PLAIN response: expected 3 tokens, got "+strconv.Itoa(min(len(parts), 4)), "malformed message")
	}
	authzid, user, password := parts[0], parts[1], parts[2]
	switch {
	case user == "":
		return nil, false, refused("Authentication failed: username not specified", "no user name")
	case password == "":
		return nil, false, refused("Authentication failed: password not specified", "no password")
	}
	if why := x.m.check(user, password); why != "" {
		return nil, false, claimed(refused("Authentication failed: Invalid username or password", why), user)
	}
	if authzid != "" && authzid != user {
		return nil, false, claimed(refused("Authentication failed: Client requested an authorization id that is different from username",
			"authorization id "+authzid+" is not the user "+user), user)
	}
	x.user = user
	return nil, true, nil
}

// check says why user's password is not password, "" when it is.
func (m *plainMechanism) check(user, password string) string {
	if want, ok := m.users[user]; ok {
		a, b := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(password))
		if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
			return "wrong password"
		}
		return ""
	}
	found := false
	if m.creds != nil {
		for _, mech := range SCRAMMechanisms {
			c, ok := m.creds.SCRAMCredential(user, mech)
			if !ok || c.Iterations < MinSCRAMIterations || c.Iterations > MaxSCRAMIterations {
				continue
			}
			found = true
			h, _ := scramHash(mech)
			salted, err := saltPassword(h, password, c.Salt, c.Iterations)
			if err == nil && subtle.ConstantTimeCompare(storedKey(h, salted), c.StoredKey) == 1 {
				return ""
			}
		}
	}
	if !found {
		h, _ := scramHash(SCRAMSHA512)
		saltPassword(h, password, m.fakeSalt, MinSCRAMIterations)
		return "unknown user"
	}
	return "wrong password"
}
