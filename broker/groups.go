package broker

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/store/log"
)

// offsetsTopic is the internal topic holding committed offsets and group
// metadata, in Kafka's record schemas.
const offsetsTopic = "__consumer_offsets"

// newOffsetsTopic describes __consumer_offsets: its keys are group ids, and
// the partitions this node leads are loaded into the group coordinator.
func (n *Node) newOffsetsTopic() *internalTopic {
	return &internalTopic{
		name:        offsetsTopic,
		coordinator: "group",
		settings:    func(s *config.Settings) config.InternalTopicSettings { return s.OffsetsTopic },
		compression: "producer",
		notLeader:   group.ErrNotLeader,
		load: func(ctx context.Context, p, _ int32) error {
			return n.groups.LoadPartition(ctx, p)
		},
		unload: func(p int32) { n.groups.UnloadPartition(p) },
		loaded: make(map[int32]int32),
	}
}

// newGroupCoordinator builds the node's group coordinator from the broker's
// group.* and offsets.* configs.
func (n *Node) newGroupCoordinator() *group.Coordinator {
	s := n.settings()
	return group.New(group.Config{
		Logger:                        n.logger.With("component", "group"),
		Store:                         groupStore{internalStore{n, n.offsets}},
		Partitions:                    n.offsets.partitions(n.ctrl.Image(), s),
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

// groupStore keeps the group coordinator's records in __consumer_offsets.
type groupStore struct{ internalStore }

// Append writes records as one uncompressed batch and returns once it is
// committed (with one replica, once appended).
func (s groupStore) Append(_ context.Context, p int32, records []group.Record) error {
	return s.append(p, groupRecords(records), -1, -1)
}

// AppendTransactional writes offsets committed inside a producer's
// transaction as a transactional batch of that producer.
func (s groupStore) AppendTransactional(_ context.Context, p int32, producerID int64, producerEpoch int16, records []group.Record) error {
	return s.append(p, groupRecords(records), producerID, producerEpoch)
}

// Replay reads partition p from its log start to its high watermark,
// transactional records and markers included.
func (s groupStore) Replay(ctx context.Context, p int32, fn func(group.Record) error) error {
	return s.replay(ctx, p, func(r internalRecord) error {
		return fn(group.Record{Key: r.key, Value: r.value, ProducerID: r.producerID,
			Transactional: r.transactional, Control: r.control, Commit: r.commit})
	})
}

func groupRecords(records []group.Record) []internalRecord {
	kv := make([]internalRecord, len(records))
	for i, r := range records {
		kv[i] = internalRecord{key: r.Key, value: r.Value}
	}
	return kv
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
