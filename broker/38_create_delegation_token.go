package broker

// CreateDelegationToken (key 38), versions 1-3.
//
// Creates a delegation token (KIP-48) for the request's principal, or
// from v3 for another owner (KIP-373), as Kafka's KafkaApis and
// DelegationTokenControlManager: a request over a PLAINTEXT connection,
// an SSL one without a client certificate, or one authenticated with a
// token is DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; a token for another
// owner needs CREATE_TOKENS on the owner's USER resource
// (DELEGATION_TOKEN_AUTHORIZATION_FAILED otherwise); a renewer that is
// not a User is INVALID_PRINCIPAL_TYPE; without
// delegation.token.secret.key the answer is
// DELEGATION_TOKEN_AUTH_DISABLED. The token expires after
// delegation.token.expiry.time.ms and lives at most MaxLifetimeMs and
// delegation.token.max.lifetime.ms. The answer names the owner and the
// requester whatever the outcome; its timestamps are -1 for the first
// three refusals, 0 for DELEGATION_TOKEN_AUTH_DISABLED, as Kafka's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/wire"
)

func handleCreateDelegationToken(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateDelegationTokenRequest)
	resp := req.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	requester := rc.Principal
	owner := requester
	if req.OwnerPrincipalName != nil && *req.OwnerPrincipalName != "" {
		typ := "User"
		if req.OwnerPrincipalType != nil {
			typ = *req.OwnerPrincipalType
		}
		owner = typ + ":" + *req.OwnerPrincipalName
	}
	resp.PrincipalType, resp.PrincipalName = splitPrincipal(owner)
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = splitPrincipal(requester)
	renewers := make([]string, 0, len(req.Renewers))
	userRenewers := true
	for _, r := range req.Renewers {
		renewers = append(renewers, r.PrincipalType+":"+r.PrincipalName)
		userRenewers = userRenewers && r.PrincipalType == "User"
	}
	var refused *kerr.Error
	switch {
	case !n.tokenRequestsAllowed(rc):
		refused = kerr.DelegationTokenRequestNotAllowed
	case owner != requester && !n.authorize(rc, kmsg.ACLOperationCreateTokens, kmsg.ACLResourceTypeUser, owner):
		refused = kerr.DelegationTokenAuthorizationFailed
	case !userRenewers:
		refused = kerr.InvalidPrincipalType
	}
	if refused != nil {
		// Kafka's broker answers its refusals with timestamps of -1,
		// its controller's (DELEGATION_TOKEN_AUTH_DISABLED) with 0.
		resp.ErrorCode = refused.Code
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = -1, -1, -1
		return resp, nil
	}
	tok, hmac, err := n.ctrl.CreateDelegationToken(ctx, controller.NewDelegationToken{
		Owner: owner, Requester: requester, Renewers: renewers, MaxLifetimeMs: req.MaxLifetimeMillis,
	}, n.clock.Now())
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp, nil
	}
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = tok.IssueMs, tok.ExpiryMs, tok.MaxMs
	resp.TokenID, resp.HMAC = tok.TokenID, hmac
	return resp, nil
}
