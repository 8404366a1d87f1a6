package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/nodeapi"
)

// ErrACLSpec is what an ACLSpec that cannot make its request wraps (no
// principal, no resource, an unknown operation).
var ErrACLSpec = errors.New("ACL spec")

// ACL is one ACL binding as klog acl shows it, in Kafka's names: the
// admin API's (klog acl explain) shape.
type ACL = nodeapi.ACL

// ACLSpec is the ACLs klog acl create makes, or the filter klog acl list
// and delete select with: principals allowed or denied, the hosts they
// connect from, the operations, and the resources (topics, groups,
// transactional ids, the cluster), literal or prefixed.
type ACLSpec struct {
	Allow, Deny      []string // principals, TYPE:NAME
	Hosts            []string // empty: any host ("*" when creating)
	Operations       []string // Kafka's names (WRITE, describe-configs); empty: any when selecting
	Topics           []string
	Groups           []string
	TransactionalIDs []string
	Cluster          bool
	// Prefixed makes the resource names prefixes. Without it they are
	// literal when creating and deleting, and either when listing.
	Prefixed bool
}

// HasResource reports whether the spec names a resource.
func (s ACLSpec) HasResource() bool {
	return len(s.Topics)+len(s.Groups)+len(s.TransactionalIDs) > 0 || s.Cluster
}

// operations parses the spec's operations.
func (s ACLSpec) operations() ([]kadm.ACLOperation, error) {
	var ops []kadm.ACLOperation
	for _, o := range s.Operations {
		op, err := kmsg.ParseACLOperation(o)
		if err != nil || op <= kmsg.ACLOperationAny {
			return nil, fmt.Errorf("%w: operation %q: want one of ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS", ErrACLSpec, o)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// builder is the spec as kadm's builder; selecting makes it a filter,
// and anyPattern one of literal and prefixed names alike unless the
// spec says Prefixed.
func (s ACLSpec) builder(selecting, anyPattern bool) (*kadm.ACLBuilder, error) {
	ops, err := s.operations()
	if err != nil {
		return nil, err
	}
	b := kadm.NewACLs().Operations(ops...)
	pattern := kadm.ACLPatternLiteral
	switch {
	case s.Prefixed:
		pattern = kadm.ACLPatternPrefixed
	case anyPattern:
		pattern = kadm.ACLPatternAny
	}
	b.ResourcePatternType(pattern)
	switch {
	case len(s.Allow)+len(s.Deny) == 0 && selecting:
		b.Allow().AllowHosts(s.Hosts...).Deny().DenyHosts(s.Hosts...)
	default:
		if len(s.Allow) > 0 {
			b.Allow(s.Allow...)
			if len(s.Hosts) > 0 || selecting {
				b.AllowHosts(s.Hosts...)
			}
		}
		if len(s.Deny) > 0 {
			b.Deny(s.Deny...)
			if len(s.Hosts) > 0 || selecting {
				b.DenyHosts(s.Hosts...)
			}
		}
	}
	if !s.HasResource() {
		b.AnyResource()
		return b, nil
	}
	b.MaybeTopics(s.Topics...).MaybeGroups(s.Groups...).MaybeTransactionalIDs(s.TransactionalIDs...).MaybeClusters(s.Cluster)
	return b, nil
}

// CreateACLs creates the ACLs of spec: every principal, host, operation
// and resource combined. It returns the ACLs it asked for, each with its
// error ("" when created).
func CreateACLs(ctx context.Context, adm *kadm.Client, spec ACLSpec) ([]ACL, []string, error) {
	switch {
	case len(spec.Allow)+len(spec.Deny) == 0:
		return nil, nil, fmt.Errorf("%w: name a principal to --allow or --deny (User:NAME)", ErrACLSpec)
	case !spec.HasResource():
		return nil, nil, fmt.Errorf("%w: name a resource: --topic, --group, --transactional-id or --cluster", ErrACLSpec)
	case len(spec.Operations) == 0:
		return nil, nil, fmt.Errorf("%w: name an --operation (READ, WRITE, DESCRIBE, ALL, ...)", ErrACLSpec)
	}
	b, err := spec.builder(false, false)
	if err != nil {
		return nil, nil, err
	}
	res, err := adm.CreateACLs(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	var acls []ACL
	var errs []string
	for _, r := range res {
		acls = append(acls, ACL{ResourceType: r.Type.String(), ResourceName: r.Name, PatternType: r.Pattern.String(),
			Principal: r.Principal, Host: r.Host, Operation: r.Operation.String(), Permission: r.Permission.String()})
		msg := ""
		if r.Err != nil {
			msg = ErrorText(r.Err, r.ErrMessage)
		}
		errs = append(errs, msg)
	}
	return acls, errs, nil
}

// ListACLs returns the ACLs spec selects, literal and prefixed alike
// unless it says Prefixed, sorted by resource, principal, host,
// operation and permission.
func ListACLs(ctx context.Context, adm *kadm.Client, spec ACLSpec) ([]ACL, error) {
	b, err := spec.builder(true, true)
	if err != nil {
		return nil, err
	}
	res, err := adm.DescribeACLs(ctx, b)
	if err != nil {
		return nil, err
	}
	var out []ACL
	for _, r := range res {
		if r.Err != nil {
			return nil, errors.New(ErrorText(r.Err, r.ErrMessage))
		}
		for _, d := range r.Described {
			out = append(out, ACL{ResourceType: d.Type.String(), ResourceName: d.Name, PatternType: d.Pattern.String(),
				Principal: d.Principal, Host: d.Host, Operation: d.Operation.String(), Permission: d.Permission.String()})
		}
	}
	return sortACLs(out), nil
}

// DeleteACLs deletes the ACLs spec selects, of literal names unless it
// says Prefixed (as kafka-acls --remove), and returns them.
func DeleteACLs(ctx context.Context, adm *kadm.Client, spec ACLSpec) ([]ACL, error) {
	if !spec.HasResource() {
		return nil, fmt.Errorf("%w: name a resource: --topic, --group, --transactional-id or --cluster", ErrACLSpec)
	}
	b, err := spec.builder(true, false)
	if err != nil {
		return nil, err
	}
	res, err := adm.DeleteACLs(ctx, b)
	if err != nil {
		return nil, err
	}
	var out []ACL
	for _, r := range res {
		if r.Err != nil {
			return sortACLs(out), errors.New(ErrorText(r.Err, r.ErrMessage))
		}
		for _, d := range r.Deleted {
			out = append(out, ACL{ResourceType: d.Type.String(), ResourceName: d.Name, PatternType: d.Pattern.String(),
				Principal: d.Principal, Host: d.Host, Operation: d.Operation.String(), Permission: d.Permission.String()})
		}
	}
	return sortACLs(out), nil
}

// sortACLs sorts acls and drops repeats (a filter per operation and
// permission may list one ACL twice).
func sortACLs(acls []ACL) []ACL {
	key := func(a ACL) string {
		return strings.Join([]string{a.ResourceType, a.PatternType, a.ResourceName, a.Principal, a.Host, a.Operation, a.Permission}, "\x00")
	}
	slices.SortFunc(acls, func(a, b ACL) int { return strings.Compare(key(a), key(b)) })
	return slices.Compact(acls)
}
