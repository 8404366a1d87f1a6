package broker

import (
	"context"
	"fmt"
	"log/slog"
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

// TestConsumerOffsetsStayBounded: a group commits 100,000 times; the log
// cleaner keeps __consumer_offsets (compacted, 64 KiB segments) to a few
// segments, and the last committed offsets survive a restart.
func TestConsumerOffsetsStayBounded(t *testing.T) {
	ctx := testkit.Context(t)
	state := NewMemoryState()
	cfg := Config{
		Listen: "127.0.0.1:0", Memory: true, MemoryState: state,
		Logger: testkit.Logger(t, slog.LevelWarn),
		Configs: map[string]string{
			"offsets.topic.num.partitions":     "1",
			"offsets.topic.replication.factor": "1",
			"offsets.topic.segment.bytes":      "65536",
			"log.cleaner.backoff.ms":           "50",
		},
	}
	n, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Advertised()), kgo.MaxVersions(kversion.V2_8_0()))
	if err != nil {
		t.Fatal(err)
	}
	const writers, commits = 8, 100_000
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, writers, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	var (
		wg       sync.WaitGroup
		maxBytes atomic.Int64
		failed   atomic.Value
	)
	offsetsLog := func() int64 {
		if l := n.logs.Get("__consumer_offsets", 0); l != nil {
			return l.Size()
		}
		return 0
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= commits/writers; i++ {
				if err := commit(ctx, cl, int32(w), int64(i)); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				if i%500 == 0 {
					s := offsetsLog()
					for m := maxBytes.Load(); s > m && !maxBytes.CompareAndSwap(m, s); m = maxBytes.Load() {
					}
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	l := n.logs.Get("__consumer_offsets", 0)
	written := l.EndOffset() // records, about 100 bytes each
	testkit.WaitFor(t, "the cleaner to compact __consumer_offsets", func() (bool, string) {
		segs := l.Segments()
		return l.Size() < 256<<10 && len(segs) <= 6, fmt.Sprintf("%d bytes in %d segments", l.Size(), len(segs))
	})
	t.Logf("%d records written; the log peaked at %d bytes, now %d bytes in %d segments", written, maxBytes.Load(), l.Size(), len(l.Segments()))
	if written < commits || maxBytes.Load() > written*100/2 {
		t.Fatalf("%d records written, the log peaked at %d bytes", written, maxBytes.Load())
	}
	cl.Close()
	n.Close()

	n, err = Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	cl, err = kgo.NewClient(kgo.SeedBrokers(n.Advertised()), kgo.MaxVersions(kversion.V2_8_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
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
		resp, err = req.RequestWith(ctx, cl)
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
