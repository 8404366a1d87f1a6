package broker_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

// Partition counts of the internal topics in these tests: few, so loading
// is quick, but enough to spread over three nodes.
const clusterInternalPartitions = 6

// cluster is three (or more) in-process nodes of one metadata quorum, each
// on its own data directory so one can be restarted, with replication
// factor 1 for the internal topics.
type cluster struct {
	t     *testing.T
	cfgs  []broker.Config
	nodes []*broker.Node
}

// startCluster starts n nodes, all voters; configs (name, value, ...) are
// added to every node's.
func startCluster(t *testing.T, n int, configs ...string) *cluster {
	t.Helper()
	return startClusterOf(t, n, n, configs...)
}

// startClusterOf starts n nodes of which the first voterCount are the
// metadata quorum's voters and the others broker-only nodes; configs
// (name, value, ...) are added to every node's.
func startClusterOf(t *testing.T, n, voterCount int, configs ...string) *cluster {
	t.Helper()
	return startClusterWith(t, n, voterCount, func(_ int, cfg *broker.Config) {
		for j := 0; j+1 < len(configs); j += 2 {
			cfg.Configs[configs[j]] = configs[j+1]
		}
	})
}

// startClusterWith starts n nodes, the first voterCount voters, each on its
// own data directory; configure, if set, changes each node's config first.
func startClusterWith(t *testing.T, n, voterCount int, configure func(i int, cfg *broker.Config)) *cluster {
	t.Helper()
	c := newClusterWith(t, n, voterCount, configure)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = c.boot(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start node %d: %v", i, err)
		}
	}
	return c
}

// newClusterWith lays out the nodes of startClusterWith and starts none:
// c.start(i) starts node i (the quorum's voters need a majority of them
// starting at once). The nodes started are closed when the test ends.
func newClusterWith(t *testing.T, n, voterCount int, configure func(i int, cfg *broker.Config)) *cluster {
	t.Helper()
	var voters []string
	for i, port := range testkit.FreePorts(t, voterCount) {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i, port))
	}
	c := &cluster{t: t, cfgs: make([]broker.Config, n), nodes: make([]*broker.Node, n)}
	for i := range n {
		c.cfgs[i] = broker.Config{
			Listen:  "127.0.0.1:0",
			DataDir: t.TempDir(),
			Logger:  testkit.Logger(t, 8).With("node", i), // errors only: peers come and go
			Configs: map[string]string{
				"node.id":                                  strconv.Itoa(i),
				"controller.quorum.voters":                 strings.Join(voters, ","),
				"offsets.topic.replication.factor":         "1",
				"offsets.topic.num.partitions":             strconv.Itoa(clusterInternalPartitions),
				"transaction.state.log.replication.factor": "1",
				"transaction.state.log.num.partitions":     strconv.Itoa(clusterInternalPartitions),
				"transaction.state.log.min.isr":            "1",
				"group.initial.rebalance.delay.ms":         "0",
				"group.min.session.timeout.ms":             "500",
			},
		}
		if configure != nil {
			configure(i, &c.cfgs[i])
		}
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			if n != nil {
				n.Close()
			}
		}
	})
	return c
}

func (c *cluster) boot(i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	n, err := broker.Start(ctx, c.cfgs[i])
	if err != nil {
		return err
	}
	c.nodes[i] = n
	c.cfgs[i].Listen = n.Addr().String() // a restart keeps the address
	return nil
}

// restart closes node i and starts it again on the same data and address.
func (c *cluster) restart(i int) {
	c.t.Helper()
	if err := c.nodes[i].Close(); err != nil {
		c.t.Fatalf("close node %d: %v", i, err)
	}
	c.nodes[i] = nil
	if err := c.boot(i); err != nil {
		c.t.Fatalf("restart node %d: %v", i, err)
	}
}

// stop closes node i; start brings it back on the same data and address.
func (c *cluster) stop(i int) {
	c.t.Helper()
	if err := c.nodes[i].Close(); err != nil {
		c.t.Fatalf("close node %d: %v", i, err)
	}
}

func (c *cluster) start(i int) {
	c.t.Helper()
	if err := c.boot(i); err != nil {
		c.t.Fatalf("start node %d: %v", i, err)
	}
}

// client is a client bootstrapped from node i only.
func (c *cluster) client(i int, opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.nodes[i].Advertised())}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// createTopic creates topic with one replica per partition, partition p on
// node leaders[p].
func (c *cluster) createTopic(ctx context.Context, cl *kgo.Client, topic string, leaders ...int32) {
	c.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, leader := range leaders {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), []int32{leader}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		c.t.Fatalf("create %s: %v", topic, err)
	}
	// On a loaded machine the client may send the request again after
	// the first, forwarded to the controller, created the topic but
	// answered late: the topic exists then, and waitLeaders checks it
	// is the one asked for.
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		c.t.Fatalf("create %s: %v", topic, err)
	}
	c.waitLeaders(ctx, topic, leaders)
}

// waitLeaders waits until every node's Metadata shows topic with the given
// leaders, so any node routes requests alike.
func (c *cluster) waitLeaders(ctx context.Context, topic string, want []int32) {
	c.t.Helper()
	testkit.WaitFor(c.t, topic+" led as placed on every node", func() (bool, string) {
		for i := range c.nodes {
			got := c.leaders(ctx, i, topic)
			if !slices.Equal(got, want) {
				return false, fmt.Sprintf("node %d shows leaders %v", i, got)
			}
		}
		return true, ""
	})
}

// leaders is the leader of each partition of topic as node i's Metadata
// has it.
func (c *cluster) leaders(ctx context.Context, i int, topic string) []int32 {
	c.t.Helper()
	cl := c.client(i)
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return nil
	}
	out := make([]int32, len(resp.Topics[0].Partitions))
	for _, p := range resp.Topics[0].Partitions {
		out[p.Partition] = p.Leader
	}
	return out
}

// findCoordinator asks node i for the coordinator of key.
func (c *cluster) findCoordinator(ctx context.Context, i int, keyType int8, key string) (int32, error) {
	cl := c.client(i)
	defer cl.Close()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKeys = keyType, []string{key}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return -1, err
	}
	co := resp.Coordinators[0]
	return co.NodeID, kerr.ErrorForCode(co.ErrorCode)
}

// keyLedBy returns a key with the given prefix whose partition of the
// internal topic (created by a first FindCoordinator) is led by node.
func (c *cluster) keyLedBy(ctx context.Context, keyType int8, topic, prefix string, node int32) string {
	c.t.Helper()
	testkit.WaitFor(c.t, topic+" created", func() (bool, string) {
		_, err := c.findCoordinator(ctx, 0, keyType, prefix)
		return err == nil, fmt.Sprint(err)
	})
	var leaders []int32
	testkit.WaitFor(c.t, topic+" led on every node", func() (bool, string) {
		leaders = c.leaders(ctx, 0, topic)
		return len(leaders) == clusterInternalPartitions && !slices.Contains(leaders, -1), fmt.Sprint(leaders)
	})
	for i := range 1000 {
		key := fmt.Sprintf("%s-%d", prefix, i)
		if leaders[metadata.CoordinatorPartition(key, clusterInternalPartitions)] == node {
			return key
		}
	}
	c.t.Fatalf("no %s key of %s is led by node %d (leaders %v)", prefix, topic, node, leaders)
	return ""
}

// consumeValues polls cl, a consumer of a group, until the values of
// [from, to) have arrived, each once and no other (the records' values
// are their numbers), commits them, and returns the offset after the last
// record consumed of each partition.
func consumeValues(ctx context.Context, t *testing.T, cl *kgo.Client, from, to int) map[int32]int64 {
	t.Helper()
	seen := make(map[int]bool)
	next := make(map[int32]int64)
	testkit.WaitFor(t, fmt.Sprintf("records %d..%d consumed", from, to-1), func() (bool, string) {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			v, _ := strconv.Atoi(string(r.Value))
			if v < from || v >= to || seen[v] {
				t.Errorf("record %d consumed, want each of %d..%d once", v, from, to-1)
			}
			seen[v] = true
			next[r.Partition] = r.Offset + 1
		})
		return len(seen) == to-from, fmt.Sprintf("%d of %d", len(seen), to-from)
	})
	testkit.WaitFor(t, "offsets committed", func() (bool, string) {
		err := cl.CommitUncommittedOffsets(ctx)
		return err == nil, fmt.Sprint(err)
	})
	return next
}

// TestClusterConsumerGroupOnAnotherNode: a consumer group whose coordinator
// is not the node its client bootstraps from consumes a topic spread over
// three nodes and commits; every node names the same coordinator, the
// others answer NOT_COORDINATOR, and a restart of the coordinator's node
// moves nothing and keeps the offsets, the same consumer carrying on.
func TestClusterConsumerGroupOnAnotherNode(t *testing.T) {
	c := startCluster(t, 3)
	ctx := testkit.Context(t)
	admin := c.client(0, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	c.createTopic(ctx, admin, "spread", 0, 1, 2, 0, 1, 2)
	const coordinator = 2
	group := c.keyLedBy(ctx, 0, "__consumer_offsets", "group", coordinator)
	for i := range c.nodes {
		if got, err := c.findCoordinator(ctx, i, 0, group); err != nil || got != coordinator {
			t.Fatalf("node %d names coordinator %d (%v), want %d", i, got, err, coordinator)
		}
	}

	produce := func(from, to int) {
		t.Helper()
		for v := from; v < to; v++ {
			r := &kgo.Record{Topic: "spread", Partition: int32(v % 6), Value: []byte(strconv.Itoa(v))}
			if err := admin.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", v, err)
			}
		}
	}
	produce(0, 60)
	consumer := c.client(0,
		kgo.ConsumerGroup(group), kgo.ConsumeTopics("spread"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.SessionTimeout(6*time.Second),
		kgo.HeartbeatInterval(100*time.Millisecond))
	consume := func(from, to int) { consumeValues(ctx, t, consumer, from, to) }
	consume(0, 60)
	committed := func(node int) map[int32]int64 {
		t.Helper()
		offsets, err := kadm.NewClient(c.client(node)).FetchOffsets(ctx, group)
		if err != nil {
			t.Fatalf("fetch offsets through node %d: %v", node, err)
		}
		out := make(map[int32]int64)
		offsets.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
		return out
	}
	want := map[int32]int64{0: 10, 1: 10, 2: 10, 3: 10, 4: 10, 5: 10}
	if got := committed(1); !maps.Equal(got, want) {
		t.Fatalf("committed %v, want %v", got, want)
	}

	// A node that is not the coordinator refuses the group.
	for _, i := range []int{0, 1} {
		cl := c.client(i)
		req := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		req.Groups = append(req.Groups, rg)
		resp, err := req.RequestWith(ctx, cl.Broker(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := kerr.ErrorForCode(resp.Groups[0].ErrorCode); err != kerr.NotCoordinator {
			t.Errorf("OffsetFetch on node %d: %v, want NOT_COORDINATOR", i, err)
		}
	}

	c.restart(coordinator)
	for i := range c.nodes {
		testkit.WaitFor(t, fmt.Sprintf("node %d names the coordinator", i), func() (bool, string) {
			got, err := c.findCoordinator(ctx, i, 0, group)
			return err == nil && got == coordinator, fmt.Sprintf("%d, %v", got, err)
		})
	}
	c.waitLeaders(ctx, "spread", []int32{0, 1, 2, 0, 1, 2})
	var got map[int32]int64
	testkit.WaitFor(t, "offsets kept by the restarted coordinator", func() (bool, string) {
		offsets, err := kadm.NewClient(c.client(0)).FetchOffsets(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		got = make(map[int32]int64)
		offsets.Each(func(o kadm.OffsetResponse) { got[o.Partition] = o.At })
		return maps.Equal(got, want), fmt.Sprint(got)
	})
	produce(60, 66)
	consume(60, 66) // the same consumer carries on where it committed
	want = map[int32]int64{0: 11, 1: 11, 2: 11, 3: 11, 4: 11, 5: 11}
	if got := committed(0); !maps.Equal(got, want) {
		t.Fatalf("committed %v after the restart, want %v", got, want)
	}
}

// TestClusterFencedCoordinator: while the node leading a group's
// __consumer_offsets partition is fenced (cut off from the quorum, its
// heartbeats stop), the other nodes answer FindCoordinator
// COORDINATOR_NOT_AVAILABLE, as Kafka finds no live endpoint for that
// leader; once it is back they name it again.
func TestClusterFencedCoordinator(t *testing.T) {
	c := startCluster(t, 3, "broker.heartbeat.interval.ms", "50", "broker.session.timeout.ms", "500")
	ctx := testkit.Context(t)
	group := c.keyLedBy(ctx, 0, "__consumer_offsets", "fenced", 2)
	c.nodes[2].Isolate()
	testkit.WaitFor(t, "COORDINATOR_NOT_AVAILABLE for the fenced node's group", func() (bool, string) {
		got, err := c.findCoordinator(ctx, 0, 0, group)
		return err == kerr.CoordinatorNotAvailable && got == -1, fmt.Sprintf("%d, %v", got, err)
	})
	c.nodes[2].Heal()
	testkit.WaitFor(t, "node 2 named again", func() (bool, string) {
		got, err := c.findCoordinator(ctx, 0, 0, group)
		return err == nil && got == 2, fmt.Sprintf("%d, %v", got, err)
	})
}

// TestClusterTransactionsAcrossNodes: the transaction coordinator (node 0),
// the output partition's leader (node 1) and the group coordinator (node
// 2) are three different nodes. Transactional producers of both
// transaction versions commit and abort, an exactly-once copier commits
// its consumed offsets with its output, every node serves read_committed
// consumers exactly the committed records, and the markers have landed on
// the remote leaders: no open transaction holds back either partition's
// last stable offset.
func TestClusterTransactionsAcrossNodes(t *testing.T) {
	c := startCluster(t, 3)
	ctx := testkit.Context(t)
	const txnNode, outNode, groupNode = 0, 1, 2
	admin := c.client(outNode)
	c.createTopic(ctx, admin, "out", outNode)
	c.createTopic(ctx, admin, "in", groupNode)
	txnID := c.keyLedBy(ctx, 1, "__transaction_state", "txn", txnNode)
	group := c.keyLedBy(ctx, 0, "__consumer_offsets", "copier", groupNode)

	var committed []string // what read_committed must show, in order
	// Two producers, of transaction version 2 (franz-go's default against
	// klog) and of version 1 (capped at Kafka 3.9's APIs: AddPartitionsToTxn
	// and verification), each abort one transaction and commit one. They
	// bootstrap from the output's leader, not the coordinator.
	for _, tv := range []struct {
		name string
		opts []kgo.Opt
	}{{"tv2", nil}, {"tv1", []kgo.Opt{kgo.MaxVersions(kversion.V3_9_0())}}} {
		cl := c.client(outNode, append([]kgo.Opt{kgo.TransactionalID(txnID + "-" + tv.name),
			kgo.DefaultProduceTopic("out"), kgo.TransactionTimeout(20 * time.Second)}, tv.opts...)...)
		for _, commit := range []bool{false, true} {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			var values []string
			for i := range 3 {
				v := fmt.Sprintf("%s-%v-%d", tv.name, commit, i)
				if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
					t.Fatalf("%s: produce: %v", tv.name, err)
				}
				values = append(values, v)
			}
			if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
				t.Fatalf("%s: end (commit %v): %v", tv.name, commit, err)
			}
			if commit {
				committed = append(committed, values...)
			}
		}
	}

	// The exactly-once copier: consume "in", produce to "out", commit the
	// consumed offsets in the same transaction; its first transaction
	// aborts, and the session starts again from the committed offsets.
	for i := range 10 {
		if err := admin.ProduceSync(ctx, &kgo.Record{Topic: "in", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(c.nodes[outNode].Advertised()),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(20*time.Second),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics("in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.HeartbeatInterval(100*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	copied := make(map[string]bool)
	aborted := false
	copierTxns, copierRecords := 0, 0 // every transaction of the copier, and its records
	testkit.WaitFor(t, "10 records copied", func() (bool, string) {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := sess.PollFetches(pctx)
		cancel()
		if fs.NumRecords() == 0 {
			return false, fmt.Sprintf("%d copied", len(copied))
		}
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		var values []string
		fs.EachRecord(func(r *kgo.Record) {
			v := "copy-" + string(r.Value)
			values = append(values, v)
			if err := sess.Client().ProduceSync(ctx, &kgo.Record{Topic: "out", Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("copy: %v", err)
			}
		})
		ok, err := sess.End(ctx, kgo.TransactionEndTry(aborted))
		if err != nil {
			t.Fatalf("end: %v", err)
		}
		copierTxns++
		copierRecords += len(values)
		if ok {
			for _, v := range values {
				if copied[v] {
					t.Fatalf("%s copied twice", v)
				}
				copied[v] = true
			}
			committed = append(committed, values...)
		}
		aborted = true
		return len(copied) == 10, fmt.Sprintf("%d copied", len(copied))
	})

	if copierRecords == len(copied) {
		t.Fatalf("the copier's first transaction, to abort, copied nothing")
	}

	// The transaction coordinator's node restarts: it loads its
	// transactional ids again and coordinates the next transaction, its
	// markers still accepted by the other nodes.
	c.restart(txnNode)
	testkit.WaitFor(t, "a transaction after the coordinator's restart", func() (bool, string) {
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		v := "after-restart"
		if err := sess.Client().ProduceSync(ctx, &kgo.Record{Topic: "out", Value: []byte(v)}).FirstErr(); err != nil {
			sess.End(ctx, kgo.TryAbort)
			copierTxns++
			copierRecords++
			return false, err.Error()
		}
		ok, err := sess.End(ctx, kgo.TryCommit)
		copierTxns++
		copierRecords++
		if err != nil || !ok {
			return false, fmt.Sprintf("committed %v: %v", ok, err)
		}
		committed = append(committed, v)
		return true, ""
	})

	offsets, err := kadm.NewClient(c.client(txnNode)).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offsets.Lookup("in", 0); o.At != 10 {
		t.Fatalf("the copier's committed offset is %d, want 10", o.At)
	}

	// Every node serves read_committed consumers the committed records,
	// each once and in order, none of the aborted ones.
	for i := range c.nodes {
		cl := c.client(i, kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		var got []string
		testkit.WaitFor(t, fmt.Sprintf("node %d's consumer reads the committed records", i), func() (bool, string) {
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
			cancel()
			return len(got) >= len(committed), fmt.Sprint(got)
		})
		if !slices.Equal(got, committed) {
			t.Fatalf("read_committed through node %d:\n got %v\nwant %v", i, got, committed)
		}
	}

	// The markers are in the remote leaders' logs: one per transaction in
	// "out" (leader node 1), and the last stable offsets of "out" and of
	// the group's __consumer_offsets partition (leader node 2) reach their
	// high watermarks.
	raw := c.client(txnNode, kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.KeepControlRecords())
	var markers, records int
	testkit.WaitFor(t, "every record and marker of out read", func() (bool, string) {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		raw.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			if r.Attrs.IsControl() {
				markers++
			} else {
				records++
			}
		})
		cancel()
		// 4 producer transactions of 3 records, and the copier's. A
		// transaction the restart caught between its markers and its
		// completion has its markers written again once the coordinator
		// has loaded it, as in Kafka.
		return markers >= 4+copierTxns && records == 12+copierRecords,
			fmt.Sprintf("%d markers, %d records; want %d and %d", markers, records, 4+copierTxns, 12+copierRecords)
	})
	adm := kadm.NewClient(c.client(txnNode))
	offsetsPartition := metadata.CoordinatorPartition(group, clusterInternalPartitions)
	testkit.WaitFor(t, "last stable offsets at the high watermarks", func() (bool, string) {
		stable, err := adm.ListCommittedOffsets(ctx, "out", "__consumer_offsets")
		if err != nil {
			return false, err.Error()
		}
		ends, err := adm.ListEndOffsets(ctx, "out", "__consumer_offsets")
		if err != nil {
			return false, err.Error()
		}
		var view []string
		done := true
		for _, tp := range []struct {
			topic string
			p     int32
		}{{"out", 0}, {"__consumer_offsets", offsetsPartition}} {
			lso, _ := stable.Lookup(tp.topic, tp.p)
			hw, _ := ends.Lookup(tp.topic, tp.p)
			view = append(view, fmt.Sprintf("%s-%d: LSO %d, HW %d", tp.topic, tp.p, lso.Offset, hw.Offset))
			done = done && lso.Err == nil && hw.Err == nil && lso.Offset == hw.Offset && hw.Offset > 0
		}
		return done, strings.Join(view, "; ")
	})
	for i, n := range c.nodes {
		if n.PeerRequestsForTest() == 0 {
			t.Errorf("node %d sent no request to another node", i)
		}
	}
}

// TestClusterMarkersWaitForADownLeader: a transaction ends while the
// leader of one of its partitions is down; the coordinator keeps sending
// that marker, with backoff, and the partition gets it once its node is
// back: read_committed then shows the records, and the last stable offset
// reaches the high watermark. The marker to the live leader is written at
// once.
func TestClusterMarkersWaitForADownLeader(t *testing.T) {
	c := startCluster(t, 3)
	ctx := testkit.Context(t)
	admin := c.client(0, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	c.createTopic(ctx, admin, "two", 1, 2)
	txnID := c.keyLedBy(ctx, 1, "__transaction_state", "down", 0)
	cl := c.client(0, kgo.TransactionalID(txnID), kgo.TransactionTimeout(20*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "two", Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.nodes[2].Close(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit with a leader down: %v", err)
	}
	adm := kadm.NewClient(c.client(0))
	stableAtEnd := func(p int32) (bool, string) {
		// A down leader fails its own partition only (a shard error).
		stable, _ := adm.ListCommittedOffsets(ctx, "two")
		ends, _ := adm.ListEndOffsets(ctx, "two")
		lso, lok := stable.Lookup("two", p)
		hw, hok := ends.Lookup("two", p)
		return lok && hok && lso.Err == nil && hw.Err == nil && lso.Offset == hw.Offset && hw.Offset == 2,
			fmt.Sprintf("two-%d: LSO %d (%v), HW %d (%v)", p, lso.Offset, lso.Err, hw.Offset, hw.Err)
	}
	testkit.WaitFor(t, "the live leader's marker", func() (bool, string) { return stableAtEnd(0) })
	c.start(2)
	testkit.WaitFor(t, "the marker on the restarted leader", func() (bool, string) { return stableAtEnd(1) })
	reader := c.client(2, kgo.ConsumeTopics("two"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	got := 0
	testkit.WaitFor(t, "both records read_committed", func() (bool, string) {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		got += reader.PollFetches(pctx).NumRecords()
		cancel()
		return got == 2, fmt.Sprintf("%d records", got)
	})
}

// TestSingleNodeSendsNoPeerRequests: on one node every partition and
// coordinator is local, so transactions of both versions send nothing to
// another node.
func TestSingleNodeSendsNoPeerRequests(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "local"); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]kgo.Opt{nil, {kgo.MaxVersions(kversion.V3_9_0())}} {
		cl := transactionalClient(t, n, fmt.Sprintf("local-txn-%d", len(opts)), append(opts, kgo.DefaultProduceTopic("local"))...)
		for _, commit := range []bool{false, true} {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := consumeAll(ctx, t, n, "local", kgo.ReadCommitted()); len(got) != 2 {
		t.Fatalf("read committed %v, want 2 records", got)
	}
	if sent := n.Broker().PeerRequestsForTest(); sent != 0 {
		t.Fatalf("a single node sent %d requests to other nodes", sent)
	}
}
