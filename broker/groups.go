package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
)

// offsetsTopic is the internal topic holding committed offsets and group
// metadata, in Kafka's record schemas.
const offsetsTopic = "__consumer_offsets"

// newGroupCoordinator builds the node's group coordinator from the broker's
// group.* and offsets.* configs.
func (n *Node) newGroupCoordinator() *group.Coordinator {
	s := n.settings()
	// Groups hash over the partitions the topic has, which may differ from
	// today's offsets.topic.num.partitions if it changed since creation.
	partitions := s.OffsetsTopic.Partitions
	if t, ok := n.ctrl.Image().Topic(offsetsTopic); ok {
		partitions = int32(len(t.Partitions))
	}
	return group.New(group.Config{
		Logger:                        n.logger.With("component", "group"),
		Store:                         groupStore{n},
		Partitions:                    partitions,
		Topics:                        n.groupTopics,
		InitialRebalanceDelay:         s.Group.InitialRebalanceDelay,
		MinSessionTimeout:             s.Group.MinSessionTimeout,
		MaxSessionTimeout:             s.Group.MaxSessionTimeout,
		MaxSize:                       int(s.Group.MaxSize),
		OffsetsRetention:              s.Group.OffsetsRetention,
		OffsetsRetentionCheckInterval: s.Group.OffsetsRetentionCheckInterval,
		ConsumerSessionTimeout:        s.Group.ConsumerSessionTimeout,
		ConsumerHeartbeatInterval:     s.Group.ConsumerHeartbeatInterval,
		ConsumerAssignors:             slices.Clone(s.Group.ConsumerAssignors),
		ConsumerMaxSize:               int(s.Group.ConsumerMaxSize),
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
	s := n.settings().OffsetsTopic
	rf := s.ReplicationFactor
	if live := len(img.Brokers); int(rf) > live {
		rf = int16(live)
	}
	ctx, cancel := context.WithTimeout(ctx, autoCreateTimeout)
	defer cancel()
	_, err := n.ctrl.CreateTopic(ctx, controller.TopicSpec{
		Name:              offsetsTopic,
		Partitions:        s.Partitions,
		ReplicationFactor: rf,
		Configs: map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    strconv.Itoa(int(s.SegmentBytes)),
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
	_, err = part.Append(encodeBatch(records, producerID, producerEpoch, time.Now().UnixMilli()))
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
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			return next, fmt.Errorf("%w: %v", log.ErrCorrupt, err)
		}
		size := int(b.Length) + 12
		raw = raw[size:]
		next = b.FirstOffset + int64(b.LastOffsetDelta) + 1
		if b.Attributes&0x07 != 0 {
			return next, fmt.Errorf("%w: compressed batch at offset %d of an internal topic", log.ErrCorrupt, b.FirstOffset)
		}
		transactional := b.Attributes&0x10 != 0
		control := b.Attributes&0x20 != 0
		records := b.Records
		for i := int32(0); i < b.NumRecords; i++ {
			var r kmsg.Record
			length, n := varint(records)
			if n <= 0 || length < 0 || int(length) > len(records)-n {
				return next, fmt.Errorf("%w: record %d of batch %d", log.ErrCorrupt, i, b.FirstOffset)
			}
			if err := r.ReadFrom(records[:n+int(length)]); err != nil {
				return next, fmt.Errorf("%w: record %d of batch %d: %v", log.ErrCorrupt, i, b.FirstOffset, err)
			}
			records = records[n+int(length):]
			if b.FirstOffset+int64(r.OffsetDelta) < from {
				continue
			}
			ir := internalRecord{key: r.Key, value: r.Value, producerID: -1}
			if transactional {
				ir.producerID, ir.transactional = b.ProducerID, true
			}
			if control {
				// Control record key: version int16, type int16 (0 abort,
				// 1 commit); other types carry no transaction end.
				if len(r.Key) < 4 || (r.Key[3] != 0 && r.Key[3] != 1) || r.Key[2] != 0 {
					continue
				}
				ir.control, ir.commit, ir.transactional = true, r.Key[3] == 1, false
			}
			if err := fn(ir); err != nil {
				return next, err
			}
		}
	}
	return next, nil
}

// varint decodes a zig-zag varint, returning the value and its length
// (<= 0 on error).
func varint(b []byte) (int64, int) {
	var ux uint64
	for i := 0; i < len(b) && i < 10; i++ {
		ux |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return int64(ux>>1) ^ -int64(ux&1), i + 1
		}
	}
	return 0, 0
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeBatch builds an uncompressed v2 batch of records at base offset 0
// (the log assigns the real one); producerID >= 0 makes it a transactional
// batch of that producer, without sequence numbers.
func encodeBatch(records []internalRecord, producerID int64, producerEpoch int16, now int64) []byte {
	var body []byte
	for i, rec := range records {
		r := kmsg.Record{OffsetDelta: int32(i), Key: rec.key, Value: rec.value}
		// Length counts the bytes after itself: encode once with a
		// one-byte zero length to measure them.
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		body = r.AppendTo(body)
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		LastOffsetDelta:      int32(len(records) - 1),
		FirstTimestamp:       now,
		MaxTimestamp:         now,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(records)),
		Records:              body,
	}
	if producerID >= 0 {
		b.ProducerID, b.ProducerEpoch = producerID, producerEpoch
		b.Attributes |= 0x10 // transactional
	}
	raw := b.AppendTo(nil)
	// batchLength counts the bytes after itself; the CRC covers attributes
	// to the end.
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
	return raw
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
