package brokertest_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// produceNumbered writes records "from".."to-1" to topic with acks=all,
// failing the test on any error.
func produceNumbered(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		r := &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
}

// consumeAll reads topic from the start until it has want records, and
// returns their values in offset order of each partition.
func consumeAll(ctx context.Context, t *testing.T, seeds []string, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, testkit.WaitTimeout)
	defer cancel()
	var got []string
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), want, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// endOffset is the high watermark of topic's partition 0 as node n sees it.
func endOffset(ctx context.Context, t *testing.T, n *brokertest.Node, topic string) int64 {
	t.Helper()
	adm := kadm.NewClient(n.Client())
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := ends.Lookup(topic, 0)
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	return o.Offset
}

func TestMemoryNodeKillKeepsWritesCrashKeepsSynced(t *testing.T) {
	ctx := context.Background()
	n := brokertest.Start(t)
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	cl := n.Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	produceNumbered(ctx, t, cl, "t", 0, 100)

	// A killed process loses nothing it wrote, synced or not.
	n.Kill()
	if n.Running() {
		t.Fatal("running after Kill")
	}
	n.Start()
	if got := endOffset(ctx, t, n, "t"); got != 100 {
		t.Fatalf("after Kill and Start, log end %d; want 100", got)
	}
	// A restart keeps the memory node's data too.
	n.Restart()
	if got := endOffset(ctx, t, n, "t"); got != 100 {
		t.Fatalf("after Restart, log end %d; want 100", got)
	}

	// A power loss keeps only what was synced: appends are not synced
	// one by one (flush.messages is unbounded by default, as in Kafka).
	produceNumbered(ctx, t, cl, "t", 100, 200)
	n.Crash()
	n.Start()
	if got := endOffset(ctx, t, n, "t"); got >= 200 {
		t.Fatalf("after Crash and Start, log end %d; want the unsynced appends lost", got)
	}
}

func TestClusterKillLeader(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 3)
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	details := partitionDetails(ctx, t, adm, "t")
	if len(details.Replicas) != 3 {
		t.Fatalf("replicas %v; want the default replication factor of 3", details.Replicas)
	}
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()))
	produceNumbered(ctx, t, cl, "t", 0, 100)

	old := details.Leader
	c.Node(old).Kill()
	testkit.WaitFor(t, "a new leader", func() (bool, string) {
		d := partitionDetails(ctx, t, adm, "t")
		return d.Leader >= 0 && d.Leader != old, fmt.Sprintf("leader %d, isr %v", d.Leader, d.ISR)
	})
	produceNumbered(ctx, t, cl, "t", 100, 200)

	c.Node(old).Start()
	testkit.WaitFor(t, "the killed node back in the ISR", func() (bool, string) {
		d := partitionDetails(ctx, t, adm, "t")
		return slices.Contains(d.ISR, old), fmt.Sprintf("isr %v", d.ISR)
	})
	got := consumeAll(ctx, t, c.Bootstrap(), "t", 200)
	for i, v := range got {
		if v != strconv.Itoa(i) {
			t.Fatalf("record %d is %q; want every acknowledged record once, in order", i, v)
		}
	}
}

func TestClusterIsolateAndHeal(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 3)
	lone := c.Node(2)
	lone.Isolate()
	// The topic is made through the other two, which still form a
	// majority.
	if _, err := kadm.NewClient(c.Node(0).Client()).CreateTopic(ctx, 1, 2, nil, "while-isolated"); err != nil {
		t.Fatal(err)
	}
	has := func() bool {
		md, err := kadm.NewClient(lone.Client()).Metadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(md.Topics.Names(), "while-isolated")
	}
	testkit.WaitFor(t, "node 0 to know the topic", func() (bool, string) {
		md, err := kadm.NewClient(c.Node(0).Client()).Metadata(ctx)
		return err == nil && slices.Contains(md.Topics.Names(), "while-isolated"), fmt.Sprint(err)
	})
	if has() {
		t.Fatal("the isolated node learned of a topic created while it was cut off")
	}
	lone.Heal()
	testkit.WaitFor(t, "the healed node to learn of the topic", func() (bool, string) { return has(), "" })
}

// A controller cut off from the quorum stops naming itself: it names
// another node, which can reach the new leader, so an admin request a
// client sends through it alone succeeds. Before, its Metadata kept the
// last controller of its image, itself, and clients retried into it
// until they gave up (NOT_CONTROLLER).
func TestClusterIsolatedControllerNamesAnother(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 3)
	md, err := kadm.NewClient(c.Node(0).Client()).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lone := c.Node(md.Controller)
	lone.Isolate()
	cl := lone.Client()
	testkit.WaitFor(t, "the isolated controller to name another node", func() (bool, string) {
		resp, err := cl.Broker(int(md.Controller)).Request(ctx, kmsg.NewPtrMetadataRequest())
		if err != nil {
			return false, err.Error()
		}
		named := resp.(*kmsg.MetadataResponse).ControllerID
		return named >= 0 && named != md.Controller, fmt.Sprintf("node %d names %d", md.Controller, named)
	})
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 2, nil, "through-the-isolated"); err != nil {
		t.Fatalf("create through the isolated node's client: %v", err)
	}
}

func partitionDetails(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) kadm.PartitionDetail {
	t.Helper()
	var d kadm.PartitionDetail
	testkit.WaitFor(t, "metadata of "+topic, func() (bool, string) {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		td, ok := md.Topics[topic]
		if !ok || td.Err != nil || len(td.Partitions) == 0 {
			return false, fmt.Sprint(td.Err)
		}
		d = td.Partitions[0]
		return true, ""
	})
	return d
}
