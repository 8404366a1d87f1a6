package brokertest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// snapshotState is what a test checks a restored cluster kept.
type snapshotState struct {
	ends, stable int64 // high watermark and last stable offset of tx[0]
	orders       int64 // records in orders
	committed    []string
	offset       int64 // billing's committed offset of orders[0]
	clusterID    string
}

// stateOf reads c's snapshotState.
func stateOf(ctx context.Context, t *testing.T, c *brokertest.Cluster) snapshotState {
	t.Helper()
	adm := kadm.NewClient(c.Client())
	var s snapshotState
	ends, err := adm.ListEndOffsets(ctx, "tx")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := ends.Lookup("tx", 0)
	s.ends = o.Offset
	orders, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	orders.Each(func(o kadm.ListedOffset) { s.orders += o.Offset })
	stable, err := adm.ListCommittedOffsets(ctx, "tx")
	if err != nil {
		t.Fatal(err)
	}
	o, _ = stable.Lookup("tx", 0)
	s.stable = o.Offset
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	s.committed = readCommitted(ctx, t, c, s.stable)
	fetched, err := adm.FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := fetched.Lookup("orders", 0); ok {
		s.offset = f.At
	}
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.clusterID = meta.Cluster
	return s
}

// readCommitted reads tx[0] with read_committed up to offset until.
func readCommitted(ctx context.Context, t *testing.T, c *brokertest.Cluster, until int64) []string {
	t.Helper()
	cl := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"tx": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cl.Close()
	var got []string
	var at int64
	for at < until {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if n := len(p.Records); n > 0 {
				at = p.Records[n-1].Offset + 1
			}
			at = max(at, p.LastStableOffset)
		})
	}
	return got
}

// fillForSnapshot leaves c with records in orders, an offset committed
// for group billing, and in tx a committed and an open transaction.
func fillForSnapshot(ctx context.Context, t testing.TB, c *brokertest.Cluster) *kgo.Client {
	t.Helper()
	fillForReset(ctx, t, c, "orders", "billing", 7)
	if _, err := kadm.NewClient(c.Client()).CreateTopic(ctx, 1, -1, nil, "tx"); err != nil {
		t.Fatal(err)
	}
	// The open transaction must stay open for the whole test, in the
	// original and in every copy: its timeout (franz-go's default is 40 s,
	// which a busy machine's test overruns) is longer than the test can
	// last, so no coordinator aborts it on its own.
	txn := c.Client(kgo.TransactionalID("snap"), kgo.DefaultProduceTopic("tx"), kgo.TransactionTimeout(10*time.Minute))
	for i, commit := range []bool{true, false} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "txn%d-%d", i, j)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if commit {
			if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}
	return txn
}

func TestSnapshotRestore(t *testing.T) {
	for _, nodes := range []int{1, 3} {
		t.Run(fmt.Sprintf("nodes-%d", nodes), func(t *testing.T) {
			ctx := testkit.Context(t)
			c := brokertest.New(t, brokertest.Nodes(nodes))
			open := fillForSnapshot(ctx, t, c)
			before := stateOf(ctx, t, c)
			if before.stable >= before.ends || before.offset != 7 || before.orders != 7 || !slices.Equal(before.committed, []string{"txn0-0", "txn0-1", "txn0-2"}) {
				t.Fatalf("before the snapshot: %+v", before)
			}

			snap := c.Snapshot()
			a := brokertest.Restore(t, snap)
			b := brokertest.Restore(t, snap)
			// A leader started on a copy of its log serves the high
			// watermark it kept, which can be behind its log until its
			// followers fetch again (as Kafka's leader does): wait for
			// the state, which a copy that lost or gained records never
			// reaches.
			for name, r := range map[string]*brokertest.Cluster{"original": c, "first restore": a, "second restore": b} {
				testkit.WaitFor(t, name+" to hold the snapshot's state", func() (bool, string) {
					got := stateOf(ctx, t, r)
					return equalState(got, before), fmt.Sprintf("%+v, want %+v", got, before)
				})
			}

			// The open transaction is open in the restored cluster: a new
			// producer of its transactional id aborts it and commits its
			// own. The original and the other copy do not see it.
			txn := a.Client(kgo.TransactionalID("snap"), kgo.DefaultProduceTopic("tx"))
			if err := txn.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
			// EndTxn answers once the commit is decided, as Kafka's does;
			// its marker is written after, and only then is it stable.
			waitStable(ctx, t, a, "tx")
			after := stateOf(ctx, t, a)
			if want := []string{"txn0-0", "txn0-1", "txn0-2", "after"}; !slices.Equal(after.committed, want) {
				t.Fatalf("restored cluster after a new transaction reads %v, want %v", after.committed, want)
			}
			for name, r := range map[string]*brokertest.Cluster{"original": c, "second restore": b} {
				if got := stateOf(ctx, t, r); !equalState(got, before) {
					t.Fatalf("%s changed with the first restore: %+v, want %+v", name, got, before)
				}
			}
			// The original's producer still holds its transaction.
			if err := open.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// waitStable waits until topic's partition 0 has no open transaction:
// its last stable offset has reached its high watermark.
func waitStable(ctx context.Context, t *testing.T, c *brokertest.Cluster, topic string) {
	t.Helper()
	adm := kadm.NewClient(c.Client())
	testkit.WaitFor(t, "the last stable offset to reach the high watermark", func() (bool, string) {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		stable, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		e, _ := ends.Lookup(topic, 0)
		s, _ := stable.Lookup(topic, 0)
		return e.Err == nil && s.Err == nil && s.Offset == e.Offset, fmt.Sprintf("stable %d, high watermark %d", s.Offset, e.Offset)
	})
}

func equalState(a, b snapshotState) bool {
	return a.ends == b.ends && a.orders == b.orders && a.stable == b.stable && a.offset == b.offset && a.clusterID == b.clusterID && slices.Equal(a.committed, b.committed)
}

// Snapshot and Restore of a cluster holding two topics, a committed
// offset and an open transaction, for one and three nodes (stopping a
// restored cluster is not timed); BenchmarkReset's new-N is a fresh
// empty cluster's time:
//
//	go test -run - -bench 'Snapshot|Restore' -benchtime 20x ./broker/brokertest/
func BenchmarkRestore(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		ctx := testkit.Context(b)
		c := brokertest.New(b, brokertest.Nodes(nodes))
		fillForSnapshot(ctx, b, c)
		b.Run(fmt.Sprintf("snapshot-%d", nodes), func(b *testing.B) {
			for b.Loop() {
				c.Snapshot()
			}
		})
		snap := c.Snapshot()
		b.Run(fmt.Sprintf("restore-%d", nodes), func(b *testing.B) {
			for b.Loop() {
				r := brokertest.Restore(b, snap)
				b.StopTimer()
				for _, n := range r.Nodes() {
					n.Kill()
				}
				b.StartTimer()
			}
		})
	}
}

// TestSnapshotRestoreParallel: tests running in parallel restore one
// snapshot, each into a cluster of its own.
func TestSnapshotRestoreParallel(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t)
	fillForReset(ctx, t, c, "orders", "billing", 7)
	snap := c.Snapshot()
	for i := range 3 {
		t.Run(fmt.Sprintf("copy-%d", i), func(t *testing.T) {
			t.Parallel()
			r := brokertest.Restore(t, snap)
			cl := r.Client(kgo.DefaultProduceTopic("orders"))
			for range i {
				if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("mine")}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
			if want := int64(7 + i); total != want {
				t.Fatalf("orders holds %d records, want %d", total, want)
			}
		})
	}
}
