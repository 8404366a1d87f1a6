package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// produceRolls writes records of 100-byte values to partition 0 of topic,
// one batch each, enough for a few rolls of 1024-byte segments.
func produceRolls(t *testing.T, bootstrap, topic string) {
	t.Helper()
	for i := range 30 {
		produceRecords(t, bootstrap, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i%3), Value: []byte(strings.Repeat("v", 100))})
	}
}

// TestEventsCommand: klog events prints every node's events merged by
// time, one line each, in text and as JSON lines.
func TestEventsCommand(t *testing.T) {
	c := brokertest.StartCluster(t, 2)
	n0, n1 := c.Node(0), c.Node(1)
	b := n0.Addr()
	mustRun(t, b, "", "topic", "create", "ev", "-p", "1", "-r", "2", "-c", "internal.segment.bytes=1024")
	produceRolls(t, b, "ev")
	admin := "--admin=" + n0.AdminAddr() + "," + n1.AdminAddr()
	// Each replica tells its role once it applied the topic's metadata.
	var r result
	testkit.WaitFor(t, "both replicas' leader changes", func() (bool, string) {
		r = mustRun(t, b, "", admin, "events")
		return strings.Count(r.stdout, "leader_change  ev/0  ") == 2, r.stdout
	})
	for _, want := range []string{"role=leader", "role=follower", "  segment_roll   ev/0  new_base="} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	var prev string
	for _, l := range lines(r.stdout) {
		if !strings.Contains(l, "  node 0  ") && !strings.Contains(l, "  node 1  ") {
			t.Errorf("line without node: %q", l)
		}
		if ts := l[:24]; ts < prev {
			t.Errorf("%q before %q: not merged by time", ts, prev)
		} else {
			prev = ts
		}
	}

	r = mustRun(t, b, "", admin, "--format", "json", "events")
	nodes := map[int32]bool{}
	for _, l := range lines(r.stdout) {
		var e nodeapi.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq == 0 || e.Kind == "" {
			t.Fatalf("JSON line %q: %+v %v", l, e, err)
		}
		nodes[e.NodeID] = true
	}
	if len(nodes) != 2 {
		t.Fatalf("JSON lines of nodes %v:\n%s", nodes, r.stdout)
	}
}

// TestEventsFollow: klog events --follow prints the events as they
// happen, across a restart of the node (its events start again, and
// stderr says so), until interrupted, which is a clean exit.
func TestEventsFollow(t *testing.T) {
	n := brokertest.Start(t, brokertest.Config("log.cleaner.enable", "false"))
	b := n.Addr()
	mustRun(t, b, "", "topic", "create", "cmp", "-p", "1", "-c", "cleanup.policy=compact", "-c", "internal.segment.bytes=1024")
	admin := "--admin=" + n.AdminAddr()

	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	var stdout, stderr testkit.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-b", b, admin, "events", "--follow"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
	}()
	testkit.WaitFor(t, "the topic's leader change", func() (bool, string) {
		return strings.Contains(stdout.String(), "leader_change  cmp/0  leader=0 leader_epoch=0 old_leader=-1 role=leader\n"), stdout.String()
	})
	produceRolls(t, b, "cmp")
	mustRun(t, b, "", admin, "topic", "compact", "cmp")
	testkit.WaitFor(t, "the rolls and the cleaning", func() (bool, string) {
		out := stdout.String()
		return strings.Contains(out, "  segment_roll   cmp/0  ") && strings.Contains(out, "  cleaning       cmp/0  ") &&
			strings.Contains(out, " trigger=request\n"), out
	})

	before := strings.Count(stdout.String(), "leader_change  cmp/0  ")
	n.Restart()
	testkit.WaitFor(t, "the restarted node's events", func() (bool, string) {
		return strings.Count(stdout.String(), "leader_change  cmp/0  ") > before &&
			strings.Contains(stderr.String(), "node 0 ("+n.AdminAddr()+") restarted: its events start again"), stdout.String() + stderr.String()
	})

	cancel()
	select {
	case c := <-code:
		if c != exitOK {
			t.Fatalf("exit %d after an interrupt; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("klog events --follow did not stop when interrupted")
	}
}

// TestEventsErrors: a node without admin API fails the command; an
// argument is a usage error.
func TestEventsErrors(t *testing.T) {
	n := brokertest.Start(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--admin=127.0.0.1:1", "events"}, exitFailure, "events of 127.0.0.1:1: admin API 127.0.0.1:1"},
		{[]string{"--admin=" + n.AdminAddr() + ",127.0.0.1:1", "events"}, exitFailure, "events of 1 of 2 nodes: some items failed"},
		{[]string{"--admin=" + n.AdminAddr(), "events", "extra"}, exitUsage, "unknown command"},
	} {
		r := klogRun(t, n.Addr(), "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("klog %q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.msg)
		}
	}
}
