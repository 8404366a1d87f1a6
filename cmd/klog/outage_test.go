//go:build linux

package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestOutageOnRealCluster: against a real klog up -n 3 with two of its
// nodes killed, klog produce says what it waits for and gives up at its
// --timeout naming the record, and klog topic describe still answers what
// the node left can tell, marking the rest: the user sees an explanation,
// never silence.
func TestOutageOnRealCluster(t *testing.T) {
	stateDir := t.TempDir()
	info := upDetached(t, stateDir, "-n", "3", "--any-port", "--data-dir", t.TempDir(), "--seed-topic", "orders:3:3")
	defer stateRun(t, stateDir, "down")
	b := strings.Join(info.Brokers, ",")
	if r := klogRun(t, b, "one\n", "produce", "orders", "-p", "0", "-q"); r.code != 0 {
		t.Fatalf("produce before the outage: exit %d %s", r.code, r.stderr)
	}
	for _, id := range []string{"1", "2"} {
		if r := nodeRun(t, b, stateDir, "kill", id); r.code != 0 {
			t.Fatalf("klog node kill %s: exit %d %s", id, r.code, r.stderr)
		}
	}
	r := klogRun(t, info.Brokers[0], "two\n", "produce", "orders", "-p", "0", "--timeout", "5s")
	if r.code != 1 || !strings.Contains(r.stderr, "klog: waiting ") || !strings.Contains(r.stderr, "not delivered within --timeout 5s") || !strings.Contains(r.stderr, "orders/0 record 1") {
		t.Fatalf("produce during the outage: exit %d, want 1 with a wait line and the undelivered record\n%s", r.code, r.stderr)
	}
	// Node 0 still answers for orders/2, which it leads; the partitions
	// led by the killed nodes cannot be read: a partial answer.
	r = klogRun(t, info.Brokers[0], "", "topic", "describe", "orders")
	if r.code != 3 || !strings.Contains(r.stdout, "REPLICATION-FACTOR") || !strings.Contains(r.stdout, "?") || !strings.Contains(r.stderr, "klog: ? for orders/") {
		t.Fatalf("topic describe during the outage: exit %d, want 3 with the table and ? where it could not read\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestConsumeRidesThroughQuorumLossOnRealCluster is
// TestConsumeGroupRidesThroughQuorumLoss against a real klog up -n 3, its
// nodes killed and started by klog node.
func TestConsumeRidesThroughQuorumLossOnRealCluster(t *testing.T) {
	stateDir := t.TempDir()
	info := upDetached(t, stateDir, "-n", "3", "--any-port", "--data-dir", t.TempDir())
	defer stateRun(t, stateDir, "down")
	b := strings.Join(info.Brokers, ",")
	node := func(op string) func(int32) {
		return func(id int32) {
			if r := nodeRun(t, b, stateDir, op, strconv.Itoa(int(id))); r.code != 0 {
				t.Fatalf("klog node %s %d: exit %d %s", op, id, r.code, r.stderr)
			}
		}
	}
	ridesThroughQuorumLoss(t, b, node("kill"), node("start"))
}
