package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/klogdev/klog/inspect"
)

// TestFeatureCommands lists the feature flags, lowers group.version
// (asked for --yes first), raises it again, and shows the broker's
// refusals with its message.
func TestFeatureCommands(t *testing.T) {
	b := startBroker(t)
	r := mustRun(t, b, "", "feature", "list")
	want := []string{
		"FEATURE                           SUPPORTED  FINALIZED",
		"eligible.leader.replicas.version  0-0        0",
		"group.version                     0-1        1",
		"kraft.version                     0-0        0",
		"metadata.version                  7-33       33",
		"share.version                     0-1        1",
		"streams.version                   0-0        0",
		"transaction.version               0-2        2",
	}
	if got := lines(r.stdout); !slices.Equal(got, want) {
		t.Errorf("list:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if r := klogRun(t, b, "", "feature", "downgrade", "group.version=0"); r.code != 1 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("downgrade without --yes off a terminal: exit %d, %q", r.code, r.stderr)
	}
	if r := mustRun(t, b, "", "feature", "downgrade", "group.version=0", "--dry-run"); strings.TrimSpace(r.stdout) != "group.version  can be downgraded to 0" {
		t.Errorf("downgrade --dry-run printed %q", r.stdout)
	}
	if r := mustRun(t, b, "", "feature", "downgrade", "group.version=0", "--yes"); strings.TrimSpace(r.stdout) != "group.version  downgraded to 0" {
		t.Errorf("downgrade printed %q", r.stdout)
	}
	r = mustRun(t, b, "", "feature", "list", "--format", "json")
	var doc featureListJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	i := slices.IndexFunc(doc.Features.Features, func(f inspect.Feature) bool { return f.Name == "group.version" })
	if doc.Version != 1 || doc.Epoch <= 0 || i < 0 || doc.Features.Features[i].Finalized != 0 {
		t.Errorf("list --format json after the downgrade: %s", r.stdout)
	}

	if r := klogRun(t, b, "", "feature", "upgrade", "transaction.version=3"); r.code != 1 ||
		!strings.Contains(r.stderr, "INVALID_UPDATE_VERSION") || !strings.Contains(r.stderr, "only supports versions 0-2") {
		t.Errorf("upgrade past the range: exit %d, %q", r.code, r.stderr)
	}
	if r := klogRun(t, b, "", "feature", "downgrade", "transaction.version=1", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "the level stays 2") {
		t.Errorf("downgrade of transaction.version: exit %d, %q", r.code, r.stderr)
	}
	if r := mustRun(t, b, "", "feature", "upgrade", "group.version=1"); strings.TrimSpace(r.stdout) != "group.version  upgraded to 1" {
		t.Errorf("upgrade printed %q", r.stdout)
	}
	for _, args := range [][]string{
		{"feature", "upgrade"},
		{"feature", "upgrade", "group.version"},
		{"feature", "upgrade", "group.version=x"},
		{"feature", "upgrade", "group.version=1", "group.version=1"},
	} {
		if r := klogRun(t, b, "", args...); r.code != 2 {
			t.Errorf("klog %q: exit %d, want 2; %s", args, r.code, r.stderr)
		}
	}
}
