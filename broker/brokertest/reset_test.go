package brokertest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// fillForReset creates topic, writes n records to it and commits offset
// n for group, as a test would leave a cluster.
func fillForReset(ctx context.Context, t testing.TB, c *brokertest.Cluster, topic, group string, n int) {
	t.Helper()
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctx, 2, -1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl := c.Client(kgo.DefaultProduceTopic(topic))
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: int64(n), LeaderEpoch: -1})
	resps, err := adm.CommitOffsets(ctx, group, offsets)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestResetDeletesTopicsAndGroups(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Nodes(3))
	fillForReset(ctx, t, c, "orders", "billing", 10)
	fillForReset(ctx, t, c, "payments", "audit", 5)

	c.Reset()

	adm := kadm.NewClient(c.Client())
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := topics.Names(); len(names) != 0 {
		t.Fatalf("topics after Reset: %v", names)
	}
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := groups.Groups(); len(names) != 0 {
		t.Fatalf("groups after Reset: %v", names)
	}
	// A topic made again under an old name starts empty, on every node.
	if _, err := adm.CreateTopic(ctx, 2, -1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		testkit.WaitFor(t, fmt.Sprintf("node %d to lead the new orders", n.ID()), func() (bool, string) {
			ends, err := kadm.NewClient(n.Client()).ListEndOffsets(ctx, "orders")
			if err != nil {
				return false, err.Error()
			}
			o, _ := ends.Lookup("orders", 0)
			if o.Err != nil {
				return false, o.Err.Error()
			}
			if o.Offset != 0 {
				t.Fatalf("node %d: new orders[0] ends at %d, not 0", n.ID(), o.Offset)
			}
			return true, ""
		})
	}
	fetched, err := adm.FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("orders", 0); ok && o.At >= 0 {
		t.Fatalf("billing's committed offset survived Reset: %+v", o)
	}
}

// Reset side by side with New, for one and three nodes: reset-N empties
// a cluster that a test left with two topics and two groups, new-N starts
// a new cluster instead (stopping it is not timed):
//
//	go test -run - -bench Reset -benchtime 20x ./broker/brokertest/
func BenchmarkReset(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("reset-%d", nodes), func(b *testing.B) {
			ctx := testkit.Context(b)
			c := brokertest.New(b, brokertest.Nodes(nodes))
			for b.Loop() {
				b.StopTimer()
				fillForReset(ctx, b, c, "orders", "billing", 10)
				fillForReset(ctx, b, c, "payments", "audit", 5)
				b.StartTimer()
				c.Reset()
			}
		})
		b.Run(fmt.Sprintf("new-%d", nodes), func(b *testing.B) {
			for b.Loop() {
				c := brokertest.New(b, brokertest.Nodes(nodes))
				b.StopTimer()
				// Killed at once: a benchmark's cleanups wait for its end.
				for _, n := range c.Nodes() {
					n.Kill()
				}
				b.StartTimer()
			}
		})
	}
}
