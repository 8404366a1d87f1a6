package group

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/coordinator"
)

// TxnStore is the extension of Store that transactional offset commits
// need. A Store that does not implement it makes TxnOffsetCommit answer
// UNSUPPORTED_VERSION (the broker should then not advertise the API).
type TxnStore interface {
	// AppendTransactional writes records to partition p as one
	// transactional batch (attributes bit 4) of producerID/producerEpoch,
	// checked against the partition's producer state like any transactional
	// produce, and returns once committed (acks=all). It may wrap a
	// *kerr.Error (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH,
	// INVALID_TXN_STATE, ...): TxnOffsetCommit answers with that code.
	// ErrNotLeader answers NOT_COORDINATOR, like for Append.
	AppendTransactional(ctx context.Context, partition int32, producerID int64, producerEpoch int16, records []Record) error
}

// topicPartition names one partition of a topic.
type topicPartition struct {
	topic string
	part  int32
}

// txnOffset is a transactional offset waiting for its transaction's
// marker; seq is the append order of its record.
type txnOffset struct {
	o   offset
	seq uint64
}

// completeTimeout bounds how long CompleteTransaction waits for one group.
const completeTimeout = 30 * time.Second

// TxnOffsetCommit stores offsets as pending for (group, producer): they are
// written to __consumer_offsets as records of the producer's transaction
// and become visible to OffsetFetch only when CompleteTransaction commits
// them; an abort drops them.
//
// Versions 0-6; v6 names topics by id (UNKNOWN_TOPIC_ID for an id no
// topic has). From v3 a request carrying a generation, member id or
// instance id is checked like an OffsetCommit of that member (unknown
// member, fenced instance, wrong generation or member epoch answer
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION); a request
// without them (and every v0-2 request) is accepted for any group, since
// the producer, not the group, owns the transaction. A rebalance in
// progress does not reject a transactional commit.
func (c *Coordinator) TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, rt := range req.Topics {
		t := kmsg.TxnOffsetCommitResponseTopic{Topic: rt.Topic, TopicID: rt.TopicID}
		for _, rp := range rt.Partitions {
			t.Partitions = append(t.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: rp.Partition})
		}
		resp.Topics = append(resp.Topics, t)
	}
	setAll := func(code int16) {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = code
			}
		}
	}
	if req.Group == "" {
		setAll(kerr.InvalidGroupID.Code)
		return resp
	}
	ts, ok := c.cfg.Store.(TxnStore)
	if !ok {
		setAll(kerr.UnsupportedVersion.Code)
		return resp
	}
	generation, memberID, instanceID := req.Generation, req.MemberID, req.InstanceID
	if req.Version < 3 {
		generation, memberID, instanceID = -1, "", nil
	}
	topics := c.topics()
	_, code := c.run(ctx, req.Group, generation < 0, func(g *group) {
		if g == nil {
			setAll(kerr.IllegalGeneration.Code)
			return
		}
		if code := g.validateTxnCommit(memberID, instanceID, generation); code != 0 {
			setAll(code)
			return
		}
		oc := g.newOffsetCommits(topics)
		for i, rt := range req.Topics {
			name, found := commitTopic(topics, req.Version >= 6, rt.Topic, rt.TopicID)
			if !found {
				for j := range resp.Topics[i].Partitions {
					resp.Topics[i].Partitions[j].ErrorCode = kerr.UnknownTopicID.Code
				}
				continue
			}
			for j, rp := range rt.Partitions {
				epoch := int32(-1)
				if req.Version >= 2 {
					epoch = rp.LeaderEpoch
				}
				oc.add(&resp.Topics[i].Partitions[j].ErrorCode, name, rp.Partition, rp.Offset, epoch, rp.Metadata)
			}
		}
		if len(oc.records) == 0 {
			return
		}
		if err := g.appendTxn(ts, req.ProducerID, req.ProducerEpoch, oc.records); err != nil {
			oc.fail(txnAppendErrorCode(err))
			return
		}
		for _, a := range oc.accepted {
			g.addPending(req.ProducerID, a.tp, a.o, g.nextSeq())
		}
		c.noteTxnGroup(req.ProducerID, g.id)
	})
	if code != 0 && code != errGroupMissing {
		setAll(code)
	}
	return resp
}

// validateTxnCommit checks who may commit transactionally (see
// TxnOffsetCommit); generation is the member epoch in a consumer group.
func (g *group) validateTxnCommit(memberID string, instanceID *string, generation int32) int16 {
	anonymous := generation < 0 && memberID == "" && instanceID == nil
	if g.typ == typeConsumer {
		if anonymous || generation < 0 && g.cg.empty() {
			return 0
		}
		m := g.cg.members[memberID]
		if m == nil {
			return kerr.UnknownMemberID.Code
		}
		if generation != m.epoch {
			return kerr.IllegalGeneration.Code
		}
		return 0
	}
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if anonymous || generation < 0 && g.state == stateEmpty {
		return 0
	}
	if code := g.validateMember(memberID, instanceID); code != 0 {
		return code
	}
	if generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	return 0
}

// appendTxn writes records as a transactional batch of the producer before
// an answer is given.
func (g *group) appendTxn(ts TxnStore, producerID int64, producerEpoch int16, records []Record) error {
	ctx, cancel := context.WithTimeout(g.a.Context(), g.c.cfg.WriteTimeout)
	defer cancel()
	if err := ts.AppendTransactional(ctx, g.part, producerID, producerEpoch, records); err != nil {
		g.c.log.Warn("transactional append to __consumer_offsets failed", "partition", g.part, "group", g.id,
			"producer_id", producerID, "producer_epoch", producerEpoch, "err", err)
		return fmt.Errorf("append %d transactional records of producer %d for group %q to __consumer_offsets-%d: %w",
			len(records), producerID, g.id, g.part, err)
	}
	return nil
}

// txnAppendErrorCode maps a failed transactional append to its answer: the
// Kafka code a store wrapped, translated where the partition's error means
// something else to a group client, else what appendErrorCode says.
func txnAppendErrorCode(err error) int16 {
	if coordinator.LostLeadership(err) {
		return kerr.NotCoordinator.Code
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return appendErrorCode(err)
	}
	switch ke {
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError, kerr.NotCoordinator:
		return kerr.NotCoordinator.Code
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.InvalidCommitOffsetSize.Code
	}
	return ke.Code
}

// addPending records a transactional offset of producerID written at
// append order seq; a later one of the same producer replaces it.
func (g *group) addPending(producerID int64, tp topicPartition, o offset, seq uint64) {
	pending := g.txnOffsets[producerID]
	if pending == nil {
		pending = make(map[topicPartition]txnOffset)
		g.txnOffsets[producerID] = pending
	}
	pending[tp] = txnOffset{o: o, seq: seq}
}

// hasPending reports whether any transaction has a pending offset for the
// partition.
func (g *group) hasPending(topic string, part int32) bool {
	tp := topicPartition{topic, part}
	for _, pending := range g.txnOffsets {
		if _, ok := pending[tp]; ok {
			return true
		}
	}
	return false
}

// completeTxn applies the marker of producerID: on commit each pending
// offset becomes the committed one unless a commit written after it in the
// log already replaced it; on abort they are dropped.
func (g *group) completeTxn(producerID int64, commit bool) int {
	pending := g.txnOffsets[producerID]
	delete(g.txnOffsets, producerID)
	if !commit {
		return len(pending)
	}
	n := 0
	for tp, p := range pending {
		if seq, ok := g.offsetSeq[tp]; ok && seq > p.seq {
			continue
		}
		g.setOffsetSeq(tp.topic, tp.part, p.o, p.seq)
		n++
	}
	return n
}

// replayTxnOffset applies a replayed transactional offset record of
// producerID (nil value: the producer's pending offset is withdrawn).
func (g *group) replayTxnOffset(producerID int64, topic string, part int32, v *kmsg.OffsetCommitValue) {
	tp := topicPartition{topic, part}
	seq := g.nextSeq()
	if v == nil {
		if pending := g.txnOffsets[producerID]; pending != nil {
			delete(pending, tp)
			if len(pending) == 0 {
				delete(g.txnOffsets, producerID)
			}
		}
		return
	}
	g.addPending(producerID, tp, valueOffset(v), seq)
}

// noteTxnGroup remembers that group id holds pending offsets of producerID,
// so CompleteTransaction reaches it.
func (c *Coordinator) noteTxnGroup(producerID int64, id string) {
	c.rt.Lock()
	defer c.rt.Unlock()
	c.noteTxnGroupLocked(producerID, id)
}

// noteTxnGroupLocked is noteTxnGroup with the runtime's lock held.
func (c *Coordinator) noteTxnGroupLocked(producerID int64, id string) {
	ids := c.txnGroups[producerID]
	if ids == nil {
		ids = make(map[string]struct{})
		c.txnGroups[producerID] = ids
	}
	ids[id] = struct{}{}
}

// groupPartitionLocked is the partition group id was loaded from, or,
// without an actor, the one it hashes to. The runtime's lock must be held.
func (c *Coordinator) groupPartitionLocked(id string) int32 {
	if a := c.rt.ActorLocked(id); a != nil {
		return a.Partition()
	}
	return c.partitionOf(id)
}

// forgetTxnGroupsLocked drops the index entries of the groups of partition
// p. The runtime's lock must be held.
func (c *Coordinator) forgetTxnGroupsLocked(p int32) {
	for pid, ids := range c.txnGroups {
		for id := range ids {
			if c.groupPartitionLocked(id) == p {
				delete(ids, id)
			}
		}
		if len(ids) == 0 {
			delete(c.txnGroups, pid)
		}
	}
}

// CompleteTransaction is called by the broker after it wrote a COMMIT
// (commit true) or ABORT marker of producerID into __consumer_offsets
// partition p: the pending offsets of that producer in the groups of p
// become the committed offsets or are dropped. It returns once every such
// group has applied the marker, so a later TxnOffsetCommit of the same
// producer never mixes with this transaction. A marker that arrives while p
// is loading is applied when the load ends; on a partition this node does
// not serve it does nothing (the next load replays the marker).
func (c *Coordinator) CompleteTransaction(p int32, producerID int64, commit bool) {
	ids, ok := c.txnGroupsOf(p, producerID, commit)
	if !ok {
		return
	}
	sort.Strings(ids)
	ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
	defer cancel()
	for _, id := range ids {
		_, code := c.run(ctx, id, false, func(g *group) {
			if g == nil {
				return
			}
			n := g.completeTxn(producerID, commit)
			c.log.Debug("transaction completed in group", "group", id, "producer_id", producerID, "commit", commit, "offsets", n)
		})
		if code != 0 && code != errGroupMissing && code != kerr.NotCoordinator.Code {
			c.log.Warn("transaction marker not applied", "group", id, "partition", p, "producer_id", producerID,
				"commit", commit, "err", kerr.ErrorForCode(code))
		}
	}
}

// txnGroupsOf takes from the index the groups of partition p that may hold
// pending offsets of producerID. While p loads it keeps the marker for the
// end of the load and returns false, as it does for a partition not served.
func (c *Coordinator) txnGroupsOf(p int32, producerID int64, commit bool) ([]string, bool) {
	c.rt.Lock()
	defer c.rt.Unlock()
	if _, err := c.rt.ServedLocked(p); err != nil {
		if errors.Is(err, coordinator.ErrLoadInProgress) {
			if c.completions[p] == nil {
				c.completions[p] = make(map[int64]bool)
			}
			c.completions[p][producerID] = commit
		}
		return nil, false
	}
	var ids []string
	for id := range c.txnGroups[producerID] {
		if c.groupPartitionLocked(id) == p {
			ids = append(ids, id)
			delete(c.txnGroups[producerID], id)
		}
	}
	if len(c.txnGroups[producerID]) == 0 {
		delete(c.txnGroups, producerID)
	}
	return ids, true
}

// PendingOffsetSnapshot is one transactional offset waiting for its
// transaction to end.
type PendingOffsetSnapshot struct {
	ProducerID int64
	OffsetSnapshot
}

// pendingSnapshot lists the group's pending transactional offsets, sorted
// by producer, topic and partition.
func (g *group) pendingSnapshot() []PendingOffsetSnapshot {
	var out []PendingOffsetSnapshot
	for pid, pending := range g.txnOffsets {
		for tp, p := range pending {
			out = append(out, PendingOffsetSnapshot{ProducerID: pid, OffsetSnapshot: OffsetSnapshot{
				Topic: tp.topic, Partition: tp.part, Offset: p.o.Offset, LeaderEpoch: p.o.LeaderEpoch,
				Metadata: p.o.Metadata, CommitTimestamp: time.UnixMilli(p.o.CommitTimestamp),
			}})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.ProducerID != b.ProducerID {
			return a.ProducerID < b.ProducerID
		}
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return out
}

// pendingPartitions lists the partitions with pending transactional
// offsets, sorted.
func (g *group) pendingPartitions() []topicPartition {
	seen := make(map[topicPartition]bool)
	var out []topicPartition
	for _, pending := range g.txnOffsets {
		for tp := range pending {
			if !seen[tp] {
				seen[tp] = true
				out = append(out, tp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].topic < out[j].topic || out[i].topic == out[j].topic && out[i].part < out[j].part
	})
	return out
}
