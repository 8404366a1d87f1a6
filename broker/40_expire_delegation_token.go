package broker

// ExpireDelegationToken (key 40), versions 1-2.
//
// Expires the delegation token of an HMAC, as Kafka's
// DelegationTokenControlManager: a negative ExpiryPeriodMillis removes
// it at once (the answer's expiry is now), another moves its expiry to
// that long from now, never past its maximum lifetime. Only its owner and
// its renewers may expire it (DELEGATION_TOKEN_OWNER_MISMATCH); an
// unknown HMAC is DELEGATION_TOKEN_NOT_FOUND, a lapsed token not removed
// at once DELEGATION_TOKEN_EXPIRED, and without
// delegation.token.secret.key the answer is
// DELEGATION_TOKEN_AUTH_DISABLED. A connection that may not use tokens
// (38_create_delegation_token.go) is DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
// with an expiry of -1, as Kafka's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleExpireDelegationToken(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ExpireDelegationTokenRequest)
	resp := req.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
	resp.ErrorCode, resp.ExpiryTimestamp = n.changeToken(ctx, rc, req.HMAC, req.ExpiryPeriodMillis, n.ctrl.ExpireDelegationToken)
	return resp, nil
}
