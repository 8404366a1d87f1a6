package broker

// DescribeAcls (key 29), versions 1-3.
//
// The ACLs a filter matches (auth.Filter: ANY, MATCH, nulls), grouped by
// resource pattern. The principal needs DESCRIBE on the cluster
// (CLUSTER_AUTHORIZATION_FAILED); without an authorizer
// (authorizer.class.name) the answer is SECURITY_DISABLED, as Kafka
// answers. A filter with an UNKNOWN element closes the connection, as
// Kafka fails to parse such a request.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// errUnknownACLElement closes the connection of an ACL request with an
// UNKNOWN resource type, pattern type, operation or permission.
var errUnknownACLElement = errors.New("ACL request with an UNKNOWN element")

// errNoAuthorizer answers the ACL requests of a node without an
// authorizer: SECURITY_DISABLED.
var errNoAuthorizer = errmsg.With(kerr.SecurityDisabled, "No Authorizer is configured.")

func handleDescribeACLs(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	f := auth.Filter{
		ResourceType: req.ResourceType, ResourceName: req.ResourceName, PatternType: req.ResourcePatternType,
		Principal: req.Principal, Host: req.Host, Operation: req.Operation, Permission: req.PermissionType,
	}
	if err := unknownACLElement(f); err != nil {
		return nil, err
	}
	var err error
	switch {
	case !n.authorizeCluster(rc, kmsg.ACLOperationDescribe):
		err = kerr.ClusterAuthorizationFailed
	case !n.settings().Authorizer.Enabled:
		err = errmsg.With(kerr.SecurityDisabled, "No Authorizer is configured on the broker")
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), errorMessage(err)
		return resp, nil
	}
	resp.Resources = describeACLResources(n.ctrl.Image().ACLs, f)
	return resp, nil
}

// aclChangeRefused is why CreateAcls and DeleteAcls refuse every ACL of
// a request: CLUSTER_AUTHORIZATION_FAILED without ALTER on the cluster,
// SECURITY_DISABLED without an authorizer; nil when they may go on.
func (n *Node) aclChangeRefused(rc *wire.RequestContext) error {
	switch {
	case !n.authorizeCluster(rc, kmsg.ACLOperationAlter):
		return kerr.ClusterAuthorizationFailed
	case !n.settings().Authorizer.Enabled:
		return errNoAuthorizer
	}
	return nil
}

// unknownACLElement refuses a filter with an UNKNOWN element.
func unknownACLElement(f auth.Filter) error {
	if f.ResourceType == kmsg.ACLResourceTypeUnknown || f.PatternType == kmsg.ACLResourcePatternTypeUnknown ||
		f.Operation == kmsg.ACLOperationUnknown || f.Permission == kmsg.ACLPermissionTypeUnknown {
		return fmt.Errorf("%w: %+v", errUnknownACLElement, f)
	}
	return nil
}

// describeACLResources returns the ACLs f matches, grouped by resource
// pattern in the order of their first ACL.
func describeACLResources(acls *metadata.ACLs, f auth.Filter) []kmsg.DescribeACLsResponseResource {
	type pattern struct {
		rt   kmsg.ACLResourceType
		name string
		pt   kmsg.ACLResourcePatternType
	}
	var out []kmsg.DescribeACLsResponseResource
	at := map[pattern]int{}
	for _, e := range acls.Sorted() {
		a := auth.ACL(e.ACL)
		if !f.Matches(a) {
			continue
		}
		p := pattern{a.ResourceType, a.ResourceName, a.PatternType}
		i, ok := at[p]
		if !ok {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = p.rt, p.name, p.pt
			i = len(out)
			at[p] = i
			out = append(out, r)
		}
		acl := kmsg.NewDescribeACLsResponseResourceACL()
		acl.Principal, acl.Host, acl.Operation, acl.PermissionType = a.Principal, a.Host, a.Operation, a.Permission
		out[i].ACLs = append(out[i].ACLs, acl)
	}
	return out
}
