package broker

// CreateAcls (key 30), versions 1-3.
//
// Each creation is checked as Kafka checks it (auth.ACL.Validate:
// INVALID_REQUEST with Kafka's message, CIDR hosts included) and the
// valid ones are committed in one metadata record; an ACL equal to one
// the cluster has is answered with success and not added twice. The
// principal needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for
// every creation); without an authorizer every creation is answered
// SECURITY_DISABLED, as Kafka answers. A creation with an UNKNOWN element
// closes the connection, as Kafka fails to parse such a request.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleCreateACLs(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	acls := make([]auth.ACL, len(req.Creations))
	for i, c := range req.Creations {
		acls[i] = auth.ACL{
			ResourceType: c.ResourceType, ResourceName: c.ResourceName, PatternType: c.ResourcePatternType,
			Principal: c.Principal, Host: c.Host, Operation: c.Operation, Permission: c.PermissionType,
		}
		f := auth.Filter{ResourceType: c.ResourceType, PatternType: c.ResourcePatternType, Operation: c.Operation, Permission: c.PermissionType}
		if err := unknownACLElement(f); err != nil {
			return nil, err
		}
	}
	errs := make([]error, len(acls))
	all := n.aclChangeRefused(rc)
	var valid []metadata.ACL
	var at []int
	for i, a := range acls {
		if errs[i] = all; all == nil {
			errs[i] = a.Validate()
		}
		if errs[i] == nil {
			valid = append(valid, metadata.ACL(a))
			at = append(at, i)
		}
	}
	if len(valid) > 0 {
		if err := n.ctrl.CreateACLs(ctx, valid); err != nil {
			for _, i := range at {
				errs[i] = err
			}
		}
	}
	for _, err := range errs {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = errorCode(err), errorMessage(err)
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
