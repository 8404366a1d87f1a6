package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestQuotaCommands sets, lists (text, JSON, filtered) and deletes client
// quotas, and refuses what it cannot do.
func TestQuotaCommands(t *testing.T) {
	b := startBroker(t)
	mustRun(t, b, "", "quota", "set", "--user", "alice", "--client-id", "app", "producer_byte_rate=1048576", "request_percentage=12.5")
	mustRun(t, b, "", "quota", "set", "--default-client-id", "consumer_byte_rate=2097152")
	r := mustRun(t, b, "", "quota", "set", "--default-user", "producer_byte_rate=100")
	if got := strings.TrimSpace(r.stdout); got != "user=<default>  set producer_byte_rate=100" {
		t.Errorf("set printed %q", got)
	}

	r = mustRun(t, b, "", "quota", "list")
	want := []string{
		"ENTITY                     KEY                 VALUE",
		"client-id=<default>        consumer_byte_rate  2097152",
		"user=<default>             producer_byte_rate  100",
		"user=alice, client-id=app  producer_byte_rate  1048576",
		"user=alice, client-id=app  request_percentage  12.5",
	}
	if got := lines(r.stdout); !slices.Equal(got, want) {
		t.Errorf("list:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r = mustRun(t, b, "", "quota", "list", "--user", "alice", "--format", "json")
	var doc quotaListJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if doc.Version != 1 || len(doc.Quotas) != 1 || doc.Quotas[0].Entity.String() != "user=alice, client-id=app" || doc.Quotas[0].Values["producer_byte_rate"] != 1048576 {
		t.Errorf("list --user alice --format json: %s", r.stdout)
	}
	if r := mustRun(t, b, "", "quota", "list", "--user", "alice", "--strict"); len(lines(r.stdout)) != 1 {
		t.Errorf("list --user alice --strict: %q", r.stdout)
	}

	// The broker's refusal, and usage errors.
	if r := klogRun(t, b, "", "quota", "set", "--user", "bob", "no_such_rate=1"); r.code != 1 || !strings.Contains(r.stderr, "Invalid configuration key no_such_rate") {
		t.Errorf("set of an unknown key: exit %d, %q", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"quota", "set", "producer_byte_rate=1"},
		{"quota", "set", "--user", "a", "producer_byte_rate"},
		{"quota", "set", "--user", "a", "--default-user", "producer_byte_rate=1"},
		{"quota", "delete"},
	} {
		if r := klogRun(t, b, "", args...); r.code != 2 {
			t.Errorf("klog %q: exit %d, want 2; %s", args, r.code, r.stderr)
		}
	}

	// Delete is destructive: without a terminal or --yes nothing goes.
	if r := klogRun(t, b, "", "quota", "delete", "--user", "alice", "--client-id", "app"); r.code != 1 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("delete without --yes: exit %d, %q", r.code, r.stderr)
	}
	mustRun(t, b, "", "quota", "delete", "--user", "alice", "--client-id", "app", "request_percentage", "--yes")
	r = mustRun(t, b, "", "quota", "delete", "--default-user", "--yes")
	if got := strings.TrimSpace(r.stdout); got != "user=<default>  removed producer_byte_rate" {
		t.Errorf("delete printed %q", got)
	}
	r = mustRun(t, b, "", "quota", "list")
	if got := lines(r.stdout); len(got) != 3 || !strings.Contains(got[2], "producer_byte_rate") {
		t.Errorf("after deletes:\n%s", r.stdout)
	}
}
