package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestClockAdvance: klog clock advance moves the clock of every node of a
// cluster and retention applies at once; klog clock show shows it; a
// duration that is not one, or negative, is a usage error.
func TestClockAdvance(t *testing.T) {
	c := brokertest.StartCluster(t, 2)
	n0, n1 := c.Node(0), c.Node(1)
	b := n0.Addr()
	admin := "--admin=" + n0.AdminAddr() + "," + n1.AdminAddr()
	mustRun(t, b, "", "topic", "create", "aging", "-p", "1", "-r", "2", "-c", "internal.segment.bytes=1024", "-c", "retention.ms=3600000")
	produceRolls(t, b, "aging")
	consumed := func() int { return len(lines(mustRun(t, b, "", "consume", "aging", "-e").stdout)) }
	if got := consumed(); got != 30 {
		t.Fatalf("consumed %d records, want 30", got)
	}
	r := mustRun(t, b, "", admin, "clock", "advance", "2h")
	if got := lines(r.stdout); len(got) != 3 || !strings.HasPrefix(got[0], "NODE  NOW") ||
		!strings.HasPrefix(got[1], "0     ") || !strings.HasSuffix(got[1], "  2h0m0s") || !strings.HasSuffix(got[2], "  2h0m0s") {
		t.Fatalf("clock advance:\n%s", r.stdout)
	}
	// The follower's log start follows the leader's with its next fetch.
	testkit.WaitFor(t, "retention on aging", func() (bool, string) {
		got := consumed()
		return got > 0 && got < 30, strings.TrimSpace(r.stdout)
	})
	r = mustRun(t, b, "", admin, "--format", "json", "clock", "show")
	var doc clockJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != 1 || len(doc.Nodes) != 2 {
		t.Fatalf("clock show: %s", r.stdout)
	}
	for i, n := range doc.Nodes {
		if n.NodeID != int32(i) || n.Offset() != 2*time.Hour || n.Now.Sub(time.Now().Add(2*time.Hour)).Abs() > time.Minute {
			t.Errorf("clock show, node %d: %+v", i, n)
		}
	}
	if r.stderr != "" {
		t.Errorf("clock show of clocks advanced alike: stderr %q", r.stderr)
	}
	mustRun(t, b, "", "--admin="+n1.AdminAddr(), "clock", "advance", "1m")
	if r := mustRun(t, b, "", admin, "clock", "show"); !strings.Contains(r.stderr, "not advanced alike") {
		t.Errorf("clock show of clocks 1m apart: stderr %q", r.stderr)
	}
	for _, args := range [][]string{{"soon"}, {"--", "-1h"}} {
		if r := klogRun(t, b, "", append([]string{admin, "clock", "advance"}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "want a positive duration") {
			t.Errorf("clock advance %s: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}
