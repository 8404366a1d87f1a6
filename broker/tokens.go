package broker

import (
	"context"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/wire"
)

// Delegation tokens (KIP-48, keys 38-41): the controller keeps them
// (controller/tokens.go), the SCRAM mechanisms authenticate them
// (credentials.go), and these are what the handlers share.

// tokenAuthenticated reports whether rc's connection authenticated with
// a delegation token (KIP-48's tokenAuthenticated principal).
func tokenAuthenticated(rc *wire.RequestContext) bool {
	sess, ok := rc.SASLCompleted().(*saslSession)
	if !ok {
		return false
	}
	x, ok := sess.exchange.(interface{ TokenAuthenticated() bool })
	return ok && x.TokenAuthenticated()
}

// tokenRequestsAllowed reports whether rc's connection may create, renew,
// expire or describe delegation tokens, as Kafka's KafkaApis decides: not
// one authenticated with a token, nor a PLAINTEXT one, nor an SSL one
// without a client certificate (User:ANONYMOUS).
func (n *Node) tokenRequestsAllowed(rc *wire.RequestContext) bool {
	if rc == nil {
		return false
	}
	switch n.listenerProtocol(rc.Listener) {
	case "PLAINTEXT", "":
		return false
	case "SSL":
		if rc.Principal == wire.AnonymousPrincipal {
			return false
		}
	}
	return !tokenAuthenticated(rc)
}

// changeToken renews or expires (change, the controller's
// RenewDelegationToken or ExpireDelegationToken) the token of hmac by
// periodMs for rc's principal, and returns the answer's error code and
// expiry: -1 for a connection that may not use tokens, as Kafka answers.
func (n *Node) changeToken(ctx context.Context, rc *wire.RequestContext, hmac []byte, periodMs int64,
	change func(context.Context, []byte, string, int64, time.Time) (int64, error)) (int16, int64) {
	if !n.tokenRequestsAllowed(rc) {
		return kerr.DelegationTokenRequestNotAllowed.Code, -1
	}
	expiry, err := change(ctx, hmac, rc.Principal, periodMs, n.clock.Now())
	return errorCode(err), expiry
}

// splitPrincipal splits "User:alice" into its type and name.
func splitPrincipal(p string) (typ, name string) {
	typ, name, _ = strings.Cut(p, ":")
	return typ, name
}

// sweepDelegationTokens has the active controller remove the delegation
// tokens that lapsed by the node's clock; elsewhere it does nothing.
func (n *Node) sweepDelegationTokens(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := n.ctrl.SweepDelegationTokens(ctx, n.clock.Now()); err != nil && ctx.Err() == nil {
		n.logger.Warn("removing lapsed delegation tokens failed", "err", err)
	}
}
