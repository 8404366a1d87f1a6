package auth

import (
	"errors"
	"time"
)

// ErrAuthenticationFailed is what a failed exchange wraps: the client is
// answered SASL_AUTHENTICATION_FAILED with the error's text and the
// connection is closed, as Kafka does.
var ErrAuthenticationFailed = errors.New("authentication failed")

// Mechanism is one SASL mechanism a listener may enable.
type Mechanism interface {
	// Name is the mechanism's name as SaslHandshake lists it: "PLAIN",
	// "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER".
	Name() string
	// Start begins one exchange of a connection with the mechanism.
	Start() Exchange
}

// Exchange is one client's authentication with a mechanism: the tokens
// the client sends in turn, each answered. An Exchange is used by one
// connection at a time and keeps at most what its mechanism's steps need,
// so a flood of attempts holds nothing beyond the connections it uses.
type Exchange interface {
	// Next takes the client's next token and returns the token to answer
	// with. done reports that the client authenticated: Principal then
	// names it. An error is a failed authentication and wraps
	// ErrAuthenticationFailed; its text is what the client is told.
	Next(token []byte) (answer []byte, done bool, err error)
	// Principal is who the client authenticated as ("User:alice"), once
	// Next reported done.
	Principal() string
	// Expiry is when the credential the client authenticated with lapses
	// (a delegation token's, an OAuth token's), zero when it does not.
	Expiry() time.Time
}
