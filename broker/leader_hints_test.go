package broker_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/internal/testkit"
)

// Leader hints (KIP-951) and leader epochs (KIP-320) once leadership has
// moved: with the first leader stopped, the new leader leads at epoch 1
// and the remaining follower follows it. Produce v10+ refused
// NOT_LEADER_OR_FOLLOWER and Fetch v16+ refused NOT_LEADER_OR_FOLLOWER or
// FENCED_LEADER_EPOCH carry the current leader, its epoch and its
// endpoint, as Kafka's KafkaApis does (older versions carry none); Fetch,
// ListOffsets and OffsetForLeaderEpoch check the client's epoch before
// leadership, so the follower answers a stale epoch FENCED_LEADER_EPOCH
// and a future one UNKNOWN_LEADER_EPOCH, as Kafka's Partition.getLocalLog
// does. Without replica.selector.class the leader serves every consumer
// itself, whatever its rack.
func TestLeaderHints(t *testing.T) {
	q := newQuorum(t, 3, func(i int, cfg *broker.Config) {
		cfg.Configs["broker.rack"] = rackOf(int32(i))
	})
	ctx := testkit.Context(t)
	const topic = "hints"
	mt := replicatedTopic(t, ctx, q.nodes, topic)
	first := mt.Partitions[0].Leader
	q.stop(int(first))
	var leader, follower int32 = -1, -1
	testkit.WaitFor(t, "a new leader at epoch 1, followed by the other node", func() (bool, string) {
		var states []string
		leader, follower = -1, -1
		for i, n := range q.nodes {
			if int32(i) == first {
				continue
			}
			st := n.PartitionForTest(topic, 0).LeaderState()
			states = append(states, fmt.Sprintf("node %d: leader %d epoch %d", i, st.Leader, st.Epoch))
			if st.Epoch != 1 || st.Leader < 0 || st.Leader == first {
				return false, fmt.Sprint(states)
			}
			if st.Leader == int32(i) {
				leader = int32(i)
			} else {
				follower = int32(i)
			}
		}
		return leader >= 0 && follower >= 0, fmt.Sprint(states)
	})
	host, port, err := net.SplitHostPort(q.nodes[leader].Advertised())
	if err != nil {
		t.Fatal(err)
	}
	portNum, _ := strconv.Atoi(port)
	leaderRack := rackOf(leader)
	lr, fr := dialRaw(t, q.nodes[leader].Advertised()), dialRaw(t, q.nodes[follower].Advertised())
	if got := produceTo(t, lr, mt, -1, 10000, rawBatch("a", "b")); got.ErrorCode != 0 {
		t.Fatalf("produce to the new leader: %v", kerr.ErrorForCode(got.ErrorCode))
	}

	wantBroker := func(what string, id int32, h string, p int32, rack *string) {
		t.Helper()
		if id != leader || h != host || int(p) != portNum || rack == nil || *rack != leaderRack {
			t.Errorf("%s: endpoint %d %s:%d rack %v, want %d %s:%s rack %s", what, id, h, p, rack, leader, host, port, leaderRack)
		}
	}

	// Produce.
	for _, version := range []int16{9, 10, 13} {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(version)
		req.Acks, req.TimeoutMillis = 1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = topic, mt.TopicID
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = rawBatch("c")
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := rawDo[*kmsg.ProduceResponse](t, fr, req)
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("Produce v%d to the follower: %v", version, kerr.ErrorForCode(sp.ErrorCode))
		}
		hinted := version >= 10
		if got := sp.CurrentLeader; hinted != (got.LeaderID == leader && got.LeaderEpoch == 1) || !hinted && (got.LeaderID != -1 || got.LeaderEpoch != -1) {
			t.Errorf("Produce v%d: current leader %d at %d, hinted %v (leader %d)", version, got.LeaderID, got.LeaderEpoch, hinted, leader)
		}
		if !hinted {
			if len(resp.Brokers) != 0 {
				t.Errorf("Produce v%d: %d endpoints", version, len(resp.Brokers))
			}
			continue
		}
		if len(resp.Brokers) != 1 {
			t.Errorf("Produce v%d: endpoints %+v, want the leader's", version, resp.Brokers)
			continue
		}
		b := resp.Brokers[0]
		wantBroker(fmt.Sprintf("Produce v%d", version), b.NodeID, b.Host, b.Port, b.Rack)
	}

	// Fetch.
	fetch := func(r *rawConn, version int16, replica int32, rack string, epoch int32) *kmsg.FetchResponse {
		t.Helper()
		req := fetchRequest(topic, 1, 1<<20, 1<<20)
		req.SetVersion(version)
		req.ReplicaID, req.ReplicaState.ID, req.Rack = replica, replica, rack
		req.Topics[0].TopicID = mt.TopicID
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = epoch
		return rawDo[*kmsg.FetchResponse](t, r, req)
	}
	for _, tc := range []struct {
		name    string
		at      *rawConn
		version int16
		replica int32
		epoch   int32
		code    *kerr.Error
	}{
		{"consumer at the follower, current epoch", fr, 16, -1, 1, nil},
		{"consumer at the follower, no epoch", fr, 16, -1, -1, nil},
		{"consumer at the follower, stale epoch", fr, 16, -1, 0, kerr.FencedLeaderEpoch},
		{"consumer at the follower, stale epoch, v15", fr, 15, -1, 0, kerr.FencedLeaderEpoch},
		{"consumer at the follower, future epoch", fr, 16, -1, 2, kerr.UnknownLeaderEpoch},
		{"consumer at the follower, v10", fr, 10, -1, 1, kerr.NotLeaderForPartition},
		{"replica fetch at the follower", fr, 16, leader, 1, kerr.NotLeaderForPartition},
		{"replica fetch at the follower, v15", fr, 15, leader, 1, kerr.NotLeaderForPartition},
		{"consumer at the leader, stale epoch", lr, 16, -1, 0, kerr.FencedLeaderEpoch},
		{"consumer at the leader, future epoch", lr, 16, -1, 2, kerr.UnknownLeaderEpoch},
		{"replica fetch from no replica, current epoch", lr, 16, 7, 1, kerr.UnknownLeaderEpoch},
		{"replica fetch from no replica, no epoch", lr, 16, 7, -1, kerr.NotLeaderForPartition},
	} {
		resp := fetch(tc.at, tc.version, tc.replica, "", tc.epoch)
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != codeOf(tc.code) {
			t.Errorf("Fetch v%d, %s: %v, want %v", tc.version, tc.name, kerr.ErrorForCode(sp.ErrorCode), tc.code)
			continue
		}
		hinted := tc.version >= 16 && (tc.code == kerr.NotLeaderForPartition || tc.code == kerr.FencedLeaderEpoch)
		if got := sp.CurrentLeader; hinted != (got.LeaderID == leader && got.LeaderEpoch == 1) || !hinted && (got.LeaderID != -1 || got.LeaderEpoch != -1) {
			t.Errorf("Fetch v%d, %s: current leader %d at %d, hinted %v (leader %d)", tc.version, tc.name, got.LeaderID, got.LeaderEpoch, hinted, leader)
		}
		if !hinted {
			if len(resp.Brokers) != 0 {
				t.Errorf("Fetch v%d, %s: %d endpoints", tc.version, tc.name, len(resp.Brokers))
			}
			continue
		}
		if len(resp.Brokers) != 1 {
			t.Errorf("Fetch v%d, %s: endpoints %+v, want the leader's", tc.version, tc.name, resp.Brokers)
			continue
		}
		b := resp.Brokers[0]
		wantBroker(fmt.Sprintf("Fetch v%d, %s", tc.version, tc.name), b.NodeID, b.Host, b.Port, b.Rack)
	}
	// No replica.selector.class: the leader serves a consumer in the
	// follower's rack itself.
	if sp := fetch(lr, 16, -1, rackOf(follower), 1).Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.PreferredReadReplica != -1 || len(sp.RecordBatches) == 0 {
		t.Errorf("consumer in rack %s without a selector: %v, preferred %d, %d bytes", rackOf(follower), kerr.ErrorForCode(sp.ErrorCode), sp.PreferredReadReplica, len(sp.RecordBatches))
	}

	// ListOffsets and OffsetForLeaderEpoch.
	for _, tc := range []struct {
		name  string
		at    *rawConn
		epoch int32
		code  *kerr.Error
	}{
		{"follower, stale epoch", fr, 0, kerr.FencedLeaderEpoch},
		{"follower, future epoch", fr, 2, kerr.UnknownLeaderEpoch},
		{"follower, current epoch", fr, 1, kerr.NotLeaderForPartition},
		{"follower, no epoch", fr, -1, kerr.NotLeaderForPartition},
		{"leader, stale epoch", lr, 0, kerr.FencedLeaderEpoch},
		{"leader, future epoch", lr, 2, kerr.UnknownLeaderEpoch},
		{"leader, current epoch", lr, 1, nil},
	} {
		lo := kmsg.NewPtrListOffsetsRequest()
		lo.SetVersion(10)
		lo.ReplicaID = -1
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = topic
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Timestamp, lp.CurrentLeaderEpoch = -1, tc.epoch
		lt.Partitions = append(lt.Partitions, lp)
		lo.Topics = append(lo.Topics, lt)
		sp := rawDo[*kmsg.ListOffsetsResponse](t, tc.at, lo).Topics[0].Partitions[0]
		if sp.ErrorCode != codeOf(tc.code) || tc.code == nil && sp.Offset != 2 {
			t.Errorf("ListOffsets at the %s: %v offset %d, want %v", tc.name, kerr.ErrorForCode(sp.ErrorCode), sp.Offset, tc.code)
		}

		oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
		oe.SetVersion(4)
		oe.ReplicaID = -1
		ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
		ot.Topic = topic
		op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		op.CurrentLeaderEpoch, op.LeaderEpoch = tc.epoch, 1
		ot.Partitions = append(ot.Partitions, op)
		oe.Topics = append(oe.Topics, ot)
		ep := rawDo[*kmsg.OffsetForLeaderEpochResponse](t, tc.at, oe).Topics[0].Partitions[0]
		if ep.ErrorCode != codeOf(tc.code) || tc.code == nil && (ep.LeaderEpoch != 1 || ep.EndOffset != 2) {
			t.Errorf("OffsetForLeaderEpoch at the %s: %v epoch %d end %d, want %v", tc.name, kerr.ErrorForCode(ep.ErrorCode), ep.LeaderEpoch, ep.EndOffset, tc.code)
		}
	}
}
