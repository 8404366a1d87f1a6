package broker

// SaslAuthenticate (key 36), versions 0-2.
//
// Carries the tokens of the exchange a SaslHandshake began (broker/auth's
// Mechanism and Exchange): each token is answered with the mechanism's,
// until it is done. Then the connection's principal is who the exchange
// authenticated, for every later request, and v1+ answer the session's
// lifetime (KIP-368): connections.max.reauth.ms (the listener's own
// first), shortened to the credential's expiry; the connection is closed
// at its first request after that unless it authenticated again. A
// failed exchange is answered SASL_AUTHENTICATION_FAILED with the
// exchange's message, after connection.failed.authentication.delay.ms,
// and the connection closed, as Kafka does; so is a re-authentication
// as another principal. On a listener without SASL, or after the
// authentication finished, the answer is ILLEGAL_SASL_STATE, as Kafka's.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
)

func handleSASLAuthenticate(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (wire.Reply, error) {
	req := kreq.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	sess, ok := rc.SASLSession().(*saslSession)
	if !ok {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		msg := "SaslAuthenticate request received after successful authentication"
		resp.ErrorMessage = &msg
		return wire.Reply{Response: resp}, nil
	}
	answer, done, err := sess.exchange.Next(req.SASLAuthBytes)
	var failure, reason string
	switch {
	case err != nil:
		failure, reason = err.Error(), auth.FailureReason(err)
	case done && sess.reauth && sess.exchange.Principal() != rc.Principal:
		// Kafka's words.
		failure = fmt.Sprintf("Cannot change principals during re-authentication from %s: %s", rc.Principal, sess.exchange.Principal())
	}
	if failure != "" {
		n.logger.Info("SASL authentication failed", "listener", rc.Listener, "remote", rc.Remote, "mechanism", sess.mechanism, "err", failure, "reason", reason)
		n.delayFailedAuthentication(ctx)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		resp.ErrorMessage = &failure
		return wire.Reply{Response: resp, Close: true}, nil
	}
	resp.SASLAuthBytes = answer
	if !done {
		return wire.Reply{Response: resp}, nil
	}
	lifetime := n.sessionLifetime(rc.Listener, sess.exchange.Expiry(), time.Now())
	var expiry time.Time
	if lifetime > 0 {
		expiry = time.Now().Add(lifetime)
	}
	sess.reauthCapable = req.Version >= 1
	rc.SASLDone(sess.exchange.Principal(), expiry)
	resp.SessionLifetimeMillis = lifetime.Milliseconds()
	return wire.Reply{Response: resp}, nil
}

// sessionLifetime is how long an authentication done at now lasts, as
// Kafka's SaslServerAuthenticator reckons it: connections.max.reauth.ms
// (0: no limit) and the credential's expiry (zero: none), the sooner of
// the two; 0 when neither limits it. A credential already expired gets a
// lifetime of a millisecond: the next request closes the connection.
func (n *Node) sessionLifetime(listener string, credentialExpiry, now time.Time) time.Duration {
	maxReauth := n.settings().ConnectionsMaxReauth
	if v, ok := n.static.ListenerValue(listener, "connections.max.reauth.ms"); ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			maxReauth = time.Duration(ms) * time.Millisecond
		}
	}
	if credentialExpiry.IsZero() {
		return maxReauth
	}
	left := max(credentialExpiry.Sub(now), time.Millisecond)
	if maxReauth > 0 {
		return min(left, maxReauth)
	}
	return left
}
