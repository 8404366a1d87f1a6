package nodeapi

import (
	"context"
	"net/http"
	"net/url"
)

// PathACLExplain is GET /v1/acl/explain?principal=P&operation=OP
// &resource_type=TYPE&name=NAME[&host=H]: how the node's authorizer
// decides that request, with its ACLs and configs (ACLExplanation).
// Operation and resource type are Kafka's names (WRITE, TOPIC); host
// defaults to 127.0.0.1; 400 for a missing or unknown one.
const PathACLExplain = "/v1/acl/explain"

// ACLQuery is what GET /v1/acl/explain asks about.
type ACLQuery struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	ResourceType string `json:"resource_type"`
	Name         string `json:"name"`
}

// ACLExplanation is how the node's authorizer decides an ACLQuery.
type ACLExplanation struct {
	NodeID int32    `json:"node_id"`
	Query  ACLQuery `json:"query"`
	// Authorizer says whether an authorizer is configured
	// (authorizer.class.name); without one everything is allowed.
	Authorizer bool `json:"authorizer"`
	Allowed    bool `json:"allowed"`
	// Rule names what decided: NoAuthorizer, SuperUser, MatchingAcl,
	// NoAcl (allow.everyone.if.no.acl.found decided) or NoMatchingAcl
	// (ACLs name the resource, none applies: denied).
	Rule string `json:"rule"`
	// ACL is the ACL that decided, with Rule MatchingAcl.
	ACL *ACL `json:"acl,omitempty"`
	// Reason says it in a sentence.
	Reason string `json:"reason"`
}

// ACL is one ACL binding, in Kafka's names.
type ACL struct {
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// ExplainACL is GET /v1/acl/explain.
func (c *Client) ExplainACL(ctx context.Context, q ACLQuery) (ACLExplanation, error) {
	var out ACLExplanation
	v := url.Values{"principal": {q.Principal}, "operation": {q.Operation}, "resource_type": {q.ResourceType}, "name": {q.Name}}
	if q.Host != "" {
		v.Set("host", q.Host)
	}
	return out, c.call(ctx, http.MethodGet, PathACLExplain, v, &out)
}
