package broker_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// replicatedCoordinators makes the internal topics RF 3 with min ISR 2 on
// a three-node cluster, fences a stopped node within about a second, and
// holds a follower's fetch at its leader for up to 3 s when there is no
// new data: a follower then learns the leader's high watermark only a
// fetch after it has the records, so at the failover the new leader's
// high watermark is below its last coordinator records, the case loading
// to the log end exists for.
var replicatedCoordinators = []string{
	"offsets.topic.replication.factor", "3",
	"transaction.state.log.replication.factor", "3",
	"transaction.state.log.min.isr", "2",
	"default.replication.factor", "3",
	"min.insync.replicas", "2",
	"broker.heartbeat.interval.ms", "100",
	"broker.session.timeout.ms", "1500",
	"replica.fetch.wait.max.ms", "3000",
}

// createOnEveryNode creates a one-partition topic replicated on nodes 0,
// 1 and 2, led by node 0, and waits until every node shows that leader.
func (c *cluster) createOnEveryNode(ctx context.Context, cl *kgo.Client, topic string) {
	c.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Partition, a.Replicas = 0, []int32{0, 1, 2}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	}
	if err != nil {
		c.t.Fatalf("create %s: %v", topic, err)
	}
	c.waitLeaders(ctx, topic, []int32{0})
}

// waitFullISR waits until every partition of topic has all three nodes in
// its ISR, as node i reports it: every replica can then be elected.
func (c *cluster) waitFullISR(ctx context.Context, i int, topic string) {
	c.t.Helper()
	adm := kadm.NewClient(c.client(i))
	testkit.WaitFor(c.t, topic+" fully in sync", func() (bool, string) {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil || td[topic].Err != nil {
			return false, fmt.Sprint(err, td[topic].Err)
		}
		for _, p := range td[topic].Partitions {
			if len(p.ISR) != 3 {
				return false, fmt.Sprintf("partition %d ISR %v", p.Partition, p.ISR)
			}
		}
		return len(td[topic].Partitions) > 0, "no partitions"
	})
}

// waitCoordinatorMoved waits until node i names a coordinator of key
// other than gone, without error, and returns it.
func (c *cluster) waitCoordinatorMoved(ctx context.Context, i int, keyType int8, key string, gone int32) int32 {
	c.t.Helper()
	var got int32
	testkit.WaitFor(c.t, fmt.Sprintf("a coordinator for %s other than node %d", key, gone), func() (bool, string) {
		var err error
		got, err = c.findCoordinator(ctx, i, keyType, key)
		return err == nil && got >= 0 && got != gone, fmt.Sprintf("%d, %v", got, err)
	})
	return got
}

// TestClusterGroupCoordinatorFailover: with __consumer_offsets replicated
// on three nodes, the node coordinating a group stops right after the
// group's last commit. The replica elected in its place loads the group's
// offsets to its log end, so the last commit is there, and a new consumer
// of the group, through another node, carries on from it: it reads
// exactly the records produced since. The old coordinator, back as a
// follower, answers NOT_COORDINATOR.
func TestClusterGroupCoordinatorFailover(t *testing.T) {
	c := startCluster(t, 3, replicatedCoordinators...)
	ctx := testkit.Context(t)
	admin := c.client(0)
	if _, err := kadm.NewClient(admin).CreateTopic(ctx, 3, 3, nil, "events"); err != nil {
		t.Fatal(err)
	}
	const coordinator = 2
	group := c.keyLedBy(ctx, 0, "__consumer_offsets", "failover", coordinator)
	c.waitFullISR(ctx, 0, "__consumer_offsets")

	produce := func(from, to int) {
		t.Helper()
		for v := from; v < to; v++ {
			if err := admin.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte(strconv.Itoa(v))}).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", v, err)
			}
		}
	}
	// consume reads the values [from, to) through node, in the group,
	// and commits.
	consume := func(node, from, to int) map[int32]int64 {
		t.Helper()
		cl := c.client(node, kgo.ConsumerGroup(group), kgo.ConsumeTopics("events"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
			kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(100*time.Millisecond))
		defer cl.Close()
		return consumeValues(ctx, t, cl, from, to)
	}
	produce(0, 30)
	want := consume(0, 0, 30)
	c.stop(coordinator) // at once: its followers have not heard the last commit is committed

	moved := c.waitCoordinatorMoved(ctx, 0, 0, group, coordinator)
	var got map[int32]int64
	testkit.WaitFor(t, "the committed offsets on the new coordinator", func() (bool, string) {
		offsets, err := kadm.NewClient(c.client(0)).FetchOffsets(ctx, group)
		if err != nil {
			return false, err.Error() // COORDINATOR_LOAD_IN_PROGRESS while it loads
		}
		got = make(map[int32]int64)
		offsets.Each(func(o kadm.OffsetResponse) { got[o.Partition] = o.At })
		return len(got) > 0, "no offsets"
	})
	if !maps.Equal(got, want) {
		t.Fatalf("node %d coordinates with offsets %v, want the last commit's %v", moved, got, want)
	}
	produce(30, 40)
	consume(1, 30, 40) // through another node, from the committed offsets

	c.start(coordinator)
	cl := c.client(coordinator)
	testkit.WaitFor(t, "the old coordinator refuses the group", func() (bool, string) {
		req := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		req.Groups = append(req.Groups, rg)
		resp, err := req.RequestWith(ctx, cl.Broker(coordinator))
		if err != nil {
			return false, err.Error()
		}
		err = kerr.ErrorForCode(resp.Groups[0].ErrorCode)
		return err == kerr.NotCoordinator, fmt.Sprint(err)
	})
}

// TestClusterTransactionCoordinatorFailover: with __transaction_state
// replicated on three nodes, the node coordinating two transactional ids
// stops right after one committed a transaction and while the other has
// one open. The new coordinator loads both to its log end: a producer
// with the open id's transactional.id initialises, which fences the old
// producer and aborts its transaction, and commits; the other producer
// carries on and commits. read_committed shows exactly the committed
// records, and no transaction is left hanging: the output's last stable
// offset reaches its high watermark.
func TestClusterTransactionCoordinatorFailover(t *testing.T) {
	c := startCluster(t, 3, replicatedCoordinators...)
	ctx := testkit.Context(t)
	const coordinator = 2
	c.createOnEveryNode(ctx, c.client(0), "out")
	committer := c.keyLedBy(ctx, 1, "__transaction_state", "commit", coordinator)
	opener := c.keyLedBy(ctx, 1, "__transaction_state", "open", coordinator)
	c.waitFullISR(ctx, 0, "__transaction_state")
	c.waitFullISR(ctx, 0, "out")

	producer := func(id string) *kgo.Client {
		return c.client(0, kgo.TransactionalID(id), kgo.DefaultProduceTopic("out"),
			kgo.TransactionTimeout(time.Minute)) // no timeout aborts for it
	}
	// transaction produces values in one transaction of cl and ends it.
	transaction := func(cl *kgo.Client, commit bool, values ...string) error {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		for _, v := range values {
			if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				cl.EndTransaction(ctx, kgo.TryAbort)
				return err
			}
		}
		if !commit {
			return nil
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			cl.EndTransaction(ctx, kgo.TryAbort)
			return err
		}
		return nil
	}
	a := producer(committer)
	if err := transaction(a, true, "a-0", "a-1", "a-2"); err != nil {
		t.Fatal(err)
	}
	b := producer(opener)
	if err := transaction(b, false, "b-0", "b-1"); err != nil {
		t.Fatal(err)
	}
	c.stop(coordinator) // b's transaction is open

	for _, id := range []string{committer, opener} {
		c.waitCoordinatorMoved(ctx, 0, 1, id, coordinator)
	}
	b2 := producer(opener)
	testkit.WaitFor(t, "a new producer of the open id commits", func() (bool, string) {
		err := transaction(b2, true, "b2-0")
		return err == nil, fmt.Sprint(err)
	})
	testkit.WaitFor(t, "the committing producer carries on", func() (bool, string) {
		err := transaction(a, true, "a-3")
		return err == nil, fmt.Sprint(err)
	})
	if err := b.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the producer whose transaction was open committed after the new producer's init")
	}

	adm := kadm.NewClient(c.client(0))
	testkit.WaitFor(t, "no hanging transaction in out", func() (bool, string) {
		stable, err := adm.ListCommittedOffsets(ctx, "out")
		if err != nil {
			return false, err.Error()
		}
		ends, err := adm.ListEndOffsets(ctx, "out")
		if err != nil {
			return false, err.Error()
		}
		lso, _ := stable.Lookup("out", 0)
		hw, _ := ends.Lookup("out", 0)
		return lso.Err == nil && hw.Err == nil && lso.Offset == hw.Offset,
			fmt.Sprintf("LSO %d (%v), HW %d (%v)", lso.Offset, lso.Err, hw.Offset, hw.Err)
	})
	c.wantCommitted(ctx, 1, "out", "a-0", "a-1", "a-2", "b2-0", "a-3")
}

// wantCommitted reads topic from its start through node i, read_committed,
// and fails unless it holds exactly the values want, in order.
func (c *cluster) wantCommitted(ctx context.Context, i int, topic string, want ...string) {
	c.t.Helper()
	reader := c.client(i, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var got []string
	testkit.WaitFor(c.t, "the committed records of "+topic+" read_committed", func() (bool, string) {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		reader.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		cancel()
		return len(got) >= len(want), fmt.Sprint(got)
	})
	if !slices.Equal(got, want) {
		c.t.Fatalf("read_committed %s: %v, want %v", topic, got, want)
	}
}

// TestClusterFailoverCompletesPreparedCommit: a transaction's commit is
// decided (PrepareCommit written) while the leader of its partition is
// down, so its marker cannot be written, and then the coordinator's node
// stops too. The replica elected in its place loads the transaction in
// PrepareCommit and writes the marker once the partition's leader is
// back, as Kafka's TransactionStateManager completes the transactions it
// loads in PrepareCommit or PrepareAbort: read_committed then shows the
// records and a producer with the same transactional.id carries on. A
// fourth node, broker only, leads the partition, so that the quorum of
// three voters outlives both faults.
func TestClusterFailoverCompletesPreparedCommit(t *testing.T) {
	c := startClusterOf(t, 4, 3, replicatedCoordinators...)
	ctx := testkit.Context(t)
	const coordinator, dataLeader = 2, 3
	c.createTopic(ctx, c.client(0), "held", dataLeader)
	txnID := c.keyLedBy(ctx, 1, "__transaction_state", "held", coordinator)
	c.waitFullISR(ctx, 0, "__transaction_state")
	producer := func() *kgo.Client {
		return c.client(0, kgo.TransactionalID(txnID), kgo.DefaultProduceTopic("held"),
			kgo.TransactionTimeout(time.Minute))
	}
	cl := producer()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"h-0", "h-1"} {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	c.stop(dataLeader)
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit with the partition's leader down: %v", err)
	}
	cl.Close()
	c.stop(coordinator) // the marker still pending: PrepareCommit is the state it leaves
	moved := c.waitCoordinatorMoved(ctx, 0, 1, txnID, coordinator)
	c.start(dataLeader)

	adm := kadm.NewClient(c.client(0))
	testkit.WaitFor(t, fmt.Sprintf("the commit completed by node %d", moved), func() (bool, string) {
		stable, err := adm.ListCommittedOffsets(ctx, "held")
		if err != nil {
			return false, err.Error()
		}
		lso, _ := stable.Lookup("held", 0)
		return lso.Err == nil && lso.Offset == 3, fmt.Sprintf("LSO %d (%v), want 3: two records and the marker", lso.Offset, lso.Err)
	})
	next := producer()
	testkit.WaitFor(t, "a new producer of the id commits", func() (bool, string) {
		if err := next.BeginTransaction(); err != nil {
			return false, err.Error()
		}
		err := next.ProduceSync(ctx, kgo.StringRecord("h-2")).FirstErr()
		if err == nil {
			err = next.EndTransaction(ctx, kgo.TryCommit)
		}
		if err != nil {
			next.EndTransaction(ctx, kgo.TryAbort)
		}
		return err == nil, fmt.Sprint(err)
	})
	c.wantCommitted(ctx, 1, "held", "h-0", "h-1", "h-2")
}

// TestClusterTransactionStateNeedsMinISR: transaction state writes are
// acks=all appends, as Kafka's TransactionStateManager makes them
// (EnforcedRequiredAcks): with __transaction_state's ISR below its
// min.insync.replicas (3 here, one node down) InitProducerId is answered
// COORDINATOR_NOT_AVAILABLE, which clients retry, and succeeds once the
// node is back in the ISR.
func TestClusterTransactionStateNeedsMinISR(t *testing.T) {
	c := startCluster(t, 3, append(slices.Clone(replicatedCoordinators), "transaction.state.log.min.isr", "3")...)
	ctx := testkit.Context(t)
	const coordinator, follower = 0, 2
	txnID := c.keyLedBy(ctx, 1, "__transaction_state", "minisr", coordinator)
	c.waitFullISR(ctx, 0, "__transaction_state")
	cl := c.client(coordinator)
	initProducerID := func() error {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(txnID), 60000
		resp, err := req.RequestWith(ctx, cl.Broker(coordinator))
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	if err := initProducerID(); err != nil {
		t.Fatalf("InitProducerId with the full ISR: %v", err)
	}
	c.stop(follower)
	adm := kadm.NewClient(c.client(coordinator))
	testkit.WaitFor(t, fmt.Sprintf("node %d out of __transaction_state's ISR", follower), func() (bool, string) {
		td, err := adm.ListTopics(ctx, "__transaction_state")
		if err != nil {
			return false, err.Error()
		}
		for _, p := range td["__transaction_state"].Partitions {
			if slices.Contains(p.ISR, follower) {
				return false, fmt.Sprintf("partition %d ISR %v", p.Partition, p.ISR)
			}
		}
		return true, ""
	})
	if err := initProducerID(); err != kerr.CoordinatorNotAvailable {
		t.Fatalf("InitProducerId with 2 of min.insync.replicas 3 in the ISR: %v, want COORDINATOR_NOT_AVAILABLE", err)
	}
	c.start(follower)
	testkit.WaitFor(t, "InitProducerId once the node is back", func() (bool, string) {
		err := initProducerID()
		return err == nil, fmt.Sprint(err)
	})
}
