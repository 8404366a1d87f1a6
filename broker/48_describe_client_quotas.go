package broker

// DescribeClientQuotas (key 48), versions 0-1.
//
// The client quotas in the metadata image that match the request's
// filter, as Kafka's ClientQuotasImage.describe matches them: each
// component names an entity type (user, client-id, ip) once, with
// MATCH_TYPE_EXACT a name, MATCH_TYPE_DEFAULT the type's default,
// MATCH_TYPE_SPECIFIED any name or the default; an entity matches when it
// has every component's type as it says, and, when strict, no other type.
// A filter Kafka refuses gets its error for the whole request
// (INVALID_REQUEST, or UNSUPPORTED_VERSION for an unknown entity type)
// with Kafka's message. The principal needs DESCRIBE_CONFIGS on the
// cluster (CLUSTER_AUTHORIZATION_FAILED otherwise, as Kafka answers).

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// Entity types of the client quota APIs.
const (
	quotaTypeUser     = "user"
	quotaTypeClientID = "client-id"
	quotaTypeIP       = "ip"
)

func handleDescribeClientQuotas(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationDescribeConfigs) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, errorMessage(kerr.ClusterAuthorizationFailed)
		return resp, nil
	}
	filter, err := parseQuotaFilter(req)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), errorMessage(err)
		return resp, nil
	}
	// Entries is nullable: null is for an error, and Kafka's tools read
	// its length (kafka-configs --describe --entity-type users fails on a
	// null). No match is an empty array.
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	img := n.ctrl.Image()
	for _, e := range img.SortedQuotaEntities() {
		if !filter.matches(e, req.Strict) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, part := range quotaEntityParts(e) {
			ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ent.Type, ent.Name = part.kind, part.name
			entry.Entity = append(entry.Entity, ent)
		}
		values := img.ClientQuotas[e]
		for _, k := range slices.Sorted(maps.Keys(values)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, values[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	return resp, nil
}

// quotaFilter is a DescribeClientQuotas filter: the types matched
// exactly (a name, or nil for the default) and those matched when
// present.
type quotaFilter struct {
	exact     map[string]*string
	specified map[string]bool
}

func parseQuotaFilter(req *kmsg.DescribeClientQuotasRequest) (quotaFilter, error) {
	f := quotaFilter{exact: map[string]*string{}, specified: map[string]bool{}}
	invalid := func(format string, args ...any) error {
		return errmsg.Withf(fmt.Errorf("%w: client quota filter: %s", kerr.InvalidRequest, fmt.Sprintf(format, args...)), format, args...)
	}
	for _, c := range req.Components {
		_, isExact := f.exact[c.EntityType]
		switch {
		case c.EntityType == "":
			return f, invalid("Invalid empty entity type.")
		case isExact || f.specified[c.EntityType]:
			return f, invalid("Entity type %s cannot appear more than once in the filter.", c.EntityType)
		case c.EntityType != quotaTypeUser && c.EntityType != quotaTypeClientID && c.EntityType != quotaTypeIP:
			return f, errmsg.Withf(fmt.Errorf("%w: client quota entity type %q", kerr.UnsupportedVersion, c.EntityType),
				"Unsupported entity type %s", c.EntityType)
		}
		switch c.MatchType {
		case kmsg.QuotasMatchTypeExact:
			if c.Match == nil {
				return f, invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.")
			}
			f.exact[c.EntityType] = c.Match
		case kmsg.QuotasMatchTypeDefault:
			if c.Match != nil {
				return f, invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
			}
			f.exact[c.EntityType] = nil
		case kmsg.QuotasMatchTypeAny:
			if c.Match != nil {
				return f, invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
			}
			f.specified[c.EntityType] = true
		default:
			return f, invalid("Unknown match type %d", c.MatchType)
		}
	}
	if f.has(quotaTypeIP) && (f.has(quotaTypeUser) || f.has(quotaTypeClientID)) {
		return f, invalid("Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.")
	}
	return f, nil
}

func (f quotaFilter) has(kind string) bool {
	_, ok := f.exact[kind]
	return ok || f.specified[kind]
}

// matches reports whether e passes the filter.
func (f quotaFilter) matches(e metadata.QuotaEntity, strict bool) bool {
	parts := quotaEntityParts(e)
	if strict && len(parts) != len(f.exact)+len(f.specified) {
		return false
	}
	names := make(map[string]*string, len(parts))
	for _, p := range parts {
		names[p.kind] = p.name
	}
	for kind, want := range f.exact {
		got, ok := names[kind]
		if !ok || (got == nil) != (want == nil) || got != nil && *got != *want {
			return false
		}
	}
	for kind := range f.specified {
		if _, ok := names[kind]; !ok {
			return false
		}
	}
	return true
}

// quotaEntityPart is one part of an entity as the protocol carries it: a
// type and a name, nil for the type's default.
type quotaEntityPart struct {
	kind string
	name *string
}

// quotaEntityParts lists e's parts: user, client-id, ip, those present.
func quotaEntityParts(e metadata.QuotaEntity) []quotaEntityPart {
	var parts []quotaEntityPart
	for _, p := range []struct {
		kind string
		q    metadata.QuotaName
	}{{quotaTypeUser, e.User}, {quotaTypeClientID, e.ClientID}, {quotaTypeIP, e.IP}} {
		switch {
		case p.q.Default:
			parts = append(parts, quotaEntityPart{p.kind, nil})
		case p.q.Name != "":
			parts = append(parts, quotaEntityPart{p.kind, &p.q.Name})
		}
	}
	return parts
}
