package auth

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"hash"
	"sync"
	"time"
)

// Delegation tokens (KIP-48): a token's id is its SCRAM user name, and
// its HMAC, HmacSHA512 of the id under delegation.token.secret.key, in
// base64 its password. The metadata keeps neither the HMAC nor a
// credential: each node computes them from the id with the key, which
// every node must share.

// DelegationTokenHMAC is the HMAC of token id under secret, as Kafka's
// DelegationTokenManager computes it.
func DelegationTokenHMAC(secret, id string) []byte {
	return keyed(sha512.New, []byte(secret), []byte(id))
}

// EqualHMAC compares two HMACs in constant time.
func EqualHMAC(a, b []byte) bool { return hmac.Equal(a, b) }

// DelegationToken is what a SCRAM exchange with the tokenauth extension
// checks a client against: the token's owner becomes the principal, and
// the session lasts no longer than Expiry.
type DelegationToken struct {
	// Owner is the token's owner's principal name ("alice" of
	// User:alice).
	Owner  string
	HMAC   []byte
	Expiry time.Time
}

// TokenSource looks up the delegation token of an id in the current
// metadata, false when there is none or it has lapsed. A CredentialSource
// that is also a TokenSource lets the SCRAM mechanisms authenticate
// delegation tokens.
type TokenSource interface {
	DelegationToken(id string) (DelegationToken, bool)
}

// tokenCredential is the SCRAM credential of a token of the mechanism of
// h: the base64 HMAC salted with salt at the mechanism's minimum
// iteration count, as Kafka's DelegationTokenManager derives it.
func tokenCredential(h func() hash.Hash, hmacBytes, salt []byte) (SCRAMCredential, error) {
	salted, err := saltPassword(h, base64.StdEncoding.EncodeToString(hmacBytes), salt, MinSCRAMIterations)
	if err != nil {
		return SCRAMCredential{}, err
	}
	return SCRAMCredential{
		Salt:       salt,
		StoredKey:  storedKey(h, salted),
		ServerKey:  keyed(h, salted, []byte("Server Key")),
		Iterations: MinSCRAMIterations,
	}, nil
}

// maxTokenCredentials bounds the token credentials a mechanism caches:
// past it the cache starts over.
const maxTokenCredentials = 1024

// tokenCredentials caches the credentials of delegation tokens, so that
// a token logging in again, or a flood of client-first messages naming
// one, costs no new salting of its HMAC.
type tokenCredentials struct {
	mu struct {
		sync.Mutex
		byKey map[string]SCRAMCredential
	}
}

// get is the credential of token id whose HMAC is hmacBytes for
// mechanism m, salted with a salt of m's secret and the id.
func (c *tokenCredentials) get(m *scramMechanism, id string, hmacBytes []byte) (SCRAMCredential, error) {
	key := id + "\x00" + string(hmacBytes)
	c.mu.Lock()
	cred, ok := c.mu.byKey[key]
	c.mu.Unlock()
	if ok {
		return cred, nil
	}
	salt := keyed(m.hash, m.secret[:], []byte("token\x00"+id))[:fakeSaltBytes]
	cred, err := tokenCredential(m.hash, hmacBytes, salt)
	if err != nil {
		return SCRAMCredential{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.byKey == nil || len(c.mu.byKey) >= maxTokenCredentials {
		c.mu.byKey = make(map[string]SCRAMCredential)
	}
	c.mu.byKey[key] = cred
	return cred, nil
}
