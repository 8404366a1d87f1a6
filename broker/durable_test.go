package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestDurableProduceSurvivesCrash: with klog.produce.durable every record
// acknowledged (acks=1 or all) survives a power loss, produced by several
// clients at once to several partitions; without it the same crash loses
// them, which shows the crash is real.
func TestDurableProduceSurvivesCrash(t *testing.T) {
	for _, durable := range []bool{true, false} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			ctx := testkit.Context(t)
			n := brokertest.Start(t, brokertest.Config("klog.produce.durable", fmt.Sprint(durable)))
			if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 4, 1, nil, "d"); err != nil {
				t.Fatal(err)
			}
			const perClient = 200
			var wg sync.WaitGroup
			var mu sync.Mutex
			acked := 0
			for c := range 4 {
				opts := []kgo.Opt{kgo.DefaultProduceTopic("d"), kgo.ProducerLinger(time.Millisecond)}
				if c%2 == 1 {
					opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
				}
				cl := n.Client(opts...)
				wg.Go(func() {
					for i := range perClient {
						cl.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d-%d", c, i)}, func(_ *kgo.Record, err error) {
							if err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							acked++
							mu.Unlock()
						})
					}
					if err := cl.Flush(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if acked != 4*perClient {
				t.Fatalf("%d records acknowledged, want %d", acked, 4*perClient)
			}
			n.Crash()
			n.Start()
			ends, err := kadm.NewClient(n.Client()).ListEndOffsets(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			var kept int64
			ends.Each(func(o kadm.ListedOffset) { kept += o.Offset })
			switch {
			case durable && kept != 4*perClient:
				t.Fatalf("a crash kept %d of the %d acknowledged records", kept, 4*perClient)
			case !durable && kept == 4*perClient:
				t.Fatalf("without klog.produce.durable a crash kept all %d records: the test's crash loses nothing", kept)
			}
		})
	}
}

// TestDurableHighWatermark: a durable node's consumers read what is
// acknowledged, and the high watermark reaches the log end once synced.
func TestDurableHighWatermark(t *testing.T) {
	ctx, cancel := context.WithTimeout(testkit.Context(t), time.Minute)
	defer cancel()
	n := brokertest.Start(t, brokertest.Config("klog.produce.durable", "true"))
	cl := n.Client(kgo.DefaultProduceTopic("hw"), kgo.AllowAutoTopicCreation())
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := n.Client(kgo.ConsumeTopics("hw"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 10 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
}
