package brokertest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// listOffsets asks cl for topic's partition 0 end offset, within ctx.
func listOffsets(ctx context.Context, cl *kgo.Client, topic string) error {
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
}

// shortly is how long a test waits for a request it expects no answer to.
const shortly = 200 * time.Millisecond

// TestNodeHangAndResume: a hung node answers nothing, its connection
// open, until Resume; then the request held and the next are answered.
func TestNodeHangAndResume(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Topic("h", 1, 1))
	cl := c.Client()
	if err := listOffsets(ctx, cl, "h"); err != nil {
		t.Fatal(err)
	}
	c.Node(0).Hang()
	held := make(chan error, 1)
	go func() { held <- listOffsets(ctx, cl, "h") }()
	short, cancel := context.WithTimeout(ctx, shortly)
	err := listOffsets(short, c.Client(), "h")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a request to a hung node: %v, want a timeout", err)
	}
	select {
	case err := <-held:
		t.Fatalf("a hung node answered: %v", err)
	default:
	}
	c.Node(0).Resume()
	if err := <-held; err != nil {
		t.Fatalf("the request held over the hang: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "h", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce after Resume: %v", err)
	}
}

// TestFailRequests: the chosen produces get the chosen error code and
// write nothing; the next one is served.
func TestFailRequests(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Topic("f", 1, 1))
	cl := c.Client(kgo.ProducerLinger(0))
	c.FailRequests(kmsg.Produce, kerr.PolicyViolation, 2)
	for i := range 2 {
		err := cl.ProduceSync(ctx, &kgo.Record{Topic: "f", Value: []byte("no")}).FirstErr()
		if !errors.Is(err, kerr.PolicyViolation) {
			t.Fatalf("produce %d: %v, want POLICY_VIOLATION", i, err)
		}
	}
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "f", Value: []byte("yes")}).First()
	if err != nil {
		t.Fatalf("the produce after the failed ones: %v", err)
	}
	if r.Offset != 0 {
		t.Fatalf("offset %d: the failed produces wrote", r.Offset)
	}
}

// TestFailRequestsCoordinator: the requests of a group fail with the
// chosen codes, whether the response has one per key (FindCoordinator) or
// one in its top level (InitProducerID).
func TestFailRequestsCoordinator(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t)
	cl := c.Client()
	c.FailRequests(kmsg.FindCoordinator, kerr.CoordinatorNotAvailable, 1)
	c.FailRequests(kmsg.InitProducerID, kerr.ClusterAuthorizationFailed, 1)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = "g", []string{"g"}
	resp, err := fc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("FindCoordinator v%d: %+v, want COORDINATOR_NOT_AVAILABLE", resp.Version, resp)
	}
	ip, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if ip.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("InitProducerID: error code %d, want CLUSTER_AUTHORIZATION_FAILED", ip.ErrorCode)
	}
	if ip, err = kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl); err != nil || ip.ErrorCode != 0 {
		t.Fatalf("the next InitProducerID: %v, code %d", err, ip.ErrorCode)
	}
}

// TestDelayRequests: a delayed request is answered no sooner than the
// delay, and at once after remove.
func TestDelayRequests(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Topic("d", 1, 1))
	cl := c.Client()
	if err := listOffsets(ctx, cl, "d"); err != nil {
		t.Fatal(err)
	}
	const delay = 2 * time.Second
	remove := c.DelayRequests(kmsg.ListOffsets, delay)
	short, cancel := context.WithTimeout(ctx, shortly)
	err := listOffsets(short, c.Client(), "d")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a delayed request: %v, want a timeout", err)
	}
	start := time.Now()
	if err := listOffsets(ctx, cl, "d"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < delay {
		t.Fatalf("a request delayed %v answered in %v", delay, took)
	}
	remove()
	short, cancel = context.WithTimeout(ctx, testkit.WaitTimeout)
	defer cancel()
	if err := listOffsets(short, cl, "d"); err != nil {
		t.Fatalf("after remove: %v", err)
	}
}

// TestControlAnswers: a control can answer a request itself and watch the
// others go by.
func TestControlAnswers(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t)
	var seen atomic.Int32 // the controls of several connections run at once
	c.Control(brokertest.AnyKey, func(_ context.Context, _ int32, req kmsg.Request) (kmsg.Response, bool, error) {
		seen.Add(1)
		if r, ok := req.(*kmsg.DescribeClusterRequest); ok {
			resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
			resp.ClusterID = "answered"
			return resp, true, nil
		}
		return nil, false, nil
	})
	resp, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, c.Client())
	if err != nil {
		t.Fatal(err)
	}
	if resp.ClusterID != "answered" || seen.Load() < 2 {
		t.Fatalf("cluster id %q after %d requests seen", resp.ClusterID, seen.Load())
	}
}

// TestMoveLeader: the leadership of a partition moves to a replica and to
// a node that was not one, as every node's metadata shows.
func TestMoveLeader(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Nodes(3), brokertest.Topic("m", 1, 2))
	d := c.Partition("m", 0)
	var outside int32
	for id := range int32(3) {
		if id != d.Replicas[0] && id != d.Replicas[1] {
			outside = id
		}
	}
	follower := d.Replicas[1]
	if follower == d.Leader {
		follower = d.Replicas[0]
	}
	for _, to := range []int32{follower, outside} {
		c.MoveLeader("m", 0, to)
		if d := c.Partition("m", 0); d.Leader != to {
			t.Fatalf("leader %d after MoveLeader to %d", d.Leader, to)
		}
		if l := c.Leader("m", 0); l != to {
			t.Fatalf("Leader says %d after MoveLeader to %d", l, to)
		}
		cl := c.Client(kgo.ProducerLinger(0))
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "m", Value: []byte(strconv.Itoa(int(to)))}).FirstErr(); err != nil {
			t.Fatalf("produce after moving the leader to %d: %v", to, err)
		}
	}
}

// TestCompactNow: compaction on demand removes a key's older values, with
// the background cleaner off.
func TestCompactNow(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Config("log.cleaner.enable", "false"),
		brokertest.Topic("c", 1, 1, "cleanup.policy=compact", "internal.segment.bytes=100"))
	cl := c.Client(kgo.ProducerLinger(0))
	const values = 10
	for i := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "c", Key: []byte("k"), Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(consumeAll(ctx, t, c.Bootstrap(), "c", values)); got != values {
		t.Fatalf("%d records before compaction", got)
	}
	c.CompactNow("c")
	got := consumeUntilEnd(ctx, t, c, "c")
	if len(got) >= values || got[len(got)-1] != fmt.Sprintf("v%d", values-1) {
		t.Fatalf("after CompactNow: %q", got)
	}
}

// TestRetentionNow: retention on demand deletes the expired segments,
// though the node's own pass would not run for an hour.
func TestRetentionNow(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Config("log.retention.check.interval.ms", "3600000"),
		brokertest.Topic("r", 1, 1, "retention.ms=60000", "internal.segment.bytes=100"))
	cl := c.Client(kgo.ProducerLinger(0))
	old := time.Now().Add(-time.Hour)
	const records = 5
	for i := range records {
		r := &kgo.Record{Topic: "r", Value: fmt.Appendf(nil, "v%d", i), Timestamp: old}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	start := func() int64 {
		starts, err := adm.ListStartOffsets(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := starts.Lookup("r", 0)
		return o.Offset
	}
	if s := start(); s != 0 {
		t.Fatalf("log start %d before RetentionNow", s)
	}
	c.RetentionNow()
	if s := start(); s != records-1 {
		t.Fatalf("log start %d after RetentionNow, want %d: all but the active segment gone", s, records-1)
	}
}

// consumeUntilEnd reads topic's partition 0 from its start to its end
// offset, as the cluster has it now.
func consumeUntilEnd(ctx context.Context, t *testing.T, c *brokertest.Cluster, topic string) []string {
	t.Helper()
	ends, err := kadm.NewClient(c.Client()).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	cl := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %q, not to offset %d: %v", got, end.Offset, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			done = done || r.Offset == end.Offset-1
		})
	}
	return got
}

// TestParallelClusters: tests running in parallel each get their own
// cluster, on their own ports.
func TestParallelClusters(t *testing.T) {
	for i, nodes := range []int{1, 1, 1, 3} {
		t.Run(fmt.Sprintf("%d-%dnodes", i, nodes), func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Context(t)
			c := brokertest.New(t, brokertest.Nodes(nodes), brokertest.Topic("p", 2, -1))
			value := fmt.Sprintf("cluster %d", i)
			if err := c.Client().ProduceSync(ctx, &kgo.Record{Topic: "p", Value: []byte(value)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if got := consumeAll(ctx, t, c.Bootstrap(), "p", 1); got[0] != value {
				t.Fatalf("read %q from my cluster, want %q", got, value)
			}
		})
	}
}

// TestNewPortsAndDataDir: fixed ports are used, and each node of a
// cluster on disk has its own directory.
func TestNewPortsAndDataDir(t *testing.T) {
	ports := testkit.FreePorts(t, 2)
	dir := t.TempDir()
	c := brokertest.New(t, brokertest.Nodes(2), brokertest.Ports(ports...), brokertest.DataDir(dir))
	for i, addr := range c.Bootstrap() {
		if want := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i])); addr != want {
			t.Errorf("node %d at %s, want %s", i, addr, want)
		}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("node-%d", i))); err != nil {
			t.Errorf("node %d's data: %v", i, err)
		}
	}
}

// TestClusterHangFencesNode: a hung node of a cluster loses its
// partitions' leadership to the others, which carry on taking writes;
// after Resume it catches up and rejoins the ISR.
func TestClusterHangFencesNode(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t, brokertest.Nodes(3), brokertest.Topic("hc", 1, 3))
	c.MoveLeader("hc", 0, 2)
	c.Node(2).Hang()
	testkit.WaitFor(t, "another node to lead hc[0]", func() (bool, string) {
		l := c.Leader("hc", 0)
		return l >= 0 && l != 2, fmt.Sprintf("leader %d", l)
	})
	cl := c.Client(kgo.ProducerLinger(0))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "hc", Value: []byte("while hung")}).FirstErr(); err != nil {
		t.Fatalf("produce while node 2 hangs: %v", err)
	}
	c.Node(2).Resume()
	testkit.WaitFor(t, "node 2 back in the ISR of hc[0]", func() (bool, string) {
		isr := c.Partition("hc", 0).ISR
		return slices.Contains(isr, 2), fmt.Sprintf("isr %v", isr)
	})
}
