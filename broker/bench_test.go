package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

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
