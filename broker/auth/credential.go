package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
)

// The SASL mechanisms klog knows by name.
const (
	PLAIN       = "PLAIN"
	SCRAMSHA256 = "SCRAM-SHA-256"
	SCRAMSHA512 = "SCRAM-SHA-512"
)

// The iteration counts a SCRAM credential may have, Kafka's: the minimum
// of its SCRAM mechanisms and ScramControlManager's maximum.
const (
	MinSCRAMIterations = 4096
	MaxSCRAMIterations = 16384
)

// ErrUnacceptableCredential is returned for a SCRAM credential klog will
// not keep: an iteration count outside [MinSCRAMIterations,
// MaxSCRAMIterations], or an empty salt or salted password.
var ErrUnacceptableCredential = errors.New("unacceptable credential")

// ErrUnknownMechanism is returned for a SASL mechanism name klog does not
// serve.
var ErrUnknownMechanism = errors.New("unknown SASL mechanism")

// SCRAMCredential is a user's credential for one SCRAM mechanism, as the
// metadata keeps it (RFC 5802): never the password, only the salt, the
// iteration count and the keys derived from the salted password.
type SCRAMCredential struct {
	Salt       []byte
	StoredKey  []byte // H(HMAC(SaltedPassword, "Client Key"))
	ServerKey  []byte // HMAC(SaltedPassword, "Server Key")
	Iterations int32
}

// CredentialSource looks up a user's SCRAM credential for a mechanism in
// the current metadata; the mechanisms ask it at each exchange, so a
// credential changed or deleted counts from the next login on.
type CredentialSource interface {
	SCRAMCredential(user, mechanism string) (SCRAMCredential, bool)
}

// SCRAMMechanisms are the SCRAM mechanisms, in the order of their Kafka
// type numbers (1 and 2).
var SCRAMMechanisms = []string{SCRAMSHA256, SCRAMSHA512}

// scramHash is the hash of a SCRAM mechanism.
func scramHash(mechanism string) (func() hash.Hash, bool) {
	switch mechanism {
	case SCRAMSHA256:
		return sha256.New, true
	case SCRAMSHA512:
		return sha512.New, true
	}
	return nil, false
}

// SaltedSCRAMCredential derives the credential kept for a salted password
// (what AlterUserScramCredentials carries: the client salts the password,
// the server never sees it).
func SaltedSCRAMCredential(mechanism string, salt, saltedPassword []byte, iterations int32) (SCRAMCredential, error) {
	h, ok := scramHash(mechanism)
	if !ok {
		return SCRAMCredential{}, fmt.Errorf("%w: %q", ErrUnknownMechanism, mechanism)
	}
	switch {
	case iterations < MinSCRAMIterations:
		return SCRAMCredential{}, fmt.Errorf("%w: too few iterations: %d, less than %d", ErrUnacceptableCredential, iterations, MinSCRAMIterations)
	case iterations > MaxSCRAMIterations:
		return SCRAMCredential{}, fmt.Errorf("%w: too many iterations: %d, more than %d", ErrUnacceptableCredential, iterations, MaxSCRAMIterations)
	case len(salt) == 0:
		return SCRAMCredential{}, fmt.Errorf("%w: empty salt", ErrUnacceptableCredential)
	case len(saltedPassword) == 0:
		return SCRAMCredential{}, fmt.Errorf("%w: empty salted password", ErrUnacceptableCredential)
	}
	return SCRAMCredential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  storedKey(h, saltedPassword),
		ServerKey:  keyed(h, saltedPassword, []byte("Server Key")),
		Iterations: iterations,
	}, nil
}

// NewSCRAMCredential salts password with salt, or with 24 random bytes
// when salt is nil, and derives the credential kept for it.
func NewSCRAMCredential(mechanism, password string, salt []byte, iterations int32) (SCRAMCredential, error) {
	h, ok := scramHash(mechanism)
	if !ok {
		return SCRAMCredential{}, fmt.Errorf("%w: %q", ErrUnknownMechanism, mechanism)
	}
	if salt == nil {
		salt = make([]byte, 24)
		rand.Read(salt)
	}
	if iterations < MinSCRAMIterations || iterations > MaxSCRAMIterations {
		// Refused before the costly salting.
		return SaltedSCRAMCredential(mechanism, salt, nil, iterations)
	}
	salted, err := saltPassword(h, password, salt, iterations)
	if err != nil {
		return SCRAMCredential{}, err
	}
	return SaltedSCRAMCredential(mechanism, salt, salted, iterations)
}

// saltPassword is SaltedPassword := Hi(password, salt, i), Hi being PBKDF2
// with HMAC over h.
func saltPassword(h func() hash.Hash, password string, salt []byte, iterations int32) ([]byte, error) {
	b, err := pbkdf2.Key(h, password, salt, int(iterations), h().Size())
	if err != nil {
		return nil, fmt.Errorf("salt password: %w", err)
	}
	return b, nil
}

// keyed is HMAC(key, msg).
func keyed(h func() hash.Hash, key, msg []byte) []byte {
	mac := hmac.New(h, key)
	mac.Write(msg)
	return mac.Sum(nil)
}

// storedKey is StoredKey := H(HMAC(SaltedPassword, "Client Key")).
func storedKey(h func() hash.Hash, saltedPassword []byte) []byte {
	return digest(h, keyed(h, saltedPassword, []byte("Client Key")))
}

// digest is H(b).
func digest(h func() hash.Hash, b []byte) []byte {
	d := h()
	d.Write(b)
	return d.Sum(nil)
}
