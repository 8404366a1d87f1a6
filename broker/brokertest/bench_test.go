package brokertest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
)

// BenchmarkNewToFirstProduce is the time from New to the first
// acknowledged produce to a seed topic: what a test pays for its own
// cluster.
func BenchmarkNewToFirstProduce(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				c := brokertest.New(b, brokertest.Nodes(nodes), brokertest.Topic("t", 1, -1))
				cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
				if err != nil {
					b.Fatal(err)
				}
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				cl.Close()
				// Killed at once: a benchmark's cleanups wait for its end.
				for _, n := range c.Nodes() {
					n.Kill()
				}
				b.StartTimer()
			}
		})
	}
}
