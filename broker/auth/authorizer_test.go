package auth

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/errmsg"
)

const (
	topic    = kmsg.ACLResourceTypeTopic
	group    = kmsg.ACLResourceTypeGroup
	cluster  = kmsg.ACLResourceTypeCluster
	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed
	allow    = kmsg.ACLPermissionTypeAllow
	deny     = kmsg.ACLPermissionTypeDeny
	read     = kmsg.ACLOperationRead
	write    = kmsg.ACLOperationWrite
	describe = kmsg.ACLOperationDescribe
	all      = kmsg.ACLOperationAll
	alter    = kmsg.ACLOperationAlter
	create   = kmsg.ACLOperationCreate
)

func acl(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) ACL {
	return ACL{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: host, Operation: op, Permission: perm}
}

// TestAuthorize checks the authorizer's decisions against the cases of
// Kafka's StandardAuthorizerTest: literal, prefixed and wildcard
// resources, the principal and host wildcards, CIDR hosts, deny beating
// allow, ALL, the implied operations, super users and the no-ACL default.
func TestAuthorize(t *testing.T) {
	acls := []ACL{
		acl(topic, "foo", prefixed, "User:alice", "*", all, allow),
		acl(topic, "foobar", literal, "User:alice", "*", read, deny),
		acl(topic, "bar", literal, "User:bob", "*", read, allow),
		acl(topic, "baz", literal, "User:bob", "*", all, deny),
		acl(topic, "baz", literal, "User:*", "*", write, allow),
		acl(topic, "conf", literal, "User:bob", "*", kmsg.ACLOperationAlterConfigs, allow),
		acl(topic, "hosted", literal, "User:bob", "10.0.0.1", read, allow),
		acl(topic, "ranged", literal, "User:bob", "10.1.0.0/16", read, allow),
		acl(topic, "ranged6", literal, "User:bob", "2001:db8::/32", read, allow),
		acl(topic, "v6", literal, "User:bob", "::1", read, allow),
		acl(topic, "denyread", literal, "User:bob", "*", read, deny),
		acl(topic, "denyread", literal, "User:bob", "*", write, allow),
		acl(group, "g", prefixed, "User:bob", "*", read, allow),
		acl(group, "gx", literal, "User:bob", "*", read, deny),
		acl(cluster, ClusterName, literal, "User:bob", "*", alter, allow),
		acl(topic, "other", literal, "User:dave", "*", read, allow),
	}
	a := New(Config{Enabled: true, SuperUsers: []string{"User:admin"}}, acls)
	open := New(Config{Enabled: true, AllowEveryoneIfNoACL: true}, acls)
	off := New(Config{}, acls)
	wild := New(Config{Enabled: true}, append([]ACL{acl(topic, "*", literal, "User:carol", "*", describe, allow)}, acls...))
	for _, c := range []struct {
		a         *Authorizer
		principal string
		host      string
		op        kmsg.ACLOperation
		rt        kmsg.ACLResourceType
		name      string
		want      bool
		rule      Rule
	}{
		{a, "User:alice", "1.2.3.4", write, topic, "foo", true, RuleACL},                           // a prefix matches its own name
		{a, "User:alice", "1.2.3.4", write, topic, "foobaz", true, RuleACL},                        // and longer names
		{a, "User:alice", "1.2.3.4", read, topic, "foobar", false, RuleACL},                        // deny beats allow
		{a, "User:alice", "1.2.3.4", write, topic, "foobar", true, RuleACL},                        // the deny is of READ only
		{a, "User:alice", "1.2.3.4", read, topic, "fo", false, RuleNoACL},                          // no ACL names "fo"
		{a, "User:bob", "1.2.3.4", read, topic, "bar", true, RuleACL},                              // literal
		{a, "User:bob", "1.2.3.4", read, topic, "bar2", false, RuleNoACL},                          // a literal name is not a prefix
		{a, "User:bob", "1.2.3.4", describe, topic, "bar", true, RuleACL},                          // READ implies DESCRIBE
		{a, "User:bob", "1.2.3.4", write, topic, "bar", false, RuleNoMatch},                        // but not WRITE
		{a, "User:bob", "1.2.3.4", describe, topic, "denyread", true, RuleACL},                     // a DENY READ denies no DESCRIBE (WRITE implies it)
		{a, "User:bob", "1.2.3.4", write, topic, "baz", false, RuleACL},                            // DENY ALL beats User:* ALLOW
		{a, "User:eve", "1.2.3.4", write, topic, "baz", true, RuleACL},                             // User:* applies to anyone
		{a, "User:eve", "1.2.3.4", read, topic, "baz", false, RuleNoMatch},                         // ACLs name baz: no default
		{wild, "User:carol", "1.2.3.4", describe, topic, "anything", true, RuleACL},                // the wildcard resource
		{wild, "User:carol", "1.2.3.4", read, topic, "anything", false, RuleNoMatch},               // the wildcard names every topic
		{a, "User:bob", "1.2.3.4", kmsg.ACLOperationDescribeConfigs, topic, "conf", true, RuleACL}, // ALTER_CONFIGS implies DESCRIBE_CONFIGS
		{a, "User:bob", "10.0.0.1", read, topic, "hosted", true, RuleACL},                          // host exact
		{a, "User:bob", "10.0.0.2", read, topic, "hosted", false, RuleNoMatch},                     // another host
		{a, "User:bob", "10.1.200.3", read, topic, "ranged", true, RuleACL},                        // CIDR
		{a, "User:bob", "10.2.0.1", read, topic, "ranged", false, RuleNoMatch},                     // outside the range
		{a, "User:bob", "2001:db8::7", read, topic, "ranged6", true, RuleACL},                      // IPv6 CIDR
		{a, "User:bob", "0:0:0:0:0:0:0:1", read, topic, "v6", true, RuleACL},                       // one address, two spellings
		{a, "User:bob", "1.2.3.4", read, group, "g1", true, RuleACL},                               // groups
		{a, "User:bob", "1.2.3.4", read, group, "gx", false, RuleACL},                              // literal deny under an allowed prefix
		{a, "User:bob", "1.2.3.4", alter, cluster, ClusterName, true, RuleACL},                     // the cluster
		{a, "User:bob", "1.2.3.4", describe, cluster, ClusterName, true, RuleACL},                  // ALTER implies DESCRIBE
		{a, "User:bob", "1.2.3.4", create, cluster, ClusterName, false, RuleNoMatch},               // not CREATE
		{a, "User:admin", "1.2.3.4", read, topic, "baz", true, RuleSuperUser},                      // super users pass every deny
		{a, "User:bob", "1.2.3.4", read, kmsg.ACLResourceTypeTransactionalId, "t", false, RuleNoACL},
		{open, "User:bob", "1.2.3.4", read, topic, "nobody", true, RuleNoACL},   // allow.everyone.if.no.acl.found
		{open, "User:bob", "1.2.3.4", read, topic, "other", false, RuleNoMatch}, // not where ACLs name the resource
		{open, "User:bob", "1.2.3.4", read, kmsg.ACLResourceTypeTransactionalId, "t", true, RuleNoACL},
		{off, "User:bob", "1.2.3.4", read, topic, "baz", true, RuleNoAuthorizer}, // no authorizer
	} {
		d := c.a.Authorize(c.principal, c.host, c.op, c.rt, c.name)
		if d.Allowed != c.want || d.Rule != c.rule {
			t.Errorf("%s from %s %s %s %q: allowed %v by %v (%s), want %v by %v", c.principal, c.host, c.op, c.rt, c.name, d.Allowed, d.Rule, d.Reason(), c.want, c.rule)
		}
	}
}

// TestAuthorizeDecidingACL checks that a decision names the ACL that
// made it, a deny over the allow it beats.
func TestAuthorizeDecidingACL(t *testing.T) {
	denyACL := acl(topic, "orders", prefixed, "User:*", "*", write, deny)
	a := New(Config{Enabled: true}, []ACL{acl(topic, "orders", literal, "User:alice", "*", write, allow), denyACL})
	d := a.Authorize("User:alice", "127.0.0.1", write, topic, "orders")
	if d.Allowed || d.ACL != denyACL {
		t.Fatalf("decision %+v, want the deny %v", d, denyACL)
	}
	if want := "ACL (principal=User:*, host=*, operation=WRITE, permissionType=DENY) on TOPIC:PREFIXED:orders denies"; d.Reason() != want {
		t.Errorf("reason %q, want %q", d.Reason(), want)
	}
}

// TestAuthorizeAny checks Kafka's authorizeByResourceType, which
// InitProducerId asks for WRITE on any topic.
func TestAuthorizeAny(t *testing.T) {
	for _, c := range []struct {
		name string
		acls []ACL
		want bool
	}{
		{"none", nil, false},
		{"literal allow", []ACL{acl(topic, "t", literal, "User:bob", "*", write, allow)}, true},
		{"implied does not count", []ACL{acl(topic, "t", literal, "User:bob", "*", kmsg.ACLOperationDescribe, allow)}, false},
		{"ALL counts", []ACL{acl(topic, "t", literal, "User:bob", "*", all, allow)}, true},
		{"literal denied", []ACL{acl(topic, "t", literal, "User:bob", "*", write, allow), acl(topic, "t", literal, "User:bob", "*", write, deny)}, false},
		{"under a denied prefix", []ACL{acl(topic, "tx", literal, "User:bob", "*", write, allow), acl(topic, "t", prefixed, "User:*", "*", write, deny)}, false},
		{"prefix outside the denied", []ACL{acl(topic, "ab", prefixed, "User:bob", "*", write, allow), acl(topic, "abc", prefixed, "User:bob", "*", write, deny)}, true},
		{"wildcard deny", []ACL{acl(topic, "t", literal, "User:bob", "*", write, allow), acl(topic, "*", literal, "User:bob", "*", write, deny)}, false},
		{"another principal", []ACL{acl(topic, "t", literal, "User:eve", "*", write, allow)}, false},
	} {
		a := New(Config{Enabled: true}, c.acls)
		if d := a.AuthorizeAny("User:bob", "127.0.0.1", write, topic); d.Allowed != c.want {
			t.Errorf("%s: allowed %v (%s), want %v", c.name, d.Allowed, d.Reason(), c.want)
		}
	}
}

// TestValidateACL checks the refusals of Kafka's controller and
// CreateAcls handler.
func TestValidateACL(t *testing.T) {
	good := acl(topic, "t", literal, "User:bob", "*", read, allow)
	for _, c := range []struct {
		change func(*ACL)
		want   string
	}{
		{func(*ACL) {}, ""},
		{func(a *ACL) { a.Host = "10.0.0.0/8" }, ""},
		{func(a *ACL) { a.Host = "10.0.0.0/33" }, "Invalid CIDR notation in host pattern '10.0.0.0/33'"},
		{func(a *ACL) { a.ResourceType = kmsg.ACLResourceTypeAny }, "Invalid resourceType ANY"},
		{func(a *ACL) { a.PatternType = kmsg.ACLResourcePatternTypeMatch }, "Invalid patternType MATCH"},
		{func(a *ACL) { a.Operation = kmsg.ACLOperationAny }, "Invalid operation ANY"},
		{func(a *ACL) { a.Permission = kmsg.ACLPermissionTypeAny }, "Invalid permissionType ANY"},
		{func(a *ACL) { a.ResourceName = "" }, "Invalid empty resource name"},
		{func(a *ACL) { a.ResourceType, a.ResourceName = cluster, "c" }, "The only valid name for the CLUSTER resource is kafka-cluster"},
		{func(a *ACL) { a.Principal = "bob" }, "expected a string in format principalType:principalName but got bob"},
	} {
		a := good
		c.change(&a)
		err := a.Validate()
		got, _ := errmsg.Wire(err)
		if (err == nil) != (c.want == "") || err != nil && (got != c.want || !errors.Is(err, ErrInvalidACL)) {
			t.Errorf("%v: %v, want %q", a, err, c.want)
		}
	}
}

// TestFilterMatches checks DescribeAcls' and DeleteAcls' filters,
// Kafka's AclBindingFilter.
func TestFilterMatches(t *testing.T) {
	name := func(s string) *string { return &s }
	pre := acl(topic, "foo", prefixed, "User:bob", "*", read, allow)
	lit := acl(topic, "foobar", literal, "User:bob", "*", read, allow)
	wild := acl(topic, "*", literal, "User:bob", "*", read, allow)
	anyF := Filter{ResourceType: kmsg.ACLResourceTypeAny, PatternType: kmsg.ACLResourcePatternTypeAny, Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}
	for _, c := range []struct {
		f    func(f *Filter)
		a    ACL
		want bool
	}{
		{func(*Filter) {}, pre, true},
		{func(f *Filter) { f.ResourceName = name("foobar") }, pre, false},
		{func(f *Filter) { f.ResourceName = name("foobar") }, lit, true},
		{func(f *Filter) { f.ResourceName, f.PatternType = name("foobar"), kmsg.ACLResourcePatternTypeMatch }, pre, true},
		{func(f *Filter) { f.ResourceName, f.PatternType = name("foobar"), kmsg.ACLResourcePatternTypeMatch }, wild, true},
		{func(f *Filter) { f.ResourceName, f.PatternType = name("fo"), kmsg.ACLResourcePatternTypeMatch }, pre, false},
		{func(f *Filter) { f.PatternType = literal }, pre, false},
		{func(f *Filter) { f.ResourceType = group }, pre, false},
		{func(f *Filter) { f.Principal = name("User:alice") }, pre, false},
		{func(f *Filter) { f.Host = name("*") }, pre, true},
		{func(f *Filter) { f.Operation = write }, pre, false},
		{func(f *Filter) { f.Permission = deny }, pre, false},
	} {
		f := anyF
		c.f(&f)
		if got := f.Matches(c.a); got != c.want {
			t.Errorf("filter %+v matches %v: %v, want %v", f, c.a, got, c.want)
		}
	}
}

// BenchmarkAuthorize measures one decision among many ACLs: the work is
// that of the ACLs naming the resource, not of every ACL.
func BenchmarkAuthorize(b *testing.B) {
	var acls []ACL
	for i := range 100000 {
		acls = append(acls, acl(topic, fmt.Sprintf("topic-%d", i), literal, fmt.Sprintf("User:u%d", i%100), "*", read, allow))
		if i%100 == 0 {
			acls = append(acls, acl(topic, fmt.Sprintf("pre-%d-", i), prefixed, "User:u1", "*", write, allow))
		}
	}
	a := New(Config{Enabled: true}, acls)
	b.ResetTimer()
	for b.Loop() {
		a.Authorize("User:u7", "10.0.0.1", read, topic, "topic-4507")
	}
}

// TestKafkaStandardAuthorizerCases replays the cases of Kafka's
// StandardAuthorizerTest (each named after its test) and expects the
// decisions Kafka's asserts expect. The mock request context's address is
// 127.0.0.1 unless a case names another.
func TestKafkaStandardAuthorizerCases(t *testing.T) {
	type check struct {
		principal, host string
		op              kmsg.ACLOperation
		rt              kmsg.ACLResourceType
		name            string
		want            bool
	}
	const lh = "127.0.0.1"
	for _, c := range []struct {
		name   string
		cfg    Config
		acls   []ACL
		checks []check
	}{
		{"testAllowEveryoneIfNoAclFoundConfigEnabled", Config{Enabled: true, SuperUsers: []string{"User:alice", "User:chris"}, AllowEveryoneIfNoACL: true},
			[]ACL{acl(topic, "topic1", literal, "User:Alice", "*", read, allow)},
			[]check{{"User:Bob", lh, read, topic, "topic1", false}, {"User:Bob", lh, read, topic, "topic2", true}}},
		{"testAllowEveryoneIfNoAclFoundConfigDisabled", Config{Enabled: true, SuperUsers: []string{"User:alice", "User:chris"}},
			[]ACL{acl(topic, "topic1", literal, "User:Alice", "*", read, allow)},
			[]check{{"User:Bob", lh, read, topic, "topic1", false}, {"User:Bob", lh, read, topic, "topic2", false}}},
		{"testDenyPrecedenceWithOperationAll", Config{Enabled: true}, []ACL{
			acl(topic, "foo", literal, "User:alice", "*", all, deny),
			acl(topic, "foo", prefixed, "User:alice", "*", read, allow),
			acl(topic, "foo", literal, "User:*", "*", all, deny),
			acl(topic, "foo", prefixed, "User:*", "*", describe, allow),
		}, []check{
			{"User:alice", lh, write, topic, "foo", false}, {"User:alice", lh, read, topic, "foo", false},
			{"User:alice", lh, describe, topic, "foo", false}, {"User:alice", lh, read, topic, "foobar", true},
			{"User:bob", lh, describe, topic, "foo", false}, {"User:bob", lh, read, topic, "foo", false},
			{"User:bob", lh, write, topic, "foo", false}, {"User:bob", lh, describe, topic, "foobaz", true},
			{"User:bob", lh, read, topic, "foobaz", false},
		}},
		{"testTopicAclWithOperationAll", Config{Enabled: true}, []ACL{
			acl(topic, "foo", literal, "User:*", "*", all, allow),
			acl(topic, "bar", prefixed, "User:alice", "*", all, allow),
			acl(topic, "baz", literal, "User:bob", "*", all, allow),
		}, []check{
			{"User:alice", lh, write, topic, "foo", true}, {"User:alice", lh, kmsg.ACLOperationDescribeConfigs, topic, "bar", true},
			{"User:alice", lh, describe, topic, "baz", false},
			{"User:bob", lh, write, topic, "foo", true}, {"User:bob", lh, read, topic, "bar", false}, {"User:bob", lh, describe, topic, "baz", true},
			{"User:malory", lh, describe, topic, "foo", true}, {"User:malory", lh, write, topic, "bar", false}, {"User:malory", lh, read, topic, "baz", false},
		}},
		{"testHostAddressAclValidation", Config{Enabled: true}, []ACL{
			acl(topic, "foo", literal, "User:alice", "192.168.1.1", read, deny),
			acl(topic, "foo", literal, "User:alice", "*", read, allow),
			acl(topic, "bar", literal, "User:bob", "192.168.1.2", read, allow),
			acl(topic, "bar", literal, "User:*", lh, describe, allow),
		}, []check{
			{"User:alice", lh, read, topic, "foo", true}, {"User:alice", lh, read, topic, "bar", false}, {"User:alice", lh, describe, topic, "bar", true},
			{"User:alice", "192.168.1.1", read, topic, "foo", false}, {"User:alice", "192.168.1.1", read, topic, "bar", false}, {"User:alice", "192.168.1.1", describe, topic, "bar", false},
			{"User:alice", "192.168.1.2", read, topic, "foo", true}, {"User:alice", "192.168.1.2", read, topic, "bar", false}, {"User:alice", "192.168.1.2", describe, topic, "bar", false},
			{"User:bob", lh, read, topic, "foo", false}, {"User:bob", lh, read, topic, "bar", false}, {"User:bob", lh, describe, topic, "bar", true},
			{"User:bob", "192.168.1.1", read, topic, "foo", false}, {"User:bob", "192.168.1.1", read, topic, "bar", false}, {"User:bob", "192.168.1.1", describe, topic, "bar", false},
			{"User:bob", "192.168.1.2", read, topic, "foo", false}, {"User:bob", "192.168.1.2", read, topic, "bar", true}, {"User:bob", "192.168.1.2", describe, topic, "bar", true},
		}},
		{"testAuthorizationWithManyAcls", Config{Enabled: true}, []ACL{
			acl(topic, "green2", literal, "User:*", "*", read, allow),
			acl(topic, "green", prefixed, "User:bob", "*", read, allow),
			acl(topic, "betamax4", literal, "User:bob", "*", read, allow),
			acl(topic, "betamax", literal, "User:bob", "*", read, allow),
			acl(topic, "beta", prefixed, "User:*", "*", read, allow),
			acl(topic, "alpha", prefixed, "User:*", "*", read, allow),
			acl(topic, "alp", prefixed, "User:bob", "*", read, deny),
			acl(group, "*", literal, "User:bob", "*", write, allow),
			acl(group, "wheel", literal, "User:*", "*", write, deny),
		}, []check{
			{"User:bob", lh, read, topic, "green1", true}, {"User:bob", lh, write, group, "wheel", false},
			{"User:bob", lh, read, topic, "alpha", false}, {"User:bob", lh, write, group, "arbitrary", true}, {"User:bob", lh, read, topic, "ala", false},
		}},
		{"testPrefixAcls", Config{Enabled: true}, []ACL{
			acl(topic, "fooa", prefixed, "User:alice", "*", all, allow),
			acl(topic, "foobar", literal, "User:bob", "*", all, allow),
			acl(topic, "f", prefixed, "User:bob", "*", all, allow),
		}, []check{
			{"User:bob", lh, write, topic, "foobarr", true}, {"User:bob", lh, read, topic, "goobar", false}, {"User:bob", lh, read, topic, "fooa", true},
			{"User:alice", lh, describe, topic, "fooa", true}, {"User:alice", lh, write, topic, "bar", false}, {"User:alice", lh, read, topic, "baz", false},
		}},
	} {
		a := New(c.cfg, c.acls)
		for _, k := range c.checks {
			if d := a.Authorize(k.principal, k.host, k.op, k.rt, k.name); d.Allowed != k.want {
				t.Errorf("%s: %s from %s %s %s %q: allowed %v (%s), want %v", c.name, k.principal, k.host, k.op, k.rt, k.name, d.Allowed, d.Reason(), k.want)
			}
		}
	}
}
