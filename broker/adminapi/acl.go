package adminapi

import (
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/nodeapi"
)

// explainACL answers GET /v1/acl/explain from the node's own authorizer,
// the one its requests are decided by.
func (h *handler) explainACL(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	q := nodeapi.ACLQuery{Principal: qv.Get("principal"), Host: qv.Get("host"), Operation: qv.Get("operation"),
		ResourceType: qv.Get("resource_type"), Name: qv.Get("name")}
	if q.Host == "" {
		q.Host = "127.0.0.1"
	}
	op, err := kmsg.ParseACLOperation(q.Operation)
	if err != nil || op <= kmsg.ACLOperationAll {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("operation %q: want one of READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS", q.Operation))
		return
	}
	rt, err := kmsg.ParseACLResourceType(q.ResourceType)
	if err != nil || rt <= kmsg.ACLResourceTypeAny {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("resource_type %q: want one of TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER", q.ResourceType))
		return
	}
	if q.Principal == "" || q.Name == "" {
		writeError(w, http.StatusBadRequest, "principal and name are required")
		return
	}
	q.Operation, q.ResourceType = op.String(), rt.String()
	enabled, d := h.node.ExplainACL(q.Principal, q.Host, op, rt, q.Name)
	out := nodeapi.ACLExplanation{NodeID: h.node.ID(), Query: q, Authorizer: enabled, Allowed: d.Allowed, Rule: d.Rule.String(), Reason: d.Reason()}
	if d.Rule == auth.RuleACL {
		a := d.ACL
		out.ACL = &nodeapi.ACL{ResourceType: a.ResourceType.String(), ResourceName: a.ResourceName, PatternType: a.PatternType.String(),
			Principal: a.Principal, Host: a.Host, Operation: a.Operation.String(), Permission: a.Permission.String()}
	}
	writeJSON(w, out)
}
