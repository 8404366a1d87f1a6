package broker

// DescribeDelegationToken (key 41), versions 1-3.
//
// The delegation tokens of this node's metadata image with their HMACs,
// as Kafka's KafkaApis filters them: those of the owners asked for
// (null: every owner; an owner matches the tokens it owns or may renew;
// an empty list: none), and of those only the tokens the principal owns
// or may renew, or may DESCRIBE as a DELEGATION_TOKEN resource, or whose
// owner's USER resource it may DESCRIBE_TOKENS. Tokens that lapsed are
// listed until the controller's sweep removes them, as Kafka's. A
// connection that may not use tokens (38_create_delegation_token.go) is
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; without
// delegation.token.secret.key the answer is
// DELEGATION_TOKEN_AUTH_DISABLED.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeDelegationToken(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeDelegationTokenRequest)
	resp := req.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	secret := n.settings().DelegationToken.SecretKey
	switch {
	case !n.tokenRequestsAllowed(rc):
		resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
		return resp, nil
	case secret == "":
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
		return resp, nil
	case req.Owners != nil && len(req.Owners) == 0:
		return resp, nil
	}
	var owners []string
	for _, o := range req.Owners {
		owners = append(owners, o.PrincipalType+":"+o.PrincipalName)
	}
	for _, tok := range n.ctrl.Image().SortedDelegationTokens() {
		if !n.tokenDescribable(rc, owners, tok) {
			continue
		}
		d := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
		d.PrincipalType, d.PrincipalName = splitPrincipal(tok.Owner)
		d.TokenRequesterPrincipalType, d.TokenRequesterPrincipalName = splitPrincipal(tok.Requester)
		d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp = tok.IssueMs, tok.ExpiryMs, tok.MaxMs
		d.TokenID, d.HMAC = tok.TokenID, auth.DelegationTokenHMAC(secret, tok.TokenID)
		for _, r := range tok.Renewers {
			dr := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
			dr.PrincipalType, dr.PrincipalName = splitPrincipal(r)
			d.Renewers = append(d.Renewers, dr)
		}
		resp.TokenDetails = append(resp.TokenDetails, d)
	}
	return resp, nil
}

// tokenDescribable is Kafka's DelegationTokenManager.filterToken: whether
// tok is among those of owners (nil: any) and rc's principal may see it.
func (n *Node) tokenDescribable(rc *wire.RequestContext, owners []string, tok metadata.DelegationToken) bool {
	if owners != nil && !slices.ContainsFunc(owners, tok.OwnerOrRenewer) {
		return false
	}
	if tok.OwnerOrRenewer(rc.Principal) {
		return true
	}
	return n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeDelegationToken, tok.TokenID) ||
		n.visible(rc, kmsg.ACLOperationDescribeTokens, kmsg.ACLResourceTypeUser, tok.Owner)
}
