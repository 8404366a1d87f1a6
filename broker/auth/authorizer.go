package auth

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config is the authorizer's broker configs.
type Config struct {
	// Enabled is authorizer.class.name set to StandardAuthorizer; without
	// it every request is allowed, as by a Kafka broker without an
	// authorizer.
	Enabled bool
	// SuperUsers is super.users: principals allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACL is allow.everyone.if.no.acl.found: a resource
	// no ACL names is open to everyone (denied otherwise).
	AllowEveryoneIfNoACL bool
}

// Rule is what decided an authorization.
type Rule uint8

// The rules a Decision names.
const (
	// RuleNoAuthorizer: no authorizer is configured, everything is allowed.
	RuleNoAuthorizer Rule = iota
	// RuleSuperUser: the principal is in super.users.
	RuleSuperUser
	// RuleACL: an ACL allowed or denied (Decision.ACL).
	RuleACL
	// RuleNoACL: no ACL names the resource, and
	// allow.everyone.if.no.acl.found decided.
	RuleNoACL
	// RuleNoMatch: ACLs name the resource but none applies to the
	// principal, host and operation: denied.
	RuleNoMatch
)

// String names the rule as Kafka's audit log does.
func (r Rule) String() string {
	switch r {
	case RuleNoAuthorizer:
		return "NoAuthorizer"
	case RuleSuperUser:
		return "SuperUser"
	case RuleACL:
		return "MatchingAcl"
	case RuleNoACL:
		return "NoAcl"
	}
	return "NoMatchingAcl"
}

// Decision is the answer to one authorization and why.
type Decision struct {
	Allowed bool
	Rule    Rule
	// ACL is the ACL that decided, when Rule is RuleACL.
	ACL ACL
}

// Reason says why, in a sentence for a developer.
func (d Decision) Reason() string {
	switch d.Rule {
	case RuleNoAuthorizer:
		return "no authorizer is configured (authorizer.class.name): everything is allowed"
	case RuleSuperUser:
		return "the principal is a super user (super.users)"
	case RuleACL:
		verb := "allows"
		if !d.Allowed {
			verb = "denies"
		}
		return fmt.Sprintf("ACL %s %s", d.ACL, verb)
	case RuleNoACL:
		if d.Allowed {
			return "no ACL names the resource and allow.everyone.if.no.acl.found is true"
		}
		return "no ACL names the resource and allow.everyone.if.no.acl.found is false"
	}
	return "ACLs name the resource but none allows this principal, host and operation"
}

// compiled is an ACL with its host parsed once.
type compiled struct {
	ACL
	addr netip.Addr   // the host as an address, when it is one
	cidr netip.Prefix // the host as a CIDR range, when it is one
}

// typeACLs are the ACLs of one resource type, indexed so that a request
// looks only at those that can name its resource: the literal name's,
// the wildcard's, and those of each prefix of the name.
type typeACLs struct {
	literal  map[string][]compiled // LITERAL ACLs by name, "*" included
	prefixed map[string][]compiled // PREFIXED ACLs by prefix
	// prefixLens are the distinct lengths of the prefixes, ascending: a
	// name is looked up at these lengths only.
	prefixLens []int
}

// Authorizer decides requests with Kafka's StandardAuthorizer semantics
// over a fixed set of ACLs; a change of ACLs or configs makes a new one.
// It is safe for concurrent use.
type Authorizer struct {
	cfg    Config
	super  map[string]bool
	byType map[kmsg.ACLResourceType]*typeACLs
}

// New returns the authorizer of cfg over acls.
func New(cfg Config, acls []ACL) *Authorizer {
	a := &Authorizer{cfg: cfg, super: map[string]bool{}, byType: map[kmsg.ACLResourceType]*typeACLs{}}
	for _, p := range cfg.SuperUsers {
		a.super[p] = true
	}
	for _, acl := range acls {
		t := a.byType[acl.ResourceType]
		if t == nil {
			t = &typeACLs{literal: map[string][]compiled{}, prefixed: map[string][]compiled{}}
			a.byType[acl.ResourceType] = t
		}
		c := compiled{ACL: acl}
		if p, err := netip.ParsePrefix(acl.Host); err == nil {
			c.cidr = p.Masked()
		} else if ip, err := netip.ParseAddr(acl.Host); err == nil {
			c.addr = ip.Unmap()
		}
		if acl.PatternType == kmsg.ACLResourcePatternTypePrefixed {
			if _, ok := t.prefixed[acl.ResourceName]; !ok {
				t.prefixLens = append(t.prefixLens, len(acl.ResourceName))
			}
			t.prefixed[acl.ResourceName] = append(t.prefixed[acl.ResourceName], c)
		} else {
			t.literal[acl.ResourceName] = append(t.literal[acl.ResourceName], c)
		}
	}
	for _, t := range a.byType {
		slices.Sort(t.prefixLens)
		t.prefixLens = slices.Compact(t.prefixLens)
	}
	return a
}

// Enabled reports whether an authorizer is configured.
func (a *Authorizer) Enabled() bool { return a.cfg.Enabled }

// request is one authorization's who, from where and what.
type request struct {
	principal string
	host      string
	addr      netip.Addr
	op        kmsg.ACLOperation
}

// newRequest is the request of principal from host for op, the host
// parsed once.
func newRequest(principal, host string, op kmsg.ACLOperation) request {
	req := request{principal: principal, host: host, op: op}
	if ip, err := netip.ParseAddr(host); err == nil {
		req.addr = ip.Unmap()
	}
	return req
}

// Authorize decides whether principal, connected from host (an address),
// may do op on the resource of type rt named name. Deny beats allow; an
// ALLOW of READ, WRITE, DELETE or ALTER implies DESCRIBE, one of
// ALTER_CONFIGS implies DESCRIBE_CONFIGS; an ACL of operation ALL
// applies to every operation.
func (a *Authorizer) Authorize(principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) Decision {
	if !a.cfg.Enabled {
		return Decision{Allowed: true, Rule: RuleNoAuthorizer}
	}
	if a.super[principal] {
		return Decision{Allowed: true, Rule: RuleSuperUser}
	}
	t := a.byType[rt]
	if t == nil {
		return a.noACL()
	}
	req := newRequest(principal, host, op)
	var allow *compiled
	found := false
	check := func(acls []compiled) *compiled {
		found = found || len(acls) > 0
		for i := range acls {
			switch req.result(&acls[i]) {
			case kmsg.ACLPermissionTypeDeny:
				return &acls[i]
			case kmsg.ACLPermissionTypeAllow:
				if allow == nil {
					allow = &acls[i]
				}
			}
		}
		return nil
	}
	deny := check(t.literal[name])
	for _, n := range t.prefixLens {
		if deny != nil || n > len(name) {
			break
		}
		deny = check(t.prefixed[name[:n]])
	}
	if deny == nil && name != Wildcard {
		deny = check(t.literal[Wildcard])
	}
	switch {
	case deny != nil:
		return Decision{Rule: RuleACL, ACL: deny.ACL}
	case allow != nil:
		return Decision{Allowed: true, Rule: RuleACL, ACL: allow.ACL}
	case found:
		return Decision{Rule: RuleNoMatch}
	}
	return a.noACL()
}

// noACL is the decision for a resource no ACL names.
func (a *Authorizer) noACL() Decision {
	return Decision{Allowed: a.cfg.AllowEveryoneIfNoACL, Rule: RuleNoACL}
}

// result is what acl says of the request: ALLOW, DENY, or UNKNOWN when
// it does not apply (Kafka's StandardAuthorizerData.findResult).
func (r request) result(acl *compiled) kmsg.ACLPermissionType {
	if acl.Principal != r.principal && acl.Principal != WildcardPrincipal {
		return kmsg.ACLPermissionTypeUnknown
	}
	if !acl.matchesHost(r) {
		return kmsg.ACLPermissionTypeUnknown
	}
	if acl.Operation != kmsg.ACLOperationAll && acl.Operation != r.op {
		if acl.Permission != kmsg.ACLPermissionTypeAllow || !implies(acl.Operation, r.op) {
			return kmsg.ACLPermissionTypeUnknown
		}
	}
	return acl.Permission
}

// matchesHost reports whether the ACL's host is the request's: "*", the
// same address, or a CIDR range holding it.
func (c *compiled) matchesHost(r request) bool {
	switch {
	case c.Host == Wildcard || c.Host == r.host:
		return true
	case !r.addr.IsValid():
		return false
	case c.cidr.IsValid():
		return c.cidr.Contains(r.addr)
	}
	return c.addr.IsValid() && c.addr == r.addr
}

// implies reports whether an ALLOW of op grants want as well: DESCRIBE
// comes with READ, WRITE, DELETE and ALTER, DESCRIBE_CONFIGS with
// ALTER_CONFIGS.
func implies(op, want kmsg.ACLOperation) bool {
	switch want {
	case kmsg.ACLOperationDescribe:
		return op == kmsg.ACLOperationRead || op == kmsg.ACLOperationWrite || op == kmsg.ACLOperationDelete || op == kmsg.ACLOperationAlter
	case kmsg.ACLOperationDescribeConfigs:
		return op == kmsg.ACLOperationAlterConfigs
	}
	return false
}

// AuthorizeAny decides whether principal may do op on some resource of
// type rt, Kafka's authorizeByResourceType (InitProducerId's WRITE on
// any topic): allowed when a resource no ACL names would be, or when an
// ALLOW ACL of op (or ALL) names resources that no DENY ACL covers
// entirely. Implied operations do not count here, as in Kafka. It looks
// at every ACL of the type: only rare requests ask it.
func (a *Authorizer) AuthorizeAny(principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType) Decision {
	if d := a.Authorize(principal, host, op, rt, "hardcode"); d.Allowed {
		return d
	}
	t := a.byType[rt]
	if t == nil {
		return a.noACL()
	}
	req := newRequest(principal, host, op)
	applies := func(c *compiled) bool {
		return (c.Principal == principal || c.Principal == WildcardPrincipal) && c.matchesHost(req) &&
			(c.Operation == op || c.Operation == kmsg.ACLOperationAll)
	}
	var allowLiteral, allowPrefixed []*compiled
	deniedLiteral, deniedPrefixes := map[string]bool{}, []string{}
	for _, m := range []map[string][]compiled{t.literal, t.prefixed} {
		for _, acls := range m {
			for i := range acls {
				c := &acls[i]
				switch {
				case !applies(c):
				case c.Permission == kmsg.ACLPermissionTypeDeny && c.PatternType == kmsg.ACLResourcePatternTypePrefixed:
					deniedPrefixes = append(deniedPrefixes, c.ResourceName)
				case c.Permission == kmsg.ACLPermissionTypeDeny && c.ResourceName == Wildcard:
					return Decision{Rule: RuleACL, ACL: c.ACL}
				case c.Permission == kmsg.ACLPermissionTypeDeny:
					deniedLiteral[c.ResourceName] = true
				case c.PatternType == kmsg.ACLResourcePatternTypePrefixed:
					allowPrefixed = append(allowPrefixed, c)
				default:
					allowLiteral = append(allowLiteral, c)
				}
			}
		}
	}
	underDeniedPrefix := func(name string) bool {
		return slices.ContainsFunc(deniedPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
	}
	for _, c := range allowLiteral {
		if c.ResourceName == Wildcard || !deniedLiteral[c.ResourceName] && !underDeniedPrefix(c.ResourceName) {
			return Decision{Allowed: true, Rule: RuleACL, ACL: c.ACL}
		}
	}
	for _, c := range allowPrefixed {
		if !underDeniedPrefix(c.ResourceName) {
			return Decision{Allowed: true, Rule: RuleACL, ACL: c.ACL}
		}
	}
	return Decision{Rule: RuleNoMatch}
}
