package broker

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/internal/testkit"
)

// cleanerNode is a node on an in-memory state whose log cleaner runs
// every 50 ms, with a client, for the tests that an internal topic's log
// stays bounded: they write to it through the client, sample its size
// while they do, and restart the node on the same state.
type cleanerNode struct {
	t     *testing.T
	cfg   Config
	opts  []kgo.Opt
	topic string // the internal topic; its partition 0 is watched
	n     *Node
	cl    *kgo.Client
	// The largest size and segment count sampled.
	peak, peakSegments atomic.Int64
}

// startCleanerNode starts a cleanerNode with configs added to its node's
// (the internal topic's partitions, replication and segment size) and
// opts to its client's; node and client close when the test ends.
func startCleanerNode(ctx context.Context, t *testing.T, topic string, configs map[string]string, opts ...kgo.Opt) *cleanerNode {
	c := map[string]string{"log.cleaner.backoff.ms": "50"}
	maps.Copy(c, configs)
	cn := &cleanerNode{
		t: t, topic: topic, opts: opts,
		cfg: Config{
			Listen: "127.0.0.1:0", Memory: true, MemoryState: NewMemoryState(),
			Logger:  testkit.Logger(t, slog.LevelWarn),
			Configs: c,
		},
	}
	cn.start(ctx)
	return cn
}

func (cn *cleanerNode) start(ctx context.Context) {
	n, err := Start(ctx, cn.cfg)
	if err != nil {
		cn.t.Fatal(err)
	}
	cn.t.Cleanup(func() { n.Close() })
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.Advertised())}, cn.opts...)...)
	if err != nil {
		cn.t.Fatal(err)
	}
	cn.t.Cleanup(cl.Close)
	cn.n, cn.cl = n, cl
}

// restart closes the client and the node, and starts both again on the
// node's state.
func (cn *cleanerNode) restart(ctx context.Context) {
	cn.cl.Close()
	cn.n.Close()
	cn.start(ctx)
}

// sample takes the size and segment count of the topic's log now; safe
// for concurrent use.
func (cn *cleanerNode) sample() {
	l := cn.n.logs.Get(cn.topic, 0)
	if l == nil {
		return
	}
	raise(&cn.peak, l.Size())
	raise(&cn.peakSegments, int64(len(l.Segments())))
}

// raise sets v to n if n is larger.
func raise(v *atomic.Int64, n int64) {
	for m := v.Load(); n > m && !v.CompareAndSwap(m, n); m = v.Load() {
	}
}

// waitCompacted waits until the cleaner has brought the topic's log below
// maxBytes in at most maxSegments segments, and returns the records
// written (its end offset). Before each look it calls more, to write a
// little more: a pass leaves an empty segment for each group it cleaned
// into nothing (as Kafka's cleaner does), and only a later pass, which
// more brings about, merges them. Its records being about 100 bytes each,
// the log must have peaked below half of what was written.
func (cn *cleanerNode) waitCompacted(maxBytes int64, maxSegments int, more func() error) int64 {
	t := cn.t
	t.Helper()
	l := cn.n.logs.Get(cn.topic, 0)
	if l == nil {
		t.Fatalf("no log of %s-0", cn.topic)
	}
	testkit.WaitFor(t, "the cleaner to compact "+cn.topic, func() (bool, string) {
		if err := more(); err != nil {
			t.Fatal(err)
		}
		segs := l.Segments()
		return l.Size() < maxBytes && len(segs) <= maxSegments, fmt.Sprintf("%d bytes in %d segments", l.Size(), len(segs))
	})
	written := l.EndOffset()
	t.Logf("%s: %d records written; the log peaked at %d bytes and %d segments, now %d bytes in %d segments",
		cn.topic, written, cn.peak.Load(), cn.peakSegments.Load(), l.Size(), len(l.Segments()))
	if cn.peak.Load() > written*100/2 {
		t.Fatalf("%d records written, the log peaked at %d bytes", written, cn.peak.Load())
	}
	return written
}

// TestConsumerOffsetsStayBounded: a group commits 100,000 times; the log
// cleaner keeps __consumer_offsets (compacted, 64 KiB segments) to a few
// segments, and the last committed offsets survive a restart.
func TestConsumerOffsetsStayBounded(t *testing.T) {
	ctx := testkit.Context(t)
	cn := startCleanerNode(ctx, t, "__consumer_offsets", map[string]string{
		"offsets.topic.num.partitions":     "1",
		"offsets.topic.replication.factor": "1",
		"offsets.topic.segment.bytes":      "65536",
	}, kgo.MaxVersions(kversion.V2_8_0()))
	const writers, commits = 8, 100_000
	if _, err := kadm.NewClient(cn.cl).CreateTopic(ctx, writers, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	var (
		wg     sync.WaitGroup
		failed atomic.Value
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= commits/writers; i++ {
				if err := commit(ctx, cn.cl, int32(w), int64(i)); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				if i%500 == 0 {
					cn.sample()
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	// More commits of the last offset, which the restart must find.
	more := func() error { return commit(ctx, cn.cl, 0, commits/writers) }
	if written := cn.waitCompacted(256<<10, 6, more); written < commits {
		t.Fatalf("%d records written for %d commits", written, commits)
	}

	cn.restart(ctx)
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = "bounded"
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic = "t"
	for p := range writers {
		rt.Partitions = append(rt.Partitions, int32(p))
	}
	req.Topics = append(req.Topics, rt)
	var resp *kmsg.OffsetFetchResponse
	testkit.WaitFor(t, "the group coordinator to load after the restart", func() (bool, string) {
		var err error
		resp, err = req.RequestWith(ctx, cn.cl)
		if err != nil {
			return false, err.Error()
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return false, err.Error()
		}
		return len(resp.Topics) == 1, fmt.Sprintf("%+v", resp)
	})
	for _, p := range resp.Topics[0].Partitions {
		if p.Offset != commits/writers || p.ErrorCode != 0 {
			t.Fatalf("partition %d: offset %d (error %d) after the restart, want %d", p.Partition, p.Offset, p.ErrorCode, commits/writers)
		}
	}
}

// TestTransactionStateStaysBounded: one transactional id commits 5,000
// transactions; the log cleaner keeps __transaction_state (compacted,
// 16 KiB segments) to a few segments, and the id's state survives a
// restart: its next InitProducerID keeps the producer id and bumps the
// epoch.
func TestTransactionStateStaysBounded(t *testing.T) {
	ctx := testkit.Context(t)
	cn := startCleanerNode(ctx, t, "__transaction_state", map[string]string{
		"transaction.state.log.num.partitions":     "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.segment.bytes":      "16384",
	}, kgo.TransactionalID("bounded"), kgo.DefaultProduceTopic("t"), kgo.ProducerLinger(0))
	if _, err := kadm.NewClient(cn.cl).CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	txns := 0
	commit := func() error {
		if err := cn.cl.BeginTransaction(); err != nil {
			return err
		}
		if err := cn.cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "txn %d", txns)}).FirstErr(); err != nil {
			return fmt.Errorf("transaction %d: %w", txns, err)
		}
		if err := cn.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return fmt.Errorf("commit %d: %w", txns, err)
		}
		txns++
		return nil
	}
	for txns < 5000 {
		if err := commit(); err != nil {
			t.Fatal(err)
		}
		if txns%100 == 0 {
			cn.sample()
		}
	}
	// Each transaction writes Ongoing, PrepareCommit and CompleteCommit.
	if written := cn.waitCompacted(64<<10, 6, commit); written < 3*int64(txns) {
		t.Fatalf("%d records written for %d transactions", written, txns)
	}
	pid, epoch, err := cn.cl.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}

	cn.restart(ctx)
	gotPID, gotEpoch, err := cn.cl.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gotPID != pid || gotEpoch != epoch+1 {
		t.Fatalf("after the restart InitProducerID of %q gave producer %d epoch %d, want %d epoch %d", "bounded", gotPID, gotEpoch, pid, epoch+1)
	}
}

// commit commits offset for partition p of topic t in group "bounded", as
// a consumer outside any generation (a simple consumer) does. The client
// is held to Kafka 2.8's versions, whose requests name topics (v10 needs
// topic IDs, of a topic that exists).
func commit(ctx context.Context, cl *kgo.Client, p int32, offset int64) error {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = "bounded", -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = p, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("commit %d: %w", offset, err)
			}
		}
	}
	return nil
}
