package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/errmsg"
)

// ErrInvalidACL is what an ACL or a filter that Kafka refuses wraps; the
// error carries Kafka's message (errmsg) for INVALID_REQUEST.
var ErrInvalidACL = errors.New("invalid ACL")

// invalid returns ErrInvalidACL with Kafka's message.
func invalid(format string, args ...any) error {
	return errmsg.Withf(fmt.Errorf("%w: "+format, append([]any{ErrInvalidACL}, args...)...), format, args...)
}

// Wildcard is the ACL name, host and principal name that match anything:
// a LITERAL resource named "*", host "*", principal "User:*".
const Wildcard = "*"

// WildcardPrincipal is the principal of an ACL that applies to everyone.
const WildcardPrincipal = "User:*"

// ClusterName is the name of the one CLUSTER resource.
const ClusterName = "kafka-cluster"

// ACL is one ACL binding, Kafka's AclBinding: who (Principal, from Host)
// may or may not (Permission) do what (Operation) on which resources
// (ResourceType, ResourceName read as PatternType says). The metadata
// image's ACLs (metadata.ACL) have the same fields and convert to it.
type ACL struct {
	ResourceType kmsg.ACLResourceType        `json:"resourceType"`
	ResourceName string                      `json:"resourceName"`
	PatternType  kmsg.ACLResourcePatternType `json:"patternType"`
	Principal    string                      `json:"principal"`
	Host         string                      `json:"host"`
	Operation    kmsg.ACLOperation           `json:"operation"`
	Permission   kmsg.ACLPermissionType      `json:"permission"`
}

// String says the ACL as Kafka's tools print one.
func (a ACL) String() string {
	return fmt.Sprintf("(principal=%s, host=%s, operation=%s, permissionType=%s) on %s:%s:%s",
		a.Principal, a.Host, a.Operation, a.Permission, a.ResourceType, a.PatternType, a.ResourceName)
}

// Validate checks an ACL to be created as Kafka's controller does
// (AclControlManager): a concrete resource type, pattern type, operation
// and permission, a name (kafka-cluster for the cluster), a principal
// TYPE:NAME and a host that is "*", an address, a name or a CIDR range.
// The error's text is what Kafka answers with INVALID_REQUEST.
func (a ACL) Validate() error {
	switch {
	case a.ResourceType < kmsg.ACLResourceTypeTopic || a.ResourceType > kmsg.ACLResourceTypeUser:
		return invalid("Invalid resourceType %s", a.ResourceType)
	case a.PatternType != kmsg.ACLResourcePatternTypeLiteral && a.PatternType != kmsg.ACLResourcePatternTypePrefixed:
		return invalid("Invalid patternType %s", a.PatternType)
	case a.Operation < kmsg.ACLOperationAll || a.Operation > kmsg.ACLOperationDescribeTokens:
		return invalid("Invalid operation %s", a.Operation)
	case a.Permission != kmsg.ACLPermissionTypeAllow && a.Permission != kmsg.ACLPermissionTypeDeny:
		return invalid("Invalid permissionType %s", a.Permission)
	case a.ResourceName == "":
		return invalid("Invalid empty resource name")
	case a.ResourceType == kmsg.ACLResourceTypeCluster && a.ResourceName != ClusterName:
		return invalid("The only valid name for the CLUSTER resource is %s", ClusterName)
	}
	if typ, name, ok := strings.Cut(a.Principal, ":"); !ok || typ == "" || name == "" {
		return invalid("expected a string in format principalType:principalName but got %s", a.Principal)
	}
	if a.Host == "" {
		return invalid("Host pattern must not be empty")
	}
	if strings.Contains(a.Host, "/") {
		if _, err := netip.ParsePrefix(a.Host); err != nil {
			return invalid("Invalid CIDR notation in host pattern '%s'", a.Host)
		}
	}
	return nil
}

// Filter selects ACLs, Kafka's AclBindingFilter as DescribeAcls and
// DeleteAcls carry it: ANY matches every resource type, pattern type,
// operation or permission, a nil name, principal or host every one, and
// the MATCH pattern type every ACL that applies to the named resource
// (the literal name, the wildcard "*", and each prefix of it).
type Filter struct {
	ResourceType kmsg.ACLResourceType
	ResourceName *string
	PatternType  kmsg.ACLResourcePatternType
	Principal    *string
	Host         *string
	Operation    kmsg.ACLOperation
	Permission   kmsg.ACLPermissionType
}

// Validate checks a filter as Kafka does before deleting: a known pattern
// type and entry.
func (f Filter) Validate() error {
	if f.ResourceType <= kmsg.ACLResourceTypeUnknown || f.ResourceType > kmsg.ACLResourceTypeUser ||
		f.PatternType <= kmsg.ACLResourcePatternTypeUnknown || f.PatternType > kmsg.ACLResourcePatternTypePrefixed {
		return invalid("Unknown patternFilter.")
	}
	if f.Operation <= kmsg.ACLOperationUnknown || f.Operation > kmsg.ACLOperationDescribeTokens ||
		f.Permission <= kmsg.ACLPermissionTypeUnknown || f.Permission > kmsg.ACLPermissionTypeAllow {
		return invalid("Unknown entryFilter.")
	}
	return nil
}

// Matches reports whether the filter selects a.
func (f Filter) Matches(a ACL) bool {
	return f.matchesPattern(a) &&
		(f.Principal == nil || *f.Principal == a.Principal) &&
		(f.Host == nil || *f.Host == a.Host) &&
		(f.Operation == kmsg.ACLOperationAny || f.Operation == a.Operation) &&
		(f.Permission == kmsg.ACLPermissionTypeAny || f.Permission == a.Permission)
}

// matchesPattern is Kafka's ResourcePatternFilter.matches.
func (f Filter) matchesPattern(a ACL) bool {
	if f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != a.ResourceType {
		return false
	}
	anyPattern := f.PatternType == kmsg.ACLResourcePatternTypeAny
	match := f.PatternType == kmsg.ACLResourcePatternTypeMatch
	if !anyPattern && !match && f.PatternType != a.PatternType {
		return false
	}
	if f.ResourceName == nil {
		return true
	}
	name := *f.ResourceName
	if !match {
		return name == a.ResourceName
	}
	if a.PatternType == kmsg.ACLResourcePatternTypePrefixed {
		return strings.HasPrefix(name, a.ResourceName)
	}
	return name == a.ResourceName || a.ResourceName == Wildcard
}
