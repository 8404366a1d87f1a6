package broker_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

// TestRestartedLeaderWithShorterLogLosesNothing: acks=all, RF 3,
// min.insync.replicas 2. The leader loses power (its unsynced tail is
// gone) and starts again at once, long before its session would expire.
// Its new incarnation registers fenced: the controller takes it out of
// the ISR and elects another leader at a new leader epoch before it
// serves, so it comes back as a follower that fetches what it lost,
// instead of leading at the old epoch with its short log and having the
// followers truncate the acknowledged records to it.
func TestRestartedLeaderWithShorterLogLosesNothing(t *testing.T) {
	const topic, records = "restarted", 2000
	c := brokertest.StartCluster(t, 3, brokertest.Topic(topic, 1, 3, "min.insync.replicas=2"))
	ctx := testkit.Context(t)
	full := func(what string) {
		t.Helper()
		testkit.WaitFor(t, what, func() (bool, string) {
			p := c.Partition(topic, 0)
			return p.Leader >= 0 && len(p.ISR) == 3, fmt.Sprintf("leader %d at epoch %d, ISR %v", p.Leader, p.LeaderEpoch, p.ISR)
		})
	}
	full("the ISR full")
	cl := c.Client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < records; i += 100 {
		var batch []*kgo.Record
		for j := i; j < i+100; j++ {
			batch = append(batch, &kgo.Record{Value: []byte(strconv.Itoa(j))})
		}
		if err := cl.ProduceSync(ctx, batch...).FirstErr(); err != nil {
			t.Fatalf("acks=all produce: %v", err)
		}
	}
	before := c.Partition(topic, 0)
	leader := c.Node(before.Leader)
	registration := func() metadata.Broker {
		t.Helper()
		for _, b := range leader.Broker().ClusterState().Brokers {
			if b.ID == leader.ID() {
				return b
			}
		}
		t.Fatalf("node %d not registered", leader.ID())
		return metadata.Broker{}
	}
	first := registration()
	leader.Crash()
	leader.Start()
	if again := registration(); again.Incarnation == first.Incarnation || !again.UncleanShutdown || again.Fenced {
		t.Errorf("node %d ready after a crash registered as %+v, was %+v; want a new incarnation after an unclean shutdown, unfenced", leader.ID(), again, first)
	}

	full("the ISR full again")
	after := c.Partition(topic, 0)
	if after.LeaderEpoch <= before.LeaderEpoch {
		t.Errorf("after node %d restarted: leader %d at epoch %d, was leader %d at epoch %d; want a new leader epoch",
			before.Leader, after.Leader, after.LeaderEpoch, before.Leader, before.LeaderEpoch)
	}
	for _, n := range c.Nodes() {
		end := n.Broker().PartitionForTest(topic, 0).LogEndOffset()
		if end < records {
			t.Errorf("node %d's replica ends at %d: %d acknowledged records lost", n.ID(), end, records-end)
		}
	}
	cons := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := make([]bool, records)
	for got := 0; got < records; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			i, err := strconv.Atoi(string(r.Value))
			if err != nil || i < 0 || i >= records || seen[i] {
				t.Fatalf("record %q at offset %d: unknown or duplicated", r.Value, r.Offset)
			}
			seen[i] = true
			got++
		})
	}
	if i := slices.Index(seen, false); i >= 0 {
		t.Fatalf("record %d not read back", i)
	}

	// A clean restart is a new incarnation too, after a clean shutdown.
	crashed := registration()
	leader.Restart()
	if again := registration(); again.Incarnation == crashed.Incarnation || again.UncleanShutdown || again.Fenced {
		t.Errorf("node %d ready after a clean restart registered as %+v, was %+v; want a new incarnation after a clean shutdown, unfenced", leader.ID(), again, crashed)
	}
}
