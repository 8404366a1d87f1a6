package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/kwire"
)

// The cluster corpus (-nodes 3): replication answers that need several
// nodes, against klog up -n 3 and kafka.sh start --nodes 3. Its cases
// share one scenario, run in order on both sides at once:
//
//  1. Two RF-3 topics, each with three records: "lead", led by the
//     victim (a node that is neither the bootstrap node nor the quorum
//     leader), min.insync.replicas 2; and "nisr", led by the bootstrap
//     node with the victim a follower, min.insync.replicas 3. Cases ask
//     followers and the whole cluster.
//  2. The victim is killed (SIGKILL: klog node kill, kafka.sh node kill).
//     Once it is fenced and out of both ISRs, and "lead" has a new leader
//     at epoch 1, cases ask for acks=all below min ISR and for stale and
//     future leader epochs.
//  3. The victim is started again. Once both ISRs hold three replicas, a
//     preferred election gives "lead" back to it (epoch 2), and
//     OffsetForLeaderEpoch answers for each epoch.
//
// The steps between phases are compared as nothing: they fail the run
// only when they cannot bring a side to the next phase in time.

// clusterState is one side's scenario: node ids and topic names.
type clusterState struct {
	boot, victim, other int32 // the bootstrap node, the node killed, the third
	lead, nisr          string
}

// clusterStep is an entry of the cluster corpus: a case, or a step
// between phases (run whatever -case selects, and never compared).
type clusterStep struct {
	testCase
	step bool
}

func clusterCorpus() []clusterStep {
	c := func(name string, run func(s *side) ([]kmsg.Response, error)) clusterStep {
		return clusterStep{testCase: testCase{name, run}}
	}
	// Where a case sends its request: one of the scenario's nodes, or a
	// topic's leader.
	boot := node(func(cs *clusterState) int32 { return cs.boot })
	other := node(func(cs *clusterState) int32 { return cs.other })
	leadLeader := leaderOf(func(cs *clusterState) string { return cs.lead })
	nisrLeader := leaderOf(func(cs *clusterState) string { return cs.nisr })
	step := func(name string, run func(s *side) error) clusterStep {
		return clusterStep{testCase: testCase{name, func(s *side) ([]kmsg.Response, error) { return nil, stepErr(run(s)) }}, step: true}
	}
	return []clusterStep{
		step("cluster-setup", (*side).clusterSetup),
		c("cluster-metadata-rf3", at(boot, func(cs *clusterState) kmsg.Request {
			return metadataReq(cs.lead, cs.nisr)
		})),
		c("cluster-describecluster", at(other, func(*clusterState) kmsg.Request {
			return kmsg.NewPtrDescribeClusterRequest()
		})),
		c("cluster-describequorum", describeQuorumShape),
		c("cluster-describelogdirs", at(other, func(cs *clusterState) kmsg.Request {
			return describeLogDirsReq(cs.lead, 0)
		})),
		c("cluster-electleaders-preferred-already", at(other, func(cs *clusterState) kmsg.Request {
			return electLeadersReq(0, cs.lead, 0)
		})),
		c("cluster-electleaders-unclean-leader-alive", at(boot, func(cs *clusterState) kmsg.Request {
			return electLeadersReq(1, cs.lead, 0)
		})),
		// A follower of "lead" (the bootstrap node) asked as its leader.
		c("cluster-produce-to-follower", at(boot, func(cs *clusterState) kmsg.Request {
			return kwire.ProduceRequest(cs.lead, 0, -1, plainBatch(1))
		})),
		c("cluster-fetch-follower-v12", at(boot, func(cs *clusterState) kmsg.Request {
			return fetchReq(cs.lead, 0, -1, 0)
		})),
		c("cluster-fetch-follower-v10", at(boot, func(cs *clusterState) kmsg.Request {
			req := fetchReq(cs.lead, 0, -1, 0)
			req.SetVersion(10) // before KIP-392's client metadata
			return req
		})),
		c("cluster-listoffsets-follower", at(boot, func(cs *clusterState) kmsg.Request {
			return listOffsetsReq(cs.lead, -1, -1, 0)
		})),
		c("cluster-offsetforleaderepoch-follower", at(boot, func(cs *clusterState) kmsg.Request {
			return offsetForEpochReq(cs.lead, -1, 0, 0)
		})),
		// DeleteRecords: a follower refuses it; the leader answers once
		// both followers dropped the records (the low watermark).
		c("cluster-deleterecords-follower", at(boot, func(cs *clusterState) kmsg.Request {
			return deleteRecordsReq(cs.lead, 0, 1)
		})),
		c("cluster-deleterecords-leader", at(nisrLeader, func(cs *clusterState) kmsg.Request {
			return deleteRecordsReq(cs.nisr, 0, 1)
		})),

		step("cluster-kill-victim", (*side).clusterKillVictim),
		// "nisr" has two replicas in sync of the three it asks for.
		c("cluster-produce-acks-all-isr-below-min", at(boot, func(cs *clusterState) kmsg.Request {
			return kwire.ProduceRequest(cs.nisr, 0, -1, plainBatch(2))
		})),
		c("cluster-produce-acks-one-isr-below-min", at(boot, func(cs *clusterState) kmsg.Request {
			return kwire.ProduceRequest(cs.nisr, 0, 1, plainBatch(2))
		})),
		c("cluster-metadata-replica-down", at(boot, func(cs *clusterState) kmsg.Request {
			return metadataReq(cs.lead, cs.nisr)
		})),
		c("cluster-describecluster-replica-down", at(boot, func(*clusterState) kmsg.Request {
			return kmsg.NewPtrDescribeClusterRequest()
		})),
		// "lead" at its new leader, epoch 1, two replicas in sync of two.
		c("cluster-produce-acks-all-after-failover", at(leadLeader, func(cs *clusterState) kmsg.Request {
			return kwire.ProduceRequest(cs.lead, 0, -1, plainBatch(2))
		})),
		c("cluster-fetch-fenced-leader-epoch", at(leadLeader, func(cs *clusterState) kmsg.Request {
			return fetchReq(cs.lead, 0, 0, 0)
		})),
		c("cluster-fetch-unknown-leader-epoch", at(leadLeader, func(cs *clusterState) kmsg.Request {
			return fetchReq(cs.lead, 0, 2, 0)
		})),
		c("cluster-fetch-current-leader-epoch", at(leadLeader, func(cs *clusterState) kmsg.Request {
			return fetchReq(cs.lead, 3, 1, 0)
		})),
		c("cluster-listoffsets-fenced-leader-epoch", at(leadLeader, func(cs *clusterState) kmsg.Request {
			return listOffsetsReq(cs.lead, -1, 0, 0)
		})),
		c("cluster-listoffsets-unknown-leader-epoch", at(leadLeader, func(cs *clusterState) kmsg.Request {
			return listOffsetsReq(cs.lead, -1, 2, 0)
		})),
		c("cluster-offsetforleaderepoch-fenced-leader-epoch", at(leadLeader, func(cs *clusterState) kmsg.Request {
			return offsetForEpochReq(cs.lead, 0, 0, 0)
		})),
		c("cluster-offsetforleaderepoch-epochs-after-failover", epochEnds(0, 1, 2)),
		c("cluster-electleaders-preferred-down", at(boot, func(cs *clusterState) kmsg.Request {
			return electLeadersReq(0, cs.lead, 0)
		})),
		// The fenced victim no longer holds the low watermark back.
		c("cluster-deleterecords-replica-fenced", at(nisrLeader, func(cs *clusterState) kmsg.Request {
			return deleteRecordsReq(cs.nisr, 0, 2)
		})),

		step("cluster-restart-victim", (*side).clusterRestartVictim),
		c("cluster-metadata-replica-back", at(other, func(cs *clusterState) kmsg.Request {
			return metadataReq(cs.lead, cs.nisr)
		})),
		c("cluster-produce-acks-all-isr-back", at(nisrLeader, func(cs *clusterState) kmsg.Request {
			return kwire.ProduceRequest(cs.nisr, 0, -1, plainBatch(2))
		})),
		c("cluster-electleaders-preferred", at(other, func(cs *clusterState) kmsg.Request {
			return electLeadersReq(0, cs.lead, 0)
		})),
		step("cluster-wait-preferred", (*side).clusterWaitPreferred),
		c("cluster-metadata-after-election", at(boot, func(cs *clusterState) kmsg.Request {
			return metadataReq(cs.lead)
		})),
		c("cluster-offsetforleaderepoch-epochs-after-election", epochEnds(0, 1, 2, 3)),
		// The failover's leader, a follower again, asked at its old epoch
		// and at a future one: the epoch is checked before leadership.
		c("cluster-listoffsets-old-leader-stale-epoch", at(boot, func(cs *clusterState) kmsg.Request {
			return listOffsetsReq(cs.lead, -1, 1, 0)
		})),
		c("cluster-listoffsets-follower-future-epoch", at(boot, func(cs *clusterState) kmsg.Request {
			return listOffsetsReq(cs.lead, -1, 5, 0)
		})),
		c("cluster-offsetforleaderepoch-old-leader-stale-epoch", at(boot, func(cs *clusterState) kmsg.Request {
			return offsetForEpochReq(cs.lead, 1, 0, 0)
		})),
		c("cluster-fetch-follower-stale-epoch", at(boot, func(cs *clusterState) kmsg.Request {
			return fetchReq(cs.lead, 0, 1, 0)
		})),
	}
}

// stepErr marks a step's failure as a setup failure: it is reported, not
// compared.
func stepErr(err error) error {
	if err == nil || errors.Is(err, errSetup) {
		return err
	}
	return fmt.Errorf("%w: %v", errSetup, err)
}

// at is a case of one request, built from the side's scenario, sent to
// the node pick names.
func at(pick func(s *side) (int32, error), f func(*clusterState) kmsg.Request) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		id, err := pick(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errSetup, err)
		}
		resp, err := s.doNode(id, f(&s.cluster))
		if err != nil {
			return nil, err
		}
		return []kmsg.Response{resp}, nil
	}
}

// node picks one of the scenario's nodes.
func node(id func(*clusterState) int32) func(s *side) (int32, error) {
	return func(s *side) (int32, error) { return id(&s.cluster), nil }
}

// leaderOf picks the leader of partition 0 of one of the scenario's
// topics, as the bootstrap node's Metadata has it.
func leaderOf(topic func(*clusterState) string) func(s *side) (int32, error) {
	return func(s *side) (int32, error) {
		p, err := s.partition(topic(&s.cluster))
		return p.Leader, err
	}
}

// epochEnds asks the leader of "lead" for the end offset of each epoch,
// one OffsetForLeaderEpoch each, without a current leader epoch.
func epochEnds(epochs ...int32) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		p, err := s.partition(s.cluster.lead)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errSetup, err)
		}
		var out []kmsg.Response
		for _, e := range epochs {
			resp, err := s.doNode(p.Leader, offsetForEpochReq(s.cluster.lead, -1, e, 0))
			if err != nil {
				return nil, err
			}
			out = append(out, resp)
		}
		return out, nil
	}
}

// describeQuorumShape is DescribeQuorum of the metadata log, asked of the
// victim-to-be, with what two quorums count differently reduced to its
// sign: the leader epoch, the high watermark and each voter's log end
// offset and fetch times (a Raft term and log index on klog, Kafka's
// epoch and metadata offsets on Kafka). Voters are sorted by id.
func describeQuorumShape(s *side) ([]kmsg.Response, error) {
	req := metadataQuorumRequest()
	resp, err := s.doNode(s.cluster.victim, req)
	if err != nil {
		return nil, err
	}
	sign := func(v int64) int64 { return min(max(v, -1), 1) }
	for i := range resp.(*kmsg.DescribeQuorumResponse).Topics {
		t := &resp.(*kmsg.DescribeQuorumResponse).Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			p.LeaderEpoch = int32(sign(int64(p.LeaderEpoch)))
			p.HighWatermark = sign(p.HighWatermark)
			for _, rs := range [][]kmsg.DescribeQuorumResponseTopicPartitionReplicaState{p.CurrentVoters, p.Observers} {
				for k := range rs {
					rs[k].LogEndOffset = sign(rs[k].LogEndOffset)
					rs[k].LastFetchTimestamp = sign(rs[k].LastFetchTimestamp)
					rs[k].LastCaughtUpTimestamp = sign(rs[k].LastCaughtUpTimestamp)
				}
				slices.SortFunc(rs, func(a, b kmsg.DescribeQuorumResponseTopicPartitionReplicaState) int {
					return int(a.ReplicaID - b.ReplicaID)
				})
			}
		}
	}
	return []kmsg.Response{resp}, nil
}

// doNode is do on node id, found in the bootstrap node's Metadata.
func (s *side) doNode(id int32, req kmsg.Request) (kmsg.Response, error) {
	m, err := s.metadata()
	if err != nil {
		return nil, err
	}
	addr, ok := brokerAddr(m, id)
	if !ok {
		return nil, fmt.Errorf("%w: node %d is not among %s's brokers", errSetup, id, s.name)
	}
	return s.doAt(addr, req)
}

// metadata is the bootstrap node's Metadata of the scenario's topics.
func (s *side) metadata() (*kmsg.MetadataResponse, error) {
	var topics []string
	for _, t := range []string{s.cluster.lead, s.cluster.nisr} {
		if t != "" {
			topics = append(topics, t)
		}
	}
	req := metadataReq(topics...)
	req.Topics = append([]kmsg.MetadataRequestTopic{}, req.Topics...) // none named: no topics, not all
	resp, err := s.do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata on %s: %v", errSetup, s.name, err)
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// partition is partition 0 of topic in the bootstrap node's Metadata.
func (s *side) partition(topic string) (kmsg.MetadataResponseTopicPartition, error) {
	m, err := s.metadata()
	if err != nil {
		return kmsg.MetadataResponseTopicPartition{}, err
	}
	for _, t := range m.Topics {
		if t.Topic != nil && *t.Topic == topic && len(t.Partitions) > 0 {
			return t.Partitions[0], nil
		}
	}
	return kmsg.MetadataResponseTopicPartition{}, fmt.Errorf("%s on %s: not in metadata", topic, s.name)
}

// clusterSetup picks the nodes and creates the two topics with their
// records, waiting until every replica is in sync.
func (s *side) clusterSetup() error {
	m, err := s.metadata()
	if err != nil {
		return err
	}
	if len(m.Brokers) != 3 {
		return fmt.Errorf("%s lists %d brokers, want 3", s.name, len(m.Brokers))
	}
	cs := &s.cluster
	cs.boot = -1
	for _, b := range m.Brokers {
		if addr, _ := brokerAddr(m, b.NodeID); addr == s.addr {
			cs.boot = b.NodeID
		}
	}
	if cs.boot < 0 {
		return fmt.Errorf("%s: the bootstrap address %s is none of the brokers Metadata lists", s.name, s.addr)
	}
	quorumLeader, err := s.quorumLeader()
	if err != nil {
		return err
	}
	cs.victim, cs.other = -1, -1
	for _, b := range m.Brokers {
		switch id := b.NodeID; {
		case id == cs.boot:
		case cs.victim < 0 && id != quorumLeader:
			cs.victim = id
		default:
			cs.other = id
		}
	}
	cs.lead, cs.nisr = s.topic("c-lead"), s.topic("c-nisr")
	for _, t := range []struct {
		name     string
		replicas []int32
		minISR   string
	}{{cs.lead, []int32{cs.victim, cs.boot, cs.other}, "2"}, {cs.nisr, []int32{cs.boot, cs.victim, cs.other}, "3"}} {
		req := createReq([]string{t.name}, -1, -1, "min.insync.replicas", t.minISR)
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = 0, t.replicas
		req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
		resp, err := s.do(req)
		if err != nil {
			return fmt.Errorf("create topic %s on %s: %v", t.name, s.name, err)
		}
		if err := kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode); err != nil {
			return fmt.Errorf("create topic %s on %s: %v", t.name, s.name, err)
		}
	}
	if err := s.waitPartitions("all three replicas in sync", 60*time.Second, func(p kmsg.MetadataResponseTopicPartition) bool {
		return len(p.ISR) == 3 && p.Leader == p.Replicas[0]
	}); err != nil {
		return err
	}
	for _, t := range []string{cs.lead, cs.nisr} {
		if err := s.produceAtLeader(t); err != nil {
			return err
		}
	}
	if err := s.waitFollowerHighWatermark(cs.lead, 3, 15*time.Second); err != nil {
		return err
	}
	return s.waitQuorumCaughtUp(15 * time.Second)
}

// waitQuorumCaughtUp waits until DescribeQuorum shows every voter's log
// end offset, last fetch and last caught-up time, as the quorum leader
// learns them from the voters' fetches (Kafka) or heartbeats (klog) a
// moment after a start: the case then compares the settled state.
func (s *side) waitQuorumCaughtUp(bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		req := metadataQuorumRequest()
		resp, err := s.do(req)
		if err != nil {
			return fmt.Errorf("DescribeQuorum on %s: %v", s.name, err)
		}
		seen, settled := "no partition", false
		if r := resp.(*kmsg.DescribeQuorumResponse); len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			p := r.Topics[0].Partitions[0]
			settled = len(p.CurrentVoters) > 0
			for _, v := range p.CurrentVoters {
				if v.LogEndOffset < 0 || v.LastFetchTimestamp < 0 || v.LastCaughtUpTimestamp < 0 {
					settled = false
				}
			}
			seen = fmt.Sprintf("%+v", p.CurrentVoters)
		}
		if settled {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the quorum's voters on %s: not all known within %s: %s", s.name, bound, seen)
		}
		time.Sleep(100 * time.Millisecond) // a poll of the condition, bounded above
	}
}

// waitFollowerHighWatermark waits until the bootstrap node, a follower of
// topic, has learned a high watermark of want from its leader, as a
// consumer's Fetch there shows it: a follower learns it with its next
// fetch, a moment after the produce, on both sides.
func (s *side) waitFollowerHighWatermark(topic string, want int64, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		resp, err := s.do(fetchReq(topic, 0, -1, 0))
		if err != nil {
			return fmt.Errorf("fetch %s at its follower on %s: %v", topic, s.name, err)
		}
		var hw int64 = -1
		if r := resp.(*kmsg.FetchResponse); len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			hw = r.Topics[0].Partitions[0].HighWatermark
		}
		if hw >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's follower on %s: high watermark %d, not %d within %s", topic, s.name, hw, want, bound)
		}
		time.Sleep(100 * time.Millisecond) // a poll of the condition, bounded above
	}
}

// metadataQuorumRequest is a DescribeQuorum of the metadata quorum's one
// partition, __cluster_metadata-0.
func metadataQuorumRequest() *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, t)
	return req
}

// quorumLeader is the metadata quorum's leader, from DescribeQuorum.
func (s *side) quorumLeader() (int32, error) {
	req := metadataQuorumRequest()
	resp, err := s.do(req)
	if err != nil {
		return 0, fmt.Errorf("DescribeQuorum on %s: %v", s.name, err)
	}
	r := resp.(*kmsg.DescribeQuorumResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("DescribeQuorum on %s: %d topics", s.name, len(r.Topics))
	}
	return r.Topics[0].Partitions[0].LeaderID, nil
}

// produceAtLeader writes three records with acks=all to partition 0 of
// topic at its leader, retrying a retriable error for 15 s.
func (s *side) produceAtLeader(topic string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		p, err := s.partition(topic)
		if err != nil {
			return err
		}
		resp, err := s.doNode(p.Leader, kwire.ProduceRequest(topic, 0, -1, plainBatch(3)))
		if err != nil {
			return fmt.Errorf("produce to %s on %s: %v", topic, s.name, err)
		}
		err = kerr.ErrorForCode(resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
		if err == nil {
			return nil
		}
		if !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return fmt.Errorf("produce to %s on %s: %v", topic, s.name, err)
		}
		time.Sleep(100 * time.Millisecond) // a bounded retry of a retriable error
	}
}

// waitPartitions waits until partition 0 of both topics meets ok in the
// bootstrap node's Metadata and its leader answers ListOffsets.
func (s *side) waitPartitions(what string, bound time.Duration, ok func(kmsg.MetadataResponseTopicPartition) bool) error {
	deadline := time.Now().Add(bound)
	for {
		err := s.partitionsAre(ok)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s: not within %s: %v", what, s.name, bound, err)
		}
		time.Sleep(100 * time.Millisecond) // a poll of the condition, bounded above
	}
}

// everyNodeSees checks that leader, then every other node the metadata
// lists, answers topic's partition 0 so that ok holds.
func (s *side) everyNodeSees(topic string, leader int32, ok func(kmsg.MetadataResponseTopicPartition) bool) error {
	m, err := s.metadata()
	if err != nil {
		return err
	}
	nodes := []int32{leader}
	for _, b := range m.Brokers {
		if b.NodeID != leader {
			nodes = append(nodes, b.NodeID)
		}
	}
	for _, id := range nodes {
		nm, err := s.doNode(id, metadataReq(topic))
		if err != nil {
			return err
		}
		if ts := nm.(*kmsg.MetadataResponse).Topics; len(ts) == 0 || len(ts[0].Partitions) == 0 || !ok(ts[0].Partitions[0]) {
			return fmt.Errorf("%s: not yet so at node %d (the leader is %d)", topic, id, leader)
		}
	}
	return nil
}

func (s *side) partitionsAre(ok func(kmsg.MetadataResponseTopicPartition) bool) error {
	for _, t := range []string{s.cluster.lead, s.cluster.nisr} {
		p, err := s.partition(t)
		if err != nil {
			return err
		}
		if !ok(p) {
			return fmt.Errorf("%s: leader %d epoch %d, replicas %v, ISR %v", t, p.Leader, p.LeaderEpoch, p.Replicas, p.ISR)
		}
		// Every live node's own view too, the leader's first: a node's
		// metadata can show an ISR change another has not applied yet,
		// and the cases that follow ask any of them (a loaded node's
		// metadata lagged the others' by seconds and a case read the
		// old ISR). The leader answers from its own ISR (acks=all
		// waiting on the dead replica).
		if err := s.everyNodeSees(t, p.Leader, ok); err != nil {
			return err
		}
		resp, err := s.doNode(p.Leader, listOffsetsReq(t, -1, -1, 0))
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode); err != nil {
			return fmt.Errorf("%s: ListOffsets at leader %d: %v", t, p.Leader, err)
		}
	}
	return nil
}

// clusterKillVictim kills the victim and waits until it is out of both
// ISRs and "lead" has a new leader that serves it.
func (s *side) clusterKillVictim() error {
	if err := s.nodeAct("kill", s.cluster.victim); err != nil {
		return err
	}
	v := s.cluster.victim
	if err := s.waitPartitions("the killed node out of the ISRs", 90*time.Second, func(p kmsg.MetadataResponseTopicPartition) bool {
		return len(p.ISR) == 2 && !slices.Contains(p.ISR, v) && p.Leader >= 0 && p.Leader != v
	}); err != nil {
		return err
	}
	return s.waitLeaderBelowMinISR()
}

// waitLeaderBelowMinISR waits until the leader of "nisr" refuses acks=all
// for its ISR below min.insync.replicas. Metadata showing the shrunk ISR,
// even the leader's own, is not enough: Kafka's leader was seen to take a
// produce with its older ISR after that (it appended it and timed out
// waiting for the dead replica), which failed the case after it by
// timing. The probe is a batch with a bad CRC: both sides check the ISR
// first and refuse it NOT_ENOUGH_REPLICAS, and until then the log refuses
// it CORRUPT_MESSAGE, so nothing is appended either way.
func (s *side) waitLeaderBelowMinISR() error {
	corrupt := plainBatch(1)
	corrupt[len(corrupt)-1] ^= 0xff // covered by the CRC-32C
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := s.partition(s.cluster.nisr)
		if err != nil {
			return err
		}
		resp, err := s.doNode(p.Leader, kwire.ProduceRequest(s.cluster.nisr, 0, -1, corrupt))
		if err != nil {
			return err
		}
		code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
		if code == kerr.NotEnoughReplicas.Code {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the leader %d of %s on %s still takes acks=all 30s after its ISR shrank below min.insync.replicas: %v", p.Leader, s.cluster.nisr, s.name, kerr.ErrorForCode(code))
		}
		time.Sleep(100 * time.Millisecond) // a poll of the leader's state, bounded above
	}
}

// clusterRestartVictim starts the victim and waits until both ISRs hold
// the three replicas again.
func (s *side) clusterRestartVictim() error {
	if err := s.nodeAct("start", s.cluster.victim); err != nil {
		return err
	}
	return s.waitPartitions("the restarted node back in the ISRs", 120*time.Second, func(p kmsg.MetadataResponseTopicPartition) bool {
		return len(p.ISR) == 3 && p.Leader >= 0
	})
}

// clusterWaitPreferred waits until "lead" is led by its preferred replica,
// the victim, again.
func (s *side) clusterWaitPreferred() error {
	v := s.cluster.victim
	return s.waitPartitions("the preferred leader back", 60*time.Second, func(p kmsg.MetadataResponseTopicPartition) bool {
		return len(p.ISR) == 3 && (p.Leader == v || p.Replicas[0] != v)
	})
}

// nodeAct runs the side's node command: NODECMD ACT ID, within 150 s.
func (s *side) nodeAct(act string, id int32) error {
	if len(s.nodeCmd) == 0 {
		return fmt.Errorf("%s: no node command (-%s-node)", s.name, s.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	args := append(append([]string{}, s.nodeCmd[1:]...), act, strconv.Itoa(int(id)))
	out, err := exec.CommandContext(ctx, s.nodeCmd[0], args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s %d on %s: %v: %s", s.nodeCmd[0], act, id, s.name, err, out)
	}
	return nil
}
