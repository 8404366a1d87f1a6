package broker

import (
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// The handlers ask authorize whether a request's principal may do
// Kafka's operation on Kafka's resource (the operations each API checks
// are Kafka's KafkaApis and AuthorizerIntegrationTest's). The authorizer
// is built from the image's ACLs and the broker's authorizer configs and
// built again only when one of them changed. A denial goes to the event
// ring (recordDenial).
//
// Requests of other klog nodes are authorized as any other, by the
// principal they authenticated as on the inter-broker listener, as Kafka
// does: replica fetches, transaction markers and the coordinators'
// requests need CLUSTER_ACTION, so that principal is a super user or
// holds it (User:ANONYMOUS on a PLAINTEXT inter-broker listener). A
// client id is never trusted: any client can claim a node's.

// authzState is the authorizer of one set of ACLs and one settings value.
type authzState struct {
	acls     *metadata.ACLs
	settings *config.Settings
	a        *auth.Authorizer
}

// authorizer returns the authorizer of the current ACLs and configs.
func (n *Node) authorizer() *auth.Authorizer {
	acls, s := n.ctrl.Image().ACLs, n.settings()
	if st := n.authz.Load(); st != nil && st.acls == acls && st.settings == s {
		return st.a
	}
	var list []auth.ACL
	if s.Authorizer.Enabled {
		entries := acls.Sorted()
		list = make([]auth.ACL, len(entries))
		for i, e := range entries {
			list[i] = auth.ACL(e.ACL)
		}
	}
	a := auth.New(auth.Config{
		Enabled: s.Authorizer.Enabled, SuperUsers: s.Authorizer.SuperUsers, AllowEveryoneIfNoACL: s.Authorizer.AllowEveryoneIfNoACL,
	}, list)
	n.authz.Store(&authzState{acls: acls, settings: s, a: a})
	return a
}

// principal is who rc's request is from, and the host it came from.
func (n *Node) principal(rc *wire.RequestContext) (principal, host string) {
	host, _, err := net.SplitHostPort(rc.Remote)
	if err != nil {
		host = rc.Remote
	}
	return rc.Principal, host
}

// internal reports whether rc is a request authorization does not apply
// to: one made up inside the node, without a connection's context.
func internal(rc *wire.RequestContext) bool {
	return rc == nil
}

// authorize reports whether rc's principal may do op on the resource of
// type rt named name. A denial is recorded in the event ring.
func (n *Node) authorize(rc *wire.RequestContext, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	d := n.decide(rc, op, rt, name)
	if !d.Allowed {
		n.recordDenial(rc, op, rt, name, d)
	}
	return d.Allowed
}

// visible reports whether rc's principal may do op on the resource,
// recording no denial: for what a request filters (the topics of an
// all-topics Metadata, the groups ListGroups lists), where Kafka logs no
// denial either.
func (n *Node) visible(rc *wire.RequestContext, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	return n.decide(rc, op, rt, name).Allowed
}

// decide is the authorizer's decision for rc.
func (n *Node) decide(rc *wire.RequestContext, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) auth.Decision {
	a := n.authorizer()
	if !a.Enabled() || internal(rc) {
		return auth.Decision{Allowed: true, Rule: auth.RuleNoAuthorizer}
	}
	principal, host := n.principal(rc)
	return a.Authorize(principal, host, op, rt, name)
}

// ExplainACL is how the node's authorizer decides whether principal,
// connected from host, may do op on the resource of type rt named name,
// for the admin API (klog acl explain); enabled says whether an
// authorizer is configured. It records nothing.
func (n *Node) ExplainACL(principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) (enabled bool, d auth.Decision) {
	a := n.authorizer()
	return a.Enabled(), a.Authorize(principal, host, op, rt, name)
}

// authorizeCluster reports whether rc's principal may do op on the
// cluster.
func (n *Node) authorizeCluster(rc *wire.RequestContext, op kmsg.ACLOperation) bool {
	return n.authorize(rc, op, kmsg.ACLResourceTypeCluster, auth.ClusterName)
}

// authorizeAny reports whether rc's principal may do op on some
// resource of type rt (Kafka's authorizeByResourceType).
func (n *Node) authorizeAny(rc *wire.RequestContext, op kmsg.ACLOperation, rt kmsg.ACLResourceType) bool {
	a := n.authorizer()
	if !a.Enabled() || internal(rc) {
		return true
	}
	principal, host := n.principal(rc)
	d := a.AuthorizeAny(principal, host, op, rt)
	if !d.Allowed {
		n.recordDenial(rc, op, rt, "", d)
	}
	return d.Allowed
}

// supportedOperations are the operations Kafka lists in the authorized
// operations of a resource of each type (AclEntry.supportedOperations).
var supportedOperations = map[kmsg.ACLResourceType][]kmsg.ACLOperation{
	kmsg.ACLResourceTypeTopic: {kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeGroup: {kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeCluster: {kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe},
	kmsg.ACLResourceTypeTransactionalId: {kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite},
}

// authorizedOperations is the bitfield of the operations on a resource
// rc's principal may do (bit 1<<op), as Metadata, DescribeGroups and
// DescribeCluster give it when asked.
func (n *Node) authorizedOperations(rc *wire.RequestContext, rt kmsg.ACLResourceType, name string) int32 {
	var ops int32
	for _, op := range supportedOperations[rt] {
		if n.visible(rc, op, rt, name) {
			ops |= 1 << op
		}
	}
	return ops
}

// recordDenial records a denial in the event ring (security_events.go:
// repeats coalesced, rate-limited): who, from where, the API, the
// resource (a request names resources literally) and operation, and the
// rule that decided, with the ACL when one did.
func (n *Node) recordDenial(rc *wire.RequestContext, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string, d auth.Decision) {
	principal, host := n.principal(rc)
	detail := map[string]any{
		"principal": principal, "client_id": rc.ClientID, "address": rc.Remote, "api": kmsg.NameForKey(rc.Header.Key),
		"operation": op.String(), "resource_type": rt.String(), "resource_name": name,
		"pattern_type": kmsg.ACLResourcePatternTypeLiteral.String(),
		"rule":         d.Rule.String(), "reason": d.Reason(),
	}
	if d.Rule == auth.RuleACL {
		detail["acl"] = d.ACL.String()
	}
	e := events.Event{Kind: events.AuthorizationDenied, Partition: -1, Detail: detail}
	switch rt {
	case kmsg.ACLResourceTypeTopic:
		e.Topic = name
	case kmsg.ACLResourceTypeGroup:
		e.Group = name
	}
	n.recordSecurity(securityKey{
		kind: events.AuthorizationDenied, principal: events.Clip(principal), host: host, clientID: events.Clip(rc.ClientID),
		api: rc.Header.Key, op: op, rt: rt, name: events.Clip(name),
	}, e)
}

// splitAuthorized answers a request's items (topics, groups) that denied
// refuses (its error code, 0 to keep an item) with refuse, and the others
// with call, which answers the items it is given in their order, one
// answer each. The answers come back in the request's order. call is not
// made when every item is refused, and is made with all of them (none,
// too) when none is.
func splitAuthorized[T, R any](topics []T, denied func(*T) int16, call func([]T) []R, refuse func(*T, int16) R) []R {
	codes := make([]int16, len(topics))
	var kept []T
	for i := range topics {
		if codes[i] = denied(&topics[i]); codes[i] == 0 {
			kept = append(kept, topics[i])
		}
	}
	if len(kept) == len(topics) {
		return call(topics)
	}
	var got []R
	if len(kept) > 0 {
		got = call(kept)
	}
	out := make([]R, 0, len(topics))
	for i := range topics {
		switch {
		case codes[i] != 0:
			out = append(out, refuse(&topics[i], codes[i]))
		case len(got) > 0:
			out = append(out, got[0])
			got = got[1:]
		}
	}
	return out
}

// topicNameOf is the name of a request's topic: name, or the topic of id
// for requests that name topics by id; "" for an id no topic has.
func (n *Node) topicNameOf(name string, id [16]byte) string {
	if name != "" || id == ([16]byte{}) {
		return name
	}
	if t, ok := n.ctrl.Image().TopicByID(id); ok {
		return t.Name
	}
	return ""
}

// topicDenied returns the error code of a topic rc's principal may not do
// op on (TOPIC_AUTHORIZATION_FAILED), or of every topic when groupCode is
// set (the group's refusal); 0 to keep it. A topic id no topic has is
// kept, for the handler to answer unknown.
func (n *Node) topicDenied(rc *wire.RequestContext, groupCode int16, op kmsg.ACLOperation, name string, id [16]byte) int16 {
	if groupCode != 0 {
		return groupCode
	}
	if name = n.topicNameOf(name, id); name != "" && !n.authorize(rc, op, kmsg.ACLResourceTypeTopic, name) {
		return kerr.TopicAuthorizationFailed.Code
	}
	return 0
}

// groupDenied returns GROUP_AUTHORIZATION_FAILED's code unless rc's
// principal may do op on the group, 0 when it may.
func (n *Node) groupDenied(rc *wire.RequestContext, op kmsg.ACLOperation, group string) int16 {
	if n.authorize(rc, op, kmsg.ACLResourceTypeGroup, group) {
		return 0
	}
	return kerr.GroupAuthorizationFailed.Code
}

// topicsAllowed returns whether rc's principal may do op on a topic,
// each topic asked of the authorizer once per request.
func (n *Node) topicsAllowed(rc *wire.RequestContext, op kmsg.ACLOperation) func(name string) bool {
	seen := map[string]bool{}
	return func(name string) bool {
		ok, known := seen[name]
		if !known {
			ok = n.authorize(rc, op, kmsg.ACLResourceTypeTopic, name)
			seen[name] = ok
		}
		return ok
	}
}

// configDenied returns the refusal of a config resource rc's principal
// may not do op (DESCRIBE_CONFIGS, ALTER_CONFIGS) on: a topic's
// (TOPIC_AUTHORIZATION_FAILED), a broker's or a client metrics
// resource's, which are the cluster's (CLUSTER_AUTHORIZATION_FAILED), or a
// group's
// (GROUP_AUTHORIZATION_FAILED); nil when it may.
func (n *Node) configDenied(rc *wire.RequestContext, op kmsg.ACLOperation, rt kmsg.ConfigResourceType, name string) error {
	switch rt {
	case kmsg.ConfigResourceTypeTopic:
		if !n.authorize(rc, op, kmsg.ACLResourceTypeTopic, name) {
			return kerr.TopicAuthorizationFailed
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics:
		if !n.authorizeCluster(rc, op) {
			return kerr.ClusterAuthorizationFailed
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !n.authorize(rc, op, kmsg.ACLResourceTypeGroup, name) {
			return kerr.GroupAuthorizationFailed
		}
	}
	return nil
}
