package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

// offsetsTopic is the internal topic holding committed offsets and group
// metadata, in Kafka's record schemas.
const offsetsTopic = "__consumer_offsets"

// newGroupCoordinator builds the node's group coordinator from the broker's
// group.* and offsets.* configs.
func (n *Node) newGroupCoordinator() *group.Coordinator {
	b := n.broker
	ms := func(name string) time.Duration { return time.Duration(b.Int64(name)) * time.Millisecond }
	// Groups hash over the partitions the topic has, which may differ from
	// today's offsets.topic.num.partitions if it changed since creation.
	partitions := int32(b.Int64("offsets.topic.num.partitions"))
	if t, ok := n.ctrl.Image().Topic(offsetsTopic); ok {
		partitions = int32(len(t.Partitions))
	}
	return group.New(group.Config{
		Logger:                        n.logger.With("component", "group"),
		Store:                         groupStore{n},
		Partitions:                    partitions,
		Topics:                        n.groupTopics,
		InitialRebalanceDelay:         ms("group.initial.rebalance.delay.ms"),
		MinSessionTimeout:             ms("group.min.session.timeout.ms"),
		MaxSessionTimeout:             ms("group.max.session.timeout.ms"),
		MaxSize:                       int(b.Int64("group.max.size")),
		OffsetsRetention:              time.Duration(b.Int64("offsets.retention.minutes")) * time.Minute,
		OffsetsRetentionCheckInterval: ms("offsets.retention.check.interval.ms"),
		ConsumerSessionTimeout:        ms("group.consumer.session.timeout.ms"),
		ConsumerHeartbeatInterval:     ms("group.consumer.heartbeat.interval.ms"),
		ConsumerAssignors:             splitList(b.String("group.consumer.assignors")),
		ConsumerMaxSize:               int(b.Int64("group.consumer.max.size")),
	})
}

// groupTopics lists the current topics for the coordinator.
func (n *Node) groupTopics() map[string]group.TopicInfo {
	img := n.ctrl.Image()
	out := make(map[string]group.TopicInfo, len(img.Topics))
	for name, t := range img.Topics {
		out[name] = group.TopicInfo{Name: name, ID: t.ID, Partitions: int32(len(t.Partitions))}
	}
	return out
}

// ensureOffsetsTopic creates __consumer_offsets on first use, as Kafka
// does when a client first looks for a group coordinator.
func (n *Node) ensureOffsetsTopic(ctx context.Context) error {
	if _, ok := n.ctrl.Image().Topic(offsetsTopic); ok {
		return nil
	}
	img := n.ctrl.Image()
	rf := n.broker.Int64("offsets.topic.replication.factor")
	if live := int64(len(img.Brokers)); rf > live {
		rf = live
	}
	ctx, cancel := context.WithTimeout(ctx, autoCreateTimeout)
	defer cancel()
	_, err := n.ctrl.CreateTopic(ctx, controller.TopicSpec{
		Name:              offsetsTopic,
		Partitions:        int32(n.broker.Int64("offsets.topic.num.partitions")),
		ReplicationFactor: int16(rf),
		Configs: map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    n.broker.String("offsets.topic.segment.bytes"),
		},
	}, false)
	if err != nil && !errors.Is(err, controller.ErrTopicExists) {
		return fmt.Errorf("create %s: %w", offsetsTopic, err)
	}
	n.reconcile()
	return nil
}

// reconcileGroups loads the coordinator state of every __consumer_offsets
// partition this node leads and unloads the others. Called from reconcile.
func (n *Node) reconcileGroups(img *metadata.Image) {
	if n.ctx.Err() != nil {
		return // closing: Close unloads everything
	}
	t, ok := img.Topic(offsetsTopic)
	lead := make(map[int32]bool)
	if ok {
		for _, p := range t.Partitions {
			if p.Leader == n.cfg.NodeID {
				lead[p.Index] = true
			}
		}
	}
	for p := range n.groupsLoaded {
		if !lead[p] {
			delete(n.groupsLoaded, p)
			n.groups.UnloadPartition(p)
		}
	}
	for p := range lead {
		if n.groupsLoaded[p] {
			continue
		}
		n.groupsLoaded[p] = true
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := n.groups.LoadPartition(n.ctx, p); err != nil && n.ctx.Err() == nil {
				n.logger.Error("load group partition", "partition", p, "err", err)
			}
		}()
	}
}

// groupStore keeps the group coordinator's records in __consumer_offsets.
type groupStore struct{ n *Node }

// Append writes records as one uncompressed batch and returns once it is
// committed (with one replica, once appended).
func (s groupStore) Append(_ context.Context, p int32, records []group.Record) error {
	kv := make([]internalRecord, len(records))
	for i, r := range records {
		kv[i] = internalRecord{key: r.Key, value: r.Value}
	}
	return notLeaderAs(s.n.appendInternal(offsetsTopic, p, kv, -1, -1), group.ErrNotLeader)
}

// AppendTransactional writes offsets committed inside a producer's
// transaction as a transactional batch of that producer.
func (s groupStore) AppendTransactional(_ context.Context, p int32, producerID int64, producerEpoch int16, records []group.Record) error {
	kv := make([]internalRecord, len(records))
	for i, r := range records {
		kv[i] = internalRecord{key: r.Key, value: r.Value}
	}
	return notLeaderAs(s.n.appendInternal(offsetsTopic, p, kv, producerID, producerEpoch), group.ErrNotLeader)
}

// Replay reads partition p from its log start to its high watermark,
// transactional records and markers included.
func (s groupStore) Replay(ctx context.Context, p int32, fn func(group.Record) error) error {
	return notLeaderAs(s.n.replayInternal(ctx, offsetsTopic, p, func(r internalRecord) error {
		return fn(group.Record{Key: r.key, Value: r.value, ProducerID: r.producerID,
			Transactional: r.transactional, Control: r.control, Commit: r.commit})
	}), group.ErrNotLeader)
}

// notLeaderAs marks a lost partition leadership with a coordinator's own
// sentinel, so the coordinator answers NOT_COORDINATOR and clients look for
// the new one.
func notLeaderAs(err, sentinel error) error {
	if errors.Is(err, partition.ErrNotLeader) {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}

// internalRecord is one record of an internal topic as its coordinator
// sees it.
type internalRecord struct {
	key, value    []byte
	producerID    int64 // -1 unless transactional or a marker
	transactional bool
	control       bool // a transaction marker; commit tells which
	commit        bool
}

func (n *Node) internalPartition(topic string, p int32) (*partition.Partition, error) {
	part := n.partition(topic, p)
	if part == nil || !part.IsLeader() {
		return nil, fmt.Errorf("%s-%d is not led here: %w", topic, p, partition.ErrNotLeader)
	}
	return part, nil
}

// appendInternal writes records to an internal topic as one uncompressed
// batch; with producerID >= 0 the batch is transactional for that producer
// (no sequence numbers: only its epoch is checked, as for any coordinator
// write).
func (n *Node) appendInternal(topic string, p int32, records []internalRecord, producerID int64, producerEpoch int16) error {
	part, err := n.internalPartition(topic, p)
	if err != nil {
		return err
	}
	batch, err := encodeBatch(records, producerID, producerEpoch, time.Now().UnixMilli())
	if err != nil {
		return err
	}
	_, err = part.Append(batch)
	return err
}

// replayInternal calls fn for every record of an internal topic partition
// from its log start to its high watermark.
func (n *Node) replayInternal(ctx context.Context, topic string, p int32, fn func(internalRecord) error) error {
	part, err := n.internalPartition(topic, p)
	if err != nil {
		return err
	}
	offset := part.LogStartOffset()
	end := part.HighWatermark()
	var buf []byte
	for offset < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf, err = part.Read(buf[:0], offset, 1<<20, partition.ReadUncommitted, true)
		if err != nil {
			return fmt.Errorf("replay %s-%d at %d: %w", topic, p, offset, err)
		}
		if len(buf) == 0 {
			return nil
		}
		next, err := replayBatches(buf, offset, fn)
		if err != nil {
			return fmt.Errorf("replay %s-%d: %w", topic, p, err)
		}
		offset = next
	}
	return nil
}

// replayBatches calls fn for every record at or after from in raw, and
// returns the offset after the last batch.
func replayBatches(raw []byte, from int64, fn func(internalRecord) error) (int64, error) {
	next := from
	for len(raw) > 0 {
		b, err := record.Parse(raw)
		if err != nil {
			return next, fmt.Errorf("%w: %v", log.ErrCorrupt, err)
		}
		raw = raw[b.Size():]
		next = b.LastOffset() + 1
		attrs := b.Attributes()
		if attrs.Compression() != record.None {
			return next, fmt.Errorf("%w: compressed batch at offset %d of an internal topic", log.ErrCorrupt, b.BaseOffset())
		}
		it, err := b.Records(nil)
		if err != nil {
			return next, fmt.Errorf("%w: batch %d: %v", log.ErrCorrupt, b.BaseOffset(), err)
		}
		for it.Next() {
			r := it.Record()
			if b.BaseOffset()+int64(r.OffsetDelta) < from {
				continue
			}
			ir := internalRecord{key: r.Key, value: r.Value, producerID: -1}
			if attrs.Transactional() {
				ir.producerID, ir.transactional = b.ProducerID(), true
			}
			if attrs.Control() {
				// Only transaction markers (abort, commit) end a
				// transaction; other control records carry nothing here.
				key, err := record.ParseControlKey(r.Key)
				if err != nil || !record.EndsTxn(key) {
					continue
				}
				ir.control, ir.commit, ir.transactional = true, key.Type == kmsg.ControlRecordKeyTypeCommit, false
			}
			if err := fn(ir); err != nil {
				return next, err
			}
		}
		if err := it.Err(); err != nil {
			return next, fmt.Errorf("%w: batch %d: %v", log.ErrCorrupt, b.BaseOffset(), err)
		}
	}
	return next, nil
}

// encodeBatch builds an uncompressed v2 batch of records at base offset 0
// (the log assigns the real one); producerID >= 0 makes it a transactional
// batch of that producer, without sequence numbers.
func encodeBatch(records []internalRecord, producerID int64, producerEpoch int16, now int64) ([]byte, error) {
	b := record.NewBuilder(now)
	if producerID >= 0 {
		b.ProducerID, b.ProducerEpoch, b.Transactional = producerID, producerEpoch, true
	}
	for i, rec := range records {
		b.Append(record.Record{OffsetDelta: int32(i), Key: rec.key, Value: rec.value})
	}
	return b.Build()
}

// groupContext carries the client id and host a group member is shown
// with (DescribeGroups), in Kafka's "/address" form.
func (cc *clientConn) groupContext(ctx context.Context) context.Context {
	host := cc.remote
	if h, _, err := net.SplitHostPort(cc.remote); err == nil {
		host = h
	}
	return group.WithClient(ctx, cc.clientID, "/"+host)
}
