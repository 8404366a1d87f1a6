package brokertest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
)

// The time from brokertest.New to the first acknowledged
// produce (acks=all, no linger, to a topic the produce auto-creates), side
// by side with kfake's NewCluster; closing is not timed:
//
//	go test -run - -bench StartToFirstAck -benchtime 20x ./broker/brokertest/

func firstAck(b *testing.B, seeds ...string) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "first", Value: []byte("v")}).FirstErr(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkStartToFirstAck(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("klog-%d", nodes), func(b *testing.B) {
			for b.Loop() {
				c := brokertest.New(b, brokertest.Nodes(nodes))
				firstAck(b, c.Bootstrap()...)
				b.StopTimer()
				// Killed at once: a benchmark's cleanups wait for its end.
				for _, n := range c.Nodes() {
					n.Kill()
				}
				b.StartTimer()
			}
		})
	}
	b.Run("kfake-1", func(b *testing.B) {
		for b.Loop() {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
			if err != nil {
				b.Fatal(err)
			}
			firstAck(b, c.ListenAddrs()...)
			b.StopTimer()
			c.Close()
			b.StartTimer()
		}
	})
}
