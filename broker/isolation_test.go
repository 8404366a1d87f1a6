package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/internal/testkit"
)

// isolationCluster is three nodes with replication tuned for quick
// isolation tests (quick fetch backoffs, min.insync.replicas 2, broker
// sessions of sessionMs: short, an isolated node is fenced fast) and a
// topic of one partition with replication factor 3. leo is a replica's
// log end offset on node i.
func isolationCluster(t *testing.T, ctx context.Context, sessionMs, topic string) (q *cluster, mt kmsg.MetadataResponseTopic, leo func(i int32) int64) {
	q = newQuorum(t, 3, func(_ int, cfg *broker.Config) {
		cfg.Configs["replica.fetch.backoff.ms"] = "20"
		cfg.Configs["min.insync.replicas"] = "2"
		cfg.Configs["broker.session.timeout.ms"] = sessionMs
	})
	mt = replicatedTopic(t, ctx, q.nodes, topic)
	return q, mt, func(i int32) int64 { return q.nodes[i].PartitionForTest(topic, 0).LogEndOffset() }
}

// TestIsolatedLeader: Node.Isolate cuts replication both ways, not only
// the quorum. The isolated leader's followers get none of what it takes
// after the cut, so an acks=-1 produce to it is not acknowledged
// (REQUEST_TIMED_OUT) while its clients, old connections and new, are
// still served; the other two elect a new leader that takes acks=-1
// produces. Healed, the old leader follows the new one: it truncates the
// tail only it had (KIP-101), rejoins the ISR, and all three logs end
// byte for byte the same.
func TestIsolatedLeader(t *testing.T) {
	ctx := testkit.Context(t)
	const topic = "isolated"
	q, mt, leo := isolationCluster(t, ctx, "500", topic)
	p := mt.Partitions[0]
	old := p.Leader
	raw := dialRaw(t, q.nodes[old].Advertised())
	if got := produceTo(t, raw, mt, -1, 10000, rawBatch("before")); got.ErrorCode != 0 {
		t.Fatalf("acks=-1 produce before the cut: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	end := leo(old)

	q.nodes[old].Isolate()
	got := produceTo(t, raw, mt, -1, 1000, rawBatch("x", "y", "z"))
	if got.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("acks=-1 produce to the isolated leader: %v, want REQUEST_TIMED_OUT", kerr.ErrorForCode(got.ErrorCode))
	}
	fresh := dialRaw(t, q.nodes[old].Advertised())
	if got := produceTo(t, fresh, mt, 1, 1000, rawBatch("acks=1")); got.ErrorCode != 0 {
		t.Fatalf("acks=1 produce on a new client connection to the isolated node: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	var others []int32
	for _, id := range p.Replicas {
		if id != old {
			others = append(others, id)
			if got := leo(id); got != end {
				t.Fatalf("follower %d of the isolated leader ends at %d, want %d: it got records after the cut", id, got, end)
			}
		}
	}
	if got := leo(old); got != end+4 {
		t.Fatalf("the isolated leader ends at %d, want %d", got, end+4)
	}

	var leader int32
	testkit.WaitFor(t, "a new leader elected by the other two", func() (bool, string) {
		m, err := partitionMetadata(ctx, nodeClient(t, q.nodes[others[0]]), topic)
		if err != nil {
			return false, err.Error()
		}
		leader = m.Partitions[0].Leader
		return leader >= 0 && leader != old && q.nodes[leader].PartitionForTest(topic, 0).IsLeader(), fmt.Sprintf("leader %d", leader)
	})
	next := dialRaw(t, q.nodes[leader].Advertised())
	if got := produceTo(t, next, mt, -1, 10000, rawBatch("after")); got.ErrorCode != 0 || got.BaseOffset != end {
		t.Fatalf("acks=-1 produce to the new leader %d: %v at %d, want offset %d", leader, kerr.ErrorForCode(got.ErrorCode), got.BaseOffset, end)
	}

	q.nodes[old].Heal()
	testkit.WaitFor(t, "the old leader back in the ISR at the new leader's log end", func() (bool, string) {
		m, err := partitionMetadata(ctx, nodeClient(t, q.nodes[leader]), topic)
		if err != nil {
			return false, err.Error()
		}
		return leo(old) == end+1 && len(m.Partitions[0].ISR) == 3, fmt.Sprintf("old leader ends at %d (want %d), ISR %v", leo(old), end+1, m.Partitions[0].ISR)
	})
	for i := range q.nodes {
		q.stop(i)
	}
	want := segments(t, q.cfgs[leader].DataDir, topic)
	for _, id := range p.Replicas {
		got := segments(t, q.cfgs[id].DataDir, topic)
		if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
			t.Fatalf("node %d has files %v, the leader %v", id, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Errorf("%s of node %d (%d bytes) differs from the new leader's (%d bytes)", name, id, len(got[name]), len(b))
			}
		}
	}
}

// TestIsolatedFollower: an isolated follower's fetcher cannot reach its
// leader, so it gets nothing and an acks=-1 produce waiting for it (still
// in the ISR: neither fenced nor lagging long enough to be dropped) is not
// acknowledged; healed, it catches up.
func TestIsolatedFollower(t *testing.T) {
	ctx := testkit.Context(t)
	q, mt, leo := isolationCluster(t, ctx, "60000", "isolated-follower")
	p := mt.Partitions[0]
	f := quietFollower(t, ctx, q, p)
	raw := dialRaw(t, q.nodes[p.Leader].Advertised())

	q.nodes[f].Isolate()
	got := produceTo(t, raw, mt, -1, 1000, rawBatch("a", "b"))
	if got.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("acks=-1 produce with follower %d isolated and the ISR at %v: %v, want REQUEST_TIMED_OUT", f, p.ISR, kerr.ErrorForCode(got.ErrorCode))
	}
	if got := leo(f); got != 0 {
		t.Fatalf("the isolated follower %d ends at %d, want 0", f, got)
	}
	q.nodes[f].Heal()
	end := leo(p.Leader)
	testkit.WaitFor(t, "the healed follower caught up", func() (bool, string) {
		return leo(f) == end, fmt.Sprintf("follower %d at %d, leader at %d", f, leo(f), end)
	})
}
