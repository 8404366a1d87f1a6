package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/nodeapi"
)

// TestACLCommands: klog acl create, list, explain and delete against a
// node with the StandardAuthorizer; explain names the ACL or the default
// that decided; a create without a principal is a usage error.
func TestACLCommands(t *testing.T) {
	c := brokertest.New(t,
		brokertest.Config("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"),
		brokertest.Config("super.users", "User:ANONYMOUS"))
	n := c.Nodes()[0]
	b, admin := n.Addr(), "--admin="+n.AdminAddr()
	mustRun(t, b, "", "acl", "create", "--allow", "User:alice", "--operation", "WRITE", "--topic", "orders", "--prefixed")
	mustRun(t, b, "", "acl", "create", "--deny", "User:alice", "--operation", "WRITE", "--topic", "orders-secret", "--host", "10.0.0.0/8")
	r := mustRun(t, b, "", "acl", "list")
	if got := lines(r.stdout); len(got) != 3 || !strings.HasPrefix(got[0], "RESOURCE") ||
		!strings.Contains(got[1], "TOPIC:LITERAL:orders-secret") || !strings.Contains(got[1], "10.0.0.0/8") ||
		!strings.Contains(got[2], "TOPIC:PREFIXED:orders") || !strings.Contains(got[2], "ALLOW") {
		t.Fatalf("acl list:\n%s", r.stdout)
	}

	r = mustRun(t, b, "", admin, "acl", "explain", "--principal", "User:alice", "--operation", "WRITE", "--topic", "orders-eu")
	if !strings.HasPrefix(r.stdout, "ALLOWED: User:alice WRITE on TOPIC orders-eu") || !strings.Contains(r.stdout, "TOPIC:PREFIXED:orders allows") {
		t.Errorf("explain of an allowed write:\n%s", r.stdout)
	}
	r = mustRun(t, b, "", admin, "--format", "json", "acl", "explain", "--principal", "User:alice", "--operation", "WRITE", "--topic", "orders-secret", "--host", "10.1.2.3")
	var ex nodeapi.ACLExplanation
	if err := json.Unmarshal([]byte(r.stdout), &ex); err != nil {
		t.Fatal(err)
	}
	if ex.Allowed || ex.Rule != "MatchingAcl" || ex.ACL == nil || ex.ACL.Permission != "DENY" || !ex.Authorizer {
		t.Errorf("explain of a denied write: %+v", ex)
	}
	r = mustRun(t, b, "", admin, "acl", "explain", "--principal", "User:bob", "--operation", "READ", "--group", "g")
	if !strings.HasPrefix(r.stdout, "DENIED") || !strings.Contains(r.stdout, "allow.everyone.if.no.acl.found is false") {
		t.Errorf("explain of a resource no ACL names:\n%s", r.stdout)
	}

	if r := klogRun(t, b, "", "acl", "delete", "--topic", "orders", "--prefixed"); r.code != 1 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("acl delete without --yes: exit %d, stderr %q", r.code, r.stderr)
	}
	r = mustRun(t, b, "", "--format", "json", "acl", "delete", "--topic", "orders", "--prefixed", "--yes")
	var doc aclsJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.ACLs) != 1 || doc.ACLs[0].ResourceName != "orders" || doc.ACLs[0].PatternType != "PREFIXED" {
		t.Fatalf("acl delete: %s", r.stdout)
	}
	if got := lines(mustRun(t, b, "", "acl", "list").stdout); len(got) != 2 {
		t.Errorf("acl list after the delete: %q", got)
	}
	if r := klogRun(t, b, "", "acl", "create", "--operation", "READ", "--topic", "t"); r.code != 2 || !strings.Contains(r.stderr, "--allow or --deny") {
		t.Errorf("acl create without a principal: exit %d, stderr %q", r.code, r.stderr)
	}
}
