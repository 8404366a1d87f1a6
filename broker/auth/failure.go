package auth

import "errors"

// failure is a failed authentication: msg is what the client is told,
// Kafka's words; reason is why, for the node's log and events only (it may
// say that a user does not exist, which the client must not learn).
type failure struct {
	msg    string
	reason string
	// user is the user the client claimed, when it named one.
	user string
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return ErrAuthenticationFailed }

// FailureReason is why an exchange failed, for the node's log and events:
// "unknown user", "wrong proof"... It is never sent to the client; the
// error's text is.
func FailureReason(err error) string {
	var f *failure
	if errors.As(err, &f) {
		return f.reason
	}
	return ""
}

// FailureUser is the user a failed exchange's client claimed to be, ""
// when it named none: for the node's log and events only.
func FailureUser(err error) string {
	var f *failure
	if errors.As(err, &f) {
		return f.user
	}
	return ""
}

// claimed sets the user a failure's client claimed to be; other errors
// are returned as they are.
func claimed(err error, user string) error {
	var f *failure
	if user != "" && errors.As(err, &f) {
		f.user = user
	}
	return err
}

// invalidCredentials is Kafka's answer to a failed exchange whose cause the
// client must not learn (SaslServerAuthenticator's message for a
// SaslException): a wrong password, a wrong proof and an unknown user all
// read the same.
func invalidCredentials(mechanism, reason string) error {
	return &failure{
		msg:    "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mechanism,
		reason: reason,
	}
}

// refused is a failure whose message Kafka sends as it is (a
// SaslAuthenticationException's).
func refused(msg, reason string) error { return &failure{msg: msg, reason: reason} }
