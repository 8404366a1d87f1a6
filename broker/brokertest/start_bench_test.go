package brokertest_test

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
)

// The time from starting a cluster in-process to the first acknowledged
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
	b.Run("klog-1", func(b *testing.B) {
		for b.Loop() {
			n := brokertest.Start(b)
			firstAck(b, n.Addr())
			b.StopTimer()
			n.Close()
			b.StartTimer()
		}
	})
	b.Run("klog-3", func(b *testing.B) {
		for b.Loop() {
			c := brokertest.StartCluster(b, 3)
			firstAck(b, c.Bootstrap()...)
			b.StopTimer()
			for _, n := range c.Nodes() {
				n.Kill()
			}
			b.StartTimer()
		}
	})
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
