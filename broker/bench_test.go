package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/brokertest"
)

// BenchmarkProduce measures the produce path end to end in one process:
// 1 KiB records, one partition, acks=all, idempotent, linger 5 ms, with the
// log on disk. Figures from scripts/bench/run.sh (separate processes,
// pinned, against kfake) are the ones to compare; this one is for
// profiling (-cpuprofile).
func BenchmarkProduce(b *testing.B) {
	n := brokertest.Start(b, brokertest.DataDir(b.TempDir()))
	cl := n.Client(kgo.DefaultProduceTopic("bench"), kgo.AllowAutoTopicCreation(),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := context.Background()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 1024)
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	for range b.N {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkConsume reads b.N 1 KiB records from offset 0.
func BenchmarkConsume(b *testing.B) {
	n := brokertest.Start(b, brokertest.DataDir(b.TempDir()))
	ctx := context.Background()
	pcl := n.Client(kgo.DefaultProduceTopic("bench"), kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := make([]byte, 1024)
	for range b.N {
		pcl.Produce(ctx, &kgo.Record{Value: value}, nil)
	}
	if err := pcl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	cl := n.Client(kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(50<<20), kgo.FetchMaxPartitionBytes(10<<20))
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	for got := 0; got < b.N; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		got += fs.NumRecords()
	}
}

// BenchmarkFetchSession is a consumer caught up on 1,000 partitions
// polling for more (max wait 0): a full fetch each time, as without fetch
// sessions, against an incremental fetch in a session (KIP-227). It
// reports the bytes each request and response carries on the wire.
func BenchmarkFetchSession(b *testing.B) {
	const partitions = 1000
	n := brokertest.Start(b)
	ctx := context.Background()
	cl := fetchVersionClient(n, 12)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, "many"); err != nil {
		b.Fatal(err)
	}
	pcl := n.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	caughtUp := map[int32]int64{}
	for p := range int32(partitions) {
		pcl.Produce(ctx, &kgo.Record{Topic: "many", Partition: p, Value: []byte("v")}, nil)
		caughtUp[p] = 1
	}
	if err := pcl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, next func(*kmsg.FetchResponse) *kmsg.FetchRequest) {
		req := next(nil)
		var reqBytes, respBytes int
		for range b.N {
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				b.Fatal(err)
			}
			if resp.ErrorCode != 0 {
				b.Fatal(kerr.ErrorForCode(resp.ErrorCode))
			}
			reqBytes, respBytes = len(req.AppendTo(nil)), len(resp.AppendTo(nil))
			req = next(resp)
		}
		b.ReportMetric(float64(reqBytes), "req-bytes/op")
		b.ReportMetric(float64(respBytes), "resp-bytes/op")
	}
	b.Run("full", func(b *testing.B) {
		run(b, func(*kmsg.FetchResponse) *kmsg.FetchRequest { return sessionFetch("many", 0, -1, caughtUp) })
	})
	b.Run("incremental", func(b *testing.B) {
		epoch := int32(0)
		var id int32
		run(b, func(resp *kmsg.FetchResponse) *kmsg.FetchRequest {
			if resp == nil {
				return sessionFetch("many", 0, 0, caughtUp)
			}
			id, epoch = resp.SessionID, broker.NextFetchEpoch(epoch)
			return sessionFetch("many", id, epoch, nil)
		})
	})
}
