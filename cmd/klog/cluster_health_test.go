//go:build linux

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClusterHealth: klog cluster health exits 0 on a cluster of three
// whose nodes all run, and 1 naming the node once one is killed; with
// --wait it returns 0 once the node is back.
func TestClusterHealth(t *testing.T) {
	stateDir := t.TempDir()
	info := upDetached(t, stateDir, "-n", "3", "--any-port", "--data-dir", t.TempDir(), "--seed-topic", "replicated:3:3")
	b := info.Brokers[0]
	if r := klogRun(t, b, "", "cluster", "health"); r.code != 0 || !strings.Contains(r.stdout, "healthy") {
		t.Fatalf("health of a healthy cluster: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := nodeRun(t, b, stateDir, "kill", "1"); r.code != 0 {
		t.Fatalf("klog node kill 1: exit %d %s", r.code, r.stderr)
	}
	// Until the quorum has fenced it, node 1 is listed and does not
	// answer; after, it is a replica missing from the metadata. The
	// supervisor's notice of its exit makes either as likely.
	r := klogRun(t, b, "", "cluster", "health")
	if r.code != 1 || !strings.Contains(r.stdout, "node 1 ("+info.Brokers[1]+") does not answer") && !strings.Contains(r.stdout, "node 1 is a replica but not in the metadata") {
		t.Fatalf("health with node 1 killed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = klogRun(t, b, "", "cluster", "health", "--wait", "--timeout", "300ms", "--format", "json")
	var h struct {
		Healthy  bool
		Problems []string
	}
	if r.code != 1 || json.Unmarshal([]byte(r.stdout), &h) != nil || h.Healthy || len(h.Problems) == 0 {
		t.Fatalf("health --wait with node 1 killed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := nodeRun(t, b, stateDir, "start", "1"); r.code != 0 {
		t.Fatalf("klog node start 1: exit %d %s", r.code, r.stderr)
	}
	if r := klogRun(t, b, "", "cluster", "health", "--wait", "--timeout", "60s"); r.code != 0 {
		t.Fatalf("health --wait after node 1 is back: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	stateRun(t, stateDir, "down")
}
