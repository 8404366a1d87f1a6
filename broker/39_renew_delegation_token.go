package broker

// RenewDelegationToken (key 39), versions 1-2.
//
// Renews the delegation token of an HMAC, as Kafka's
// DelegationTokenControlManager: by RenewPeriodMillis, at most
// delegation.token.expiry.time.ms (which 0 or less asks for), never past
// the token's maximum lifetime; the answer is its new expiry. Only its
// owner and its renewers may renew it (DELEGATION_TOKEN_OWNER_MISMATCH);
// an unknown HMAC is DELEGATION_TOKEN_NOT_FOUND, a lapsed token
// DELEGATION_TOKEN_EXPIRED, and without delegation.token.secret.key the
// answer is DELEGATION_TOKEN_AUTH_DISABLED. A connection that may not
// use tokens (38_create_delegation_token.go) is
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED with an expiry of -1, as Kafka's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleRenewDelegationToken(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.RenewDelegationTokenRequest)
	resp := req.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
	resp.ErrorCode, resp.ExpiryTimestamp = n.changeToken(ctx, rc, req.HMAC, req.RenewTimeMillis, n.ctrl.RenewDelegationToken)
	return resp, nil
}
