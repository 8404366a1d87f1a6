package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// createAssigned creates topic with one partition on replicas, in order.
func createAssigned(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, replicas ...int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// reassign sends one AlterPartitionReassignments of topic's partition 0
// (nil replicas cancels) and returns the partition's message and error.
func reassign(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, allowRFChange bool, replicas []int32) (string, error) {
	t.Helper()
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.AllowReplicationFactorChange = allowRFChange
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = 0, replicas
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("AlterPartitionReassignments: %v", err)
	}
	sp := resp.Topics[0].Partitions[0]
	msg := ""
	if sp.ErrorMessage != nil {
		msg = *sp.ErrorMessage
	}
	return msg, kerr.ErrorForCode(sp.ErrorCode)
}

// listReassignments returns the reassignments under way, as
// "topic-p replicas=[..] adding=[..] removing=[..]".
func listReassignments(ctx context.Context, t *testing.T, cl *kgo.Client) []string {
	t.Helper()
	resp, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			out = append(out, fmt.Sprintf("%s-%d replicas=%v adding=%v removing=%v", rt.Topic, p.Partition, p.Replicas, p.AddingReplicas, p.RemovingReplicas))
		}
	}
	return out
}

// partitionState is topic's partition 0 as Metadata has it.
func partitionState(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) kmsg.MetadataResponseTopicPartition {
	t.Helper()
	p, err := tryPartitionState(ctx, cl, topic)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tryPartitionState(ctx context.Context, cl *kgo.Client, topic string) (kmsg.MetadataResponseTopicPartition, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.MetadataResponseTopicPartition{}, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return kmsg.MetadataResponseTopicPartition{}, fmt.Errorf("metadata of %s: %+v", topic, resp.Topics)
	}
	return resp.Topics[0].Partitions[0], nil
}

// partitionOnAll is topic's partition 0 once every running node of c
// answers the same for it in Metadata (each answers from the metadata it
// has applied, which may trail the controller's for a moment).
func partitionOnAll(ctx context.Context, t *testing.T, c *brokertest.Cluster, topic string) kmsg.MetadataResponseTopicPartition {
	t.Helper()
	var p kmsg.MetadataResponseTopicPartition
	testkit.WaitFor(t, "every node to agree on "+topic, func() (bool, string) {
		var seen []string
		for _, n := range c.Nodes() {
			if !n.Running() {
				continue
			}
			q, err := tryPartitionState(ctx, n.Client(), topic)
			if err != nil {
				return false, err.Error()
			}
			seen = append(seen, fmt.Sprintf("replicas %v isr %v leader %d epoch %d", q.Replicas, q.ISR, q.Leader, q.LeaderEpoch))
			p = q
		}
		return len(slices.Compact(slices.Clone(seen))) == 1, fmt.Sprint(seen)
	})
	return p
}

func TestReassignmentMovesData(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 4)
	cl := c.Client()
	createAssigned(ctx, t, cl, "moved", 0, 1, 2)
	pc := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()))
	const records = 500
	for i := range records {
		if err := pc.ProduceSync(ctx, &kgo.Record{Topic: "moved", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	before := partitionState(ctx, t, cl, "moved")

	// Node 3 replaces node 0, the leader.
	if msg, err := reassign(ctx, t, cl, "moved", true, []int32{3, 1, 2}); err != nil {
		t.Fatalf("reassign: %v (%s)", err, msg)
	}
	testkit.WaitFor(t, "the reassignment to complete", func() (bool, string) {
		p := partitionOnAll(ctx, t, c, "moved")
		under := listReassignments(ctx, t, cl)
		return slices.Equal(p.Replicas, []int32{3, 1, 2}) && len(under) == 0,
			fmt.Sprintf("replicas %v isr %v leader %d; under way %v", p.Replicas, p.ISR, p.Leader, under)
	})
	after := partitionOnAll(ctx, t, c, "moved")
	if after.Leader == 0 || slices.Contains(after.ISR, 0) || after.LeaderEpoch <= before.LeaderEpoch {
		t.Fatalf("after the move: leader %d epoch %d isr %v; want node 0 gone and the epoch past %d",
			after.Leader, after.LeaderEpoch, after.ISR, before.LeaderEpoch)
	}
	// The data moved: node 3 holds every record, node 0 none any more.
	testkit.WaitFor(t, "node 3 to hold the records and node 0 to drop its replica", func() (bool, string) {
		p3 := c.Node(3).Broker().PartitionForTest("moved", 0)
		p0 := c.Node(0).Broker().PartitionForTest("moved", 0)
		if p3 == nil || p0 != nil {
			return false, fmt.Sprintf("node 3 has it: %v, node 0 has it: %v", p3 != nil, p0 != nil)
		}
		return p3.LogEndOffset() == records, fmt.Sprintf("node 3 log end %d", p3.LogEndOffset())
	})
	cc := c.Client(kgo.ConsumeTopics("moved"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := 0
	for seen < records {
		fs := cc.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != strconv.Itoa(seen) {
				t.Fatalf("record %d is %q", seen, r.Value)
			}
			seen++
		})
	}
	// Moving to the replicas it has already is no change at all.
	if msg, err := reassign(ctx, t, cl, "moved", false, []int32{3, 1, 2}); err != nil {
		t.Fatalf("reassign to the same replicas: %v (%s)", err, msg)
	}
	if got := partitionOnAll(ctx, t, c, "moved"); got.LeaderEpoch != after.LeaderEpoch {
		t.Fatalf("a no-op reassignment moved the leader epoch from %d to %d", after.LeaderEpoch, got.LeaderEpoch)
	}
}

func TestReassignmentCancelAndErrors(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 4)
	cl := c.Client()
	createAssigned(ctx, t, cl, "stuck", 0, 1, 2)
	// Node 3 is down, so the reassignment adding it cannot complete.
	c.Node(3).Close()
	if msg, err := reassign(ctx, t, cl, "stuck", true, []int32{3, 1, 2}); err != nil {
		t.Fatalf("reassign: %v (%s)", err, msg)
	}
	want := []string{"stuck-0 replicas=[3 1 2 0] adding=[3] removing=[0]"}
	if got := listReassignments(ctx, t, cl); !slices.Equal(got, want) {
		t.Fatalf("under way: %v; want %v", got, want)
	}
	if p := partitionOnAll(ctx, t, c, "stuck"); !slices.Equal(p.Replicas, []int32{3, 1, 2, 0}) || p.Leader != 0 {
		t.Fatalf("while reassigning: replicas %v leader %d", p.Replicas, p.Leader)
	}
	// Cancelling goes back to the original replicas, in the order the
	// reassignment left them (Kafka's PartitionReassignmentRevert drops
	// the added ones from the replica list): 0 now comes last.
	if msg, err := reassign(ctx, t, cl, "stuck", true, nil); err != nil {
		t.Fatalf("cancel: %v (%s)", err, msg)
	}
	if got := listReassignments(ctx, t, cl); len(got) != 0 {
		t.Fatalf("under way after the cancel: %v", got)
	}
	if p := partitionOnAll(ctx, t, c, "stuck"); !slices.Equal(p.Replicas, []int32{1, 2, 0}) || p.Leader != 0 {
		t.Fatalf("after the cancel: replicas %v leader %d", p.Replicas, p.Leader)
	}

	for _, tc := range []struct {
		name     string
		topic    string
		allow    bool
		replicas []int32
		want     error
		msg      string
	}{
		{"nothing to cancel", "stuck", true, nil, kerr.NoReassignmentInProgress, "No partition reassignment is in progress for the topic partition."},
		{"unknown topic", "nope", true, []int32{0}, kerr.UnknownTopicOrPartition, "Unable to find a topic named nope."},
		{"empty list", "stuck", true, []int32{}, kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list."},
		{"broker twice", "stuck", true, []int32{1, 1, 2}, kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker 1 more than once."},
		{"unknown broker", "stuck", true, []int32{7, 1, 2}, kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker 7, but no such broker is registered."},
		{"replication factor change refused", "stuck", false, []int32{1, 2}, kerr.InvalidReplicationFactor, "The replication factor is changed from 3 to 2"},
	} {
		msg, err := reassign(ctx, t, cl, tc.topic, tc.allow, tc.replicas)
		if err != tc.want || msg != tc.msg {
			t.Errorf("%s: %v %q; want %v %q", tc.name, err, msg, tc.want, tc.msg)
		}
	}
	// Shrinking with the change allowed completes at once: the replica
	// that stays is in the ISR already.
	if msg, err := reassign(ctx, t, cl, "stuck", true, []int32{1, 2}); err != nil {
		t.Fatalf("shrink: %v (%s)", err, msg)
	}
	p := partitionOnAll(ctx, t, c, "stuck")
	if !slices.Equal(p.Replicas, []int32{1, 2}) || p.Leader == 0 || len(listReassignments(ctx, t, cl)) != 0 {
		t.Fatalf("after the shrink: replicas %v leader %d isr %v", p.Replicas, p.Leader, p.ISR)
	}
}

// A follower whose log ends below its leader's log start (retention ran
// while it was down) restarts its log at the leader's log start, catches
// up and rejoins the ISR; while it follows, the leader's log start moves
// it along.
func TestFollowerBelowLeaderLogStart(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 3, brokertest.Config("log.retention.check.interval.ms", "100"))
	cl := c.Client()
	segment, retention := "400", "800"
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "short", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{0, 1, 2}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	for _, kv := range [][2]*string{{kmsg.StringPtr("internal.segment.bytes"), &segment}, {kmsg.StringPtr("retention.bytes"), &retention}} {
		rc := kmsg.NewCreateTopicsRequestTopicConfig()
		rc.Name, rc.Value = *kv[0], kv[1]
		rt.Configs = append(rt.Configs, rc)
	}
	req.Topics = append(req.Topics, rt)
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %v", err, resp)
	}
	pc := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("short"))
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := pc.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%03d-%060d", i, 0)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 5)
	c.Node(2).Close()
	produce(5, 60)
	leader := c.Node(0).Broker().PartitionForTest("short", 0)
	testkit.WaitFor(t, "retention to move the leader's log start past 5", func() (bool, string) {
		return leader.LogStartOffset() > 5, fmt.Sprintf("log start %d", leader.LogStartOffset())
	})
	c.Node(2).Start()
	testkit.WaitFor(t, "node 2 to catch up from the leader's log start and rejoin the ISR", func() (bool, string) {
		f := c.Node(2).Broker().PartitionForTest("short", 0)
		if f == nil {
			return false, "no replica"
		}
		p := partitionState(ctx, t, c.Node(2).Client(), "short")
		return f.LogEndOffset() == 60 && f.LogStartOffset() > 5 && slices.Contains(p.ISR, 2),
			fmt.Sprintf("node 2 log %d..%d, isr %v; leader log %d..", f.LogStartOffset(), f.LogEndOffset(), p.ISR, leader.LogStartOffset())
	})
}

// A follower's controlled shutdown takes it out of the ISR, and from then
// on it does not hold the high watermark back either: an acks=all produce
// right after it is acknowledged by the replicas left, well before
// replica.lag.time.max.ms (Kafka's isReplicaIsrEligible: a broker shutting
// down or fenced is not about to join the ISR however recently it caught
// up).
func TestAcksAllAfterFollowerShutdown(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 3, brokertest.Config("replica.lag.time.max.ms", "120000"))
	createAssigned(ctx, t, c.Client(), "steady", 0, 1, 2)
	partitionOnAll(ctx, t, c, "steady")
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.Produce.Int16(), 12) // by topic name
	cl := c.Node(0).Client(kgo.MaxVersions(v))   // the leader
	if sp := produceRaw(ctx, t, cl, "steady", 0, rawBatch("before")); sp.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(sp.ErrorCode))
	}
	c.Node(2).Close()
	// produceRaw waits 10 s, far below the lag time, which the produce
	// would wait for without the rule (and answer REQUEST_TIMED_OUT).
	if sp := produceRaw(ctx, t, cl, "steady", 0, rawBatch("after")); sp.ErrorCode != 0 {
		t.Fatalf("acks=all produce after node 2's controlled shutdown: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
}
