package brokertest_test

// The examples of the package doc, as tests: a cluster needs a
// testing.TB for its cleanup and logs, which an Example function has
// none of, so these are Test functions that go test runs.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
)

// TestExampleNew: one node with a topic, a client, a record written and
// read back.
func TestExampleNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := brokertest.New(t, brokertest.Topic("orders", 3, 1))
	cl := c.Client(kgo.ConsumeTopics("orders"))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("pizza")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	if r := fs.Records()[0]; string(r.Value) != "pizza" {
		t.Fatalf("read %q", r.Value)
	}
}

// TestExampleNew_cluster: three nodes; the partition's leader is killed
// and a producer carries on with the new one.
func TestExampleNew_cluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := brokertest.New(t, brokertest.Nodes(3), brokertest.Topic("orders", 1, 3))
	cl := c.Client()
	c.MoveLeader("orders", 0, 1)
	c.Node(1).Kill()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("pizza")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c.Node(1).Start()
}

// TestExampleCluster_FailRequests: the next produce fails with the code
// chosen, the one after it is served.
func TestExampleCluster_FailRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := brokertest.New(t, brokertest.Topic("orders", 1, 1))
	cl := c.Client()
	c.FailRequests(kmsg.Produce, kerr.PolicyViolation, 1)
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("refused")}).FirstErr()
	if !errors.Is(err, kerr.PolicyViolation) {
		t.Fatalf("produce: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("taken")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestExampleCluster_Control: a control that counts the requests it sees
// and answers none of them.
func TestExampleCluster_Control(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := brokertest.New(t, brokertest.Topic("orders", 1, 1))
	produces := make(chan int32, 10)
	remove := c.Control(kmsg.Produce, func(_ context.Context, node int32, _ kmsg.Request) (kmsg.Response, bool, error) {
		produces <- node
		return nil, false, nil
	})
	defer remove()
	if err := c.Client().ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("pizza")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if node := <-produces; node != 0 {
		t.Fatalf("produce to node %d", node)
	}
}

// TestExampleNode_Hang: a client's request to a hung node times out; after
// Resume the node answers again.
func TestExampleNode_Hang(t *testing.T) {
	t.Parallel()
	c := brokertest.New(t, brokertest.Topic("orders", 1, 1))
	adm := kadm.NewClient(c.Client())
	c.Node(0).Hang()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := adm.ListEndOffsets(ctx, "orders"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a hung node answered: %v", err)
	}
	c.Node(0).Resume()
	if _, err := adm.ListEndOffsets(context.Background(), "orders"); err != nil {
		t.Fatal(err)
	}
}

// TestExampleCluster_CompactNow: a compacted topic compacted at once,
// not when the cleaner comes by.
func TestExampleCluster_CompactNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := brokertest.New(t, brokertest.Topic("prices", 1, 1, "cleanup.policy=compact", "internal.segment.bytes=100"))
	cl := c.Client()
	for _, v := range []string{"1.00", "1.10", "1.20"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "prices", Key: []byte("pizza"), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	res := c.CompactNow("prices")
	if res[0][0].Result.RecordsRemoved == 0 {
		t.Fatalf("compaction removed nothing: %+v", res)
	}
}

// The tests below are the snippets of docs/testing.md, shown there as
// they are here (the module root's docs test compares them).

// TestExampleStart: one node with a topic, and a client producing to it.
func TestExampleStart(t *testing.T) {
	n := brokertest.Start(t, brokertest.Topic("t", 1, 1)) // stopped by t.Cleanup
	cl := n.Client(kgo.DefaultProduceTopic("t"))          // a franz-go client seeded with it
	if err := cl.ProduceSync(t.Context(), kgo.StringRecord("hello")).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestExampleStartCluster: what klog node does to a process, done to the
// nodes of an in-process cluster, which still takes acks=all produces.
// The produce comes before the Close: a node started a moment before may
// not be back in the ISR yet, and a partition whose ISR is the closing
// node alone waits for it to return, as Kafka's does without unclean
// election (seen on a loaded machine: the produce waited until go test's
// timeout).
func TestExampleStartCluster(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.Topic("t", 1, 3))
	cl := c.Client(kgo.DefaultProduceTopic("t")) // seeded with every node
	c.Node(1).Kill()                             // as SIGKILL: what it wrote survives, synced or not
	c.Node(1).Start()                            // recovers and rejoins
	c.Node(2).Crash()                            // as a power loss: only what it synced survives
	c.Node(2).Start()                            // recovers what it synced, and rejoins
	c.Node(0).Isolate()                          // cut off from the other nodes; its clients stay
	c.Node(0).Heal()                             // reconnected
	if err := cl.ProduceSync(t.Context(), kgo.StringRecord("hello")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c.Node(0).Close() // graceful, with a controlled shutdown
}

// TestExampleNew_controls: seed topics and request controls.
func TestExampleNew_controls(t *testing.T) {
	c := brokertest.New(t, brokertest.Nodes(3), brokertest.Topic("orders", 6, 3, "cleanup.policy=compact"))
	c.MoveLeader("orders", 0, 2)                            // through the controller
	c.Node(1).Hang()                                        // as SIGSTOP, until Resume
	c.Node(1).Resume()                                      // as SIGCONT
	c.FailRequests(kmsg.Produce, kerr.NotEnoughReplicas, 2) // the next two produces fail
	c.DelayRequests(kmsg.Fetch, time.Second)                // every fetch waits a second
	c.CompactNow("orders")                                  // now, not on schedule
	c.RetentionNow()                                        // retention too
}
