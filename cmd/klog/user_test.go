package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
)

// describedUsers is every user's credentials as the cluster describes
// them, "user mechanism/iterations", read independently of klog user.
func describedUsers(t *testing.T, b string) []string {
	t.Helper()
	ds, err := testAdmin(t, b).DescribeUserSCRAMs(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds.Sorted() {
		for _, c := range d.CredInfos {
			out = append(out, d.User+" "+c.Mechanism.String()+"/"+strconv.Itoa(int(c.Iterations)))
		}
	}
	return out
}

func TestUserCreateListDelete(t *testing.T) {
	b := startBroker(t)
	r := mustRun(t, b, "", "user", "create", "alice", "--password", "alice-secret")
	if got := strings.Fields(lines(r.stdout)[1]); !slices.Equal(got, []string{"alice", "SCRAM-SHA-512", "8192", "SET"}) {
		t.Errorf("create output:\n%s", r.stdout)
	}
	mustRun(t, b, "bob-secret\n", "user", "create", "bob", "--password-file", "-", "--mechanism", "scram-sha-256", "--iterations", "4096")
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("carol-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, b, "", "user", "create", "alice", "--password-file", file, "--mechanism", "SCRAM-SHA-256", "--iterations", "16384")
	want := []string{"alice SCRAM-SHA-256/16384", "alice SCRAM-SHA-512/8192", "bob SCRAM-SHA-256/4096"}
	if got := describedUsers(t, b); !slices.Equal(got, want) {
		t.Fatalf("described %q, want %q", got, want)
	}

	r = mustRun(t, b, "", "user", "list")
	var rows []string
	for _, l := range lines(r.stdout)[1:] {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	if wantRows := []string{"alice SCRAM-SHA-256 16384", "alice SCRAM-SHA-512 8192", "bob SCRAM-SHA-256 4096"}; !slices.Equal(rows, wantRows) {
		t.Errorf("list:\n%s", r.stdout)
	}
	r = mustRun(t, b, "", "user", "list", "bob", "--format", "json")
	var doc userListJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Version != userJSONVersion || len(doc.Users) != 1 ||
		doc.Users[0].User != "bob" || len(doc.Users[0].Credentials) != 1 || doc.Users[0].Credentials[0].Iterations != 4096 {
		t.Errorf("list JSON: %v\n%s", err, r.stdout)
	}
	if r := klogRun(t, b, "", "user", "list", "nobody"); r.code != exitFailure || !strings.Contains(r.stderr, `user "nobody": user has no SCRAM credential`) {
		t.Errorf("list of an unknown user: exit %d, stderr %q", r.code, r.stderr)
	}

	if got := lines(mustRun(t, b, "", "__complete", "user", "delete", "").stdout); !slices.Equal(got, []string{"alice", "bob", ":4"}) {
		t.Errorf("complete delete = %q", got)
	}
	if got := lines(mustRun(t, b, "", "__complete", "user", "list", "bob", "a").stdout); !slices.Equal(got, []string{"alice", ":4"}) {
		t.Errorf("complete list after bob = %q", got)
	}

	// Not a terminal, no --yes: nothing happens.
	if r := klogRun(t, b, "", "user", "delete", "alice"); r.code != exitFailure || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("delete without --yes: exit %d, stderr %q", r.code, r.stderr)
	}
	r = mustRun(t, b, "", "user", "delete", "alice", "--mechanism", "SCRAM-SHA-512", "-y")
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "alice SCRAM-SHA-512 DELETED") {
		t.Errorf("delete output:\n%s", r.stdout)
	}
	mustRun(t, b, "", "user", "delete", "bob", "-y")
	if got := describedUsers(t, b); !slices.Equal(got, want[:1]) {
		t.Errorf("after deletes: %q", got)
	}
	if r := klogRun(t, b, "", "user", "delete", "bob", "-y"); r.code != exitFailure || !strings.Contains(r.stderr, "no SCRAM credential") {
		t.Errorf("delete of a deleted user: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestUserCreateUsage(t *testing.T) {
	b := startBroker(t)
	for _, args := range [][]string{
		{"user", "create", "alice"}, // no password, no terminal
		{"user", "create", "alice", "--password", "x", "--mechanism", "PLAIN"},
		{"user", "create", "alice", "--password", "x", "--iterations", "4095"},
		{"user", "create", "alice", "--password", "x", "--iterations", "16385"},
		{"user", "create", "alice", "--password", "x", "--password-file", "-"},
		{"user", "create", "--password", "x"},
		{"user", "delete", "alice", "--mechanism", "SCRAM-SHA-1", "-y"},
	} {
		if r := klogRun(t, b, "", args...); r.code != exitUsage {
			t.Errorf("klog %q: exit %d, want %d; stderr %q", args, r.code, exitUsage, r.stderr)
		}
	}
	if r := klogRun(t, b, "\n", "user", "create", "alice", "--password-file", "-"); r.code != exitUsage || !strings.Contains(r.stderr, "empty") {
		t.Errorf("an empty password: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := describedUsers(t, b); len(got) != 0 {
		t.Errorf("a refused create made %q", got)
	}
}
