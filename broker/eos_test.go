package broker_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
)

// copier is one consume-transform-produce worker: it reads "in" in group
// "copier" and writes each record to "out" inside a transaction that also
// commits the consumed offsets.
type copier struct {
	sess   *kgo.GroupTransactSession
	copied int // records in committed transactions
}

func startCopier(t *testing.T, n *brokertest.Node, id string) *copier {
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(n.Addr()),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(2*time.Second),
		kgo.ConsumerGroup("copier"),
		kgo.ConsumeTopics("in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.HeartbeatInterval(100*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	return &copier{sess: sess}
}

// step copies one poll's worth of records in one transaction. With crash
// set it stops after producing, before ending the transaction, and drops
// the client: what a killed worker leaves behind.
func (c *copier) step(ctx context.Context, t *testing.T, crash bool) {
	pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	fs := c.sess.PollFetches(pctx)
	cancel()
	if fs.NumRecords() == 0 {
		return
	}
	if err := c.sess.Begin(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	var wg sync.WaitGroup
	fs.EachRecord(func(r *kgo.Record) {
		wg.Add(1)
		c.sess.Produce(ctx, &kgo.Record{Topic: "out", Key: r.Key, Value: r.Value}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil && !crash {
				t.Errorf("produce: %v", err)
			}
		})
	})
	if crash {
		if err := c.sess.Client().Flush(ctx); err != nil {
			t.Fatalf("flush before the crash: %v", err)
		}
		c.sess.Client().Close() // no EndTxn: the transaction stays open
		return
	}
	wg.Wait()
	committed, err := c.sess.End(ctx, kgo.TryCommit)
	if err != nil {
		t.Fatalf("end: %v", err)
	}
	if committed {
		c.copied += fs.NumRecords()
	}
}

// TestExactlyOnceCopierSurvivesAKilledWorker: two consume-transform-produce
// workers copy 20,000 records; one is killed in the middle of a
// transaction. The survivor takes over its partitions once the
// coordinator aborts the dead worker's transaction (transaction.timeout.ms),
// and the output read_committed holds every input record exactly once.
func TestExactlyOnceCopierSurvivesAKilledWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n := brokertest.Start(t,
		brokertest.Config("transaction.abort.timed.out.transaction.cleanup.interval.ms", "100"),
		brokertest.Config("group.min.session.timeout.ms", "500"))
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "out"); err != nil {
		t.Fatal(err)
	}
	const total = 20000
	produceN(ctx, t, n, "in", total)

	a := startCopier(t, n, "copier-a")
	b := startCopier(t, n, "copier-b")
	defer b.sess.Close()
	for a.copied+b.copied < total/3 {
		a.step(ctx, t, false)
		b.step(ctx, t, false)
	}
	a.step(ctx, t, true) // killed mid-transaction

	out := n.Client(kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := make(map[int]bool, total)
	// The copy is done when every record is out; it fails when the output
	// stops growing for a minute (a stuck transaction or group), not at a
	// fixed time: under the race detector on a busy machine the worker
	// left copies the 20000 records in minutes.
	progress, lastSeen := time.Now(), 0
	for len(seen) < total {
		if len(seen) > lastSeen {
			progress, lastSeen = time.Now(), len(seen)
		}
		if time.Since(progress) > time.Minute {
			t.Fatalf("output holds %d of %d records, none more for %v", len(seen), total, time.Since(progress))
		}
		b.step(ctx, t, false)
		pctx, pcancel := context.WithTimeout(ctx, 50*time.Millisecond)
		fs := out.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			v, err := strconv.Atoi(string(r.Value))
			if err != nil || v < 0 || v >= total {
				t.Fatalf("unexpected output record %q", r.Value)
			}
			if seen[v] {
				t.Fatalf("record %d copied twice", v)
			}
			seen[v] = true
		})
	}
	// Nothing more arrives: the group's committed offsets are at the end of
	// the input, so no record can be copied again.
	committed, err := adm.FetchOffsets(ctx, "copier")
	if err != nil {
		t.Fatal(err)
	}
	sum := int64(0)
	committed.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != total {
		t.Fatalf("committed offsets sum to %d, want %d", sum, total)
	}
	t.Logf("copied %d records exactly once; the killed worker had committed %d", total, a.copied)
}
