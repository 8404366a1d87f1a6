package broker

// SaslHandshake (key 17), versions 0-1.
//
// On a SASL listener (SASL_PLAINTEXT, SASL_SSL), a client names the
// mechanism it authenticates with: the answer lists the listener's
// mechanisms (sasl.enabled.mechanisms, those klog implements, in that
// order), and SaslAuthenticate then carries the exchange (v1); after v0
// the mechanism's tokens follow as bare frames (broker/wire's
// security.go). A mechanism the listener does not offer is answered
// UNSUPPORTED_SASL_MECHANISM and the connection closed, after
// connection.failed.authentication.delay.ms, as Kafka does. On a
// connection that authenticated with SaslAuthenticate v1+, a handshake
// begins a re-authentication (KIP-368), also once its session lapsed; one
// for another mechanism than the session's is answered and the
// connection closed, as Kafka does. A handshake while an exchange is under
// way is answered ILLEGAL_SASL_STATE and closes the connection; one on a
// listener without SASL, or from a client that cannot re-authenticate, is
// answered ILLEGAL_SASL_STATE.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
)

// saslSession is one authentication of a connection: the mechanism its
// handshake chose and the exchange under way.
type saslSession struct {
	mechanism string
	exchange  auth.Exchange
	// reauth is set when the connection had authenticated before: the
	// principal must stay the same.
	reauth bool
	// reauthCapable is set once a SaslAuthenticate v1+ completed the
	// exchange: the client may re-authenticate (KIP-368).
	reauthCapable bool
}

func handleSASLHandshake(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (wire.Reply, error) {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	if !rc.SASL() || rc.SASLSession() != nil {
		// Kafka's KafkaApis answer on a listener without SASL, and its
		// authenticator's to a second handshake, which then closes.
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return wire.Reply{Response: resp, Close: rc.SASL()}, nil
	}
	mechs := n.saslMechanisms(rc.Listener)
	for _, m := range mechs {
		resp.SupportedMechanisms = append(resp.SupportedMechanisms, m.Name())
	}
	var chosen auth.Mechanism
	for _, m := range mechs {
		if m.Name() == req.Mechanism {
			chosen = m
		}
	}
	if chosen == nil {
		n.logger.Info("SASL handshake for a mechanism the listener does not offer", "listener", rc.Listener, "remote", rc.Remote, "mechanism", req.Mechanism)
		n.recordAuthFailure(rc, req.Mechanism, "", "Unsupported SASL mechanism "+req.Mechanism, "the listener does not offer the mechanism")
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		n.delayFailedAuthentication(ctx)
		return wire.Reply{Response: resp, Close: true}, nil
	}
	reauth := rc.SASLAuthenticated()
	if reauth {
		prev, _ := rc.SASLCompleted().(*saslSession)
		switch {
		case prev == nil || !prev.reauthCapable || req.Version == 0:
			// Kafka's KafkaApis answer: a client that cannot
			// re-authenticate is not re-authenticating.
			resp.ErrorCode = kerr.IllegalSaslState.Code
			resp.SupportedMechanisms = nil
			return wire.Reply{Response: resp}, nil
		case prev.mechanism != chosen.Name():
			// Kafka answers the handshake, then closes: a session is
			// re-authenticated with the mechanism it began with.
			n.logger.Info("re-authentication with another SASL mechanism", "listener", rc.Listener, "remote", rc.Remote, "mechanism", chosen.Name(), "was", prev.mechanism)
			n.delayFailedAuthentication(ctx)
			return wire.Reply{Response: resp, Close: true}, nil
		}
	}
	rc.BeginSASL(&saslSession{mechanism: chosen.Name(), exchange: chosen.Start(), reauth: reauth}, req.Version == 0)
	return wire.Reply{Response: resp}, nil
}

// delayFailedAuthentication waits connection.failed.authentication.delay.ms
// before a failed authentication is answered and its connection closed,
// as Kafka delays them: a client guessing passwords gets one answer per
// delay on each connection. The wait holds nothing beyond the
// connection's own goroutine.
func (n *Node) delayFailedAuthentication(ctx context.Context) {
	d := n.settings().FailedAuthenticationDelay
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
