package broker

// DeleteAcls (key 31), versions 1-3.
//
// The ACLs each filter matches (auth.Filter) are removed, all filters'
// in one metadata record, and listed in that filter's result; a filter
// Kafka calls unknown is answered INVALID_REQUEST. The principal needs
// ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for every filter);
// without an authorizer every filter is answered SECURITY_DISABLED, as
// Kafka answers. A filter with an UNKNOWN element closes the connection,
// as Kafka fails to parse such a request.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleDeleteACLs(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	filters := make([]auth.Filter, len(req.Filters))
	for i, rf := range req.Filters {
		filters[i] = auth.Filter{
			ResourceType: rf.ResourceType, ResourceName: rf.ResourceName, PatternType: rf.ResourcePatternType,
			Principal: rf.Principal, Host: rf.Host, Operation: rf.Operation, Permission: rf.PermissionType,
		}
		if err := unknownACLElement(filters[i]); err != nil {
			return nil, err
		}
	}
	errs := make([]error, len(filters))
	all := n.aclChangeRefused(rc)
	var matchers []func(metadata.ACL) bool
	var at []int
	for i, f := range filters {
		if errs[i] = all; all == nil {
			errs[i] = f.Validate()
		}
		if errs[i] == nil {
			matchers = append(matchers, func(a metadata.ACL) bool { return f.Matches(auth.ACL(a)) })
			at = append(at, i)
		}
	}
	matched := make([][]metadata.ACL, len(filters))
	if len(matchers) > 0 {
		got, err := n.ctrl.DeleteACLs(ctx, matchers)
		for j, i := range at {
			if errs[i] = err; err == nil {
				matched[i] = got[j]
			}
		}
	}
	for i, err := range errs {
		r := kmsg.NewDeleteACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = errorCode(err), errorMessage(err)
		for _, a := range matched[i] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = a.ResourceType, a.ResourceName, a.PatternType
			m.Principal, m.Host, m.Operation, m.PermissionType = a.Principal, a.Host, a.Operation, a.Permission
			r.MatchingACLs = append(r.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
