package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

// internalTopic describes one coordinator's internal topic — the group
// coordinator's __consumer_offsets, the transaction coordinator's
// __transaction_state: how the topic is created, how many partitions its
// keys hash over, and how the node hands the partitions it leads to the
// coordinator. Both coordinators use it the same way: FindCoordinator
// ensures the topic, reconcile loads and unloads partitions, and the
// coordinator's Store reads and writes them through internalStore.
type internalTopic struct {
	name string
	// coordinator names the coordinator in logs ("group", "transaction").
	coordinator string
	// settings picks the topic's creation settings from the broker's.
	settings func(*config.Settings) config.InternalTopicSettings
	// compression is the compression.type the topic is created with.
	compression string
	// notLeader is the coordinator's sentinel for a partition this node no
	// longer leads, which the coordinator answers as NOT_COORDINATOR.
	notLeader error
	// reloadOnNewEpoch unloads and reloads a partition whose leader epoch
	// changed while this node kept leading it; the transaction
	// coordinator's markers carry the epoch it loaded at.
	reloadOnNewEpoch bool
	// load hands a partition, at its leader epoch, to the coordinator;
	// unload takes it back.
	load   func(ctx context.Context, partition, leaderEpoch int32) error
	unload func(partition int32)

	// loaded maps each partition handed to the coordinator to the leader
	// epoch it was loaded at; loadedID is the id of the topic they belong
	// to. Guarded by Node.reconcileMu.
	loaded   map[int32]int32
	loadedID [16]byte
}

// partitions is the number of partitions the topic's keys hash over: the
// topic's own count once it exists (the setting may have changed since it
// was created, or a client may have created the topic, as Kafka lets it),
// else the configured one. The coordinators read it for every key, so
// they follow the topic as it is now.
func (it *internalTopic) partitions(img *metadata.Image, s *config.Settings) int32 {
	if t, ok := img.Topic(it.name); ok {
		return int32(len(t.Partitions))
	}
	return it.settings(s).Partitions
}

// partitionFor is the partition of the topic that holds key, a group or a
// transactional id.
func (it *internalTopic) partitionFor(img *metadata.Image, s *config.Settings, key string) int32 {
	return metadata.CoordinatorPartition(key, it.partitions(img, s))
}

// ensureInternalTopic creates an internal topic on first use, as Kafka does
// when a client first looks for its coordinator: compacted, with the
// configured partitions and a replication factor capped by the registered
// brokers.
func (n *Node) ensureInternalTopic(ctx context.Context, it *internalTopic) error {
	img := n.ctrl.Image()
	if _, ok := img.Topic(it.name); ok {
		return nil
	}
	s := it.settings(n.settings())
	rf := s.ReplicationFactor
	if live := len(img.Brokers); int(rf) > live {
		rf = int16(live)
	}
	configs := map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": it.compression,
		"segment.bytes":    strconv.Itoa(int(s.SegmentBytes)),
	}
	if s.MinISR > 0 {
		configs["min.insync.replicas"] = strconv.Itoa(int(min(int32(rf), s.MinISR)))
	}
	ctx, cancel := context.WithTimeout(ctx, autoCreateTimeout)
	defer cancel()
	_, err := n.ctrl.CreateTopic(ctx, controller.TopicSpec{
		Name:              it.name,
		Partitions:        s.Partitions,
		ReplicationFactor: rf,
		Configs:           configs,
	}, false)
	if err != nil && !errors.Is(err, controller.ErrTopicExists) {
		return fmt.Errorf("create %s: %w", it.name, err)
	}
	n.reconcile()
	return nil
}

// reconcileInternalTopic loads into the coordinator every partition of an
// internal topic this node leads, at its leader epoch, and unloads the
// others. Called from reconcile, which holds reconcileMu.
func (n *Node) reconcileInternalTopic(img *metadata.Image, it *internalTopic) {
	if n.ctx.Err() != nil {
		return // closing: Close unloads everything
	}
	lead := make(map[int32]int32)
	var id [16]byte
	if t, ok := img.Topic(it.name); ok {
		id = t.ID
		for _, p := range t.Partitions {
			if p.Leader == n.cfg.NodeID {
				lead[p.Index] = p.LeaderEpoch
			}
		}
	}
	// A topic deleted and created again — perhaps with another partition
	// count, so keys hash elsewhere — between two reconciles shares
	// partition indexes with the old one but none of its records: unload
	// everything of the old topic.
	recreated := id != it.loadedID
	it.loadedID = id
	for p, epoch := range it.loaded {
		if e, ok := lead[p]; recreated || !ok || (it.reloadOnNewEpoch && e != epoch) {
			delete(it.loaded, p)
			it.unload(p)
		}
	}
	for p, epoch := range lead {
		if _, ok := it.loaded[p]; ok {
			continue
		}
		it.loaded[p] = epoch
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := it.load(n.ctx, p, epoch); err != nil && n.ctx.Err() == nil {
				n.logger.Error("load "+it.coordinator+" partition", "partition", p, "err", err)
			}
		}()
	}
}

// internalStore reads and writes an internal topic's partitions for its
// coordinator; the coordinators' Stores (groupStore, txnStore) convert
// their records to and from it.
type internalStore struct {
	n     *Node
	topic *internalTopic
}

// append writes records as one uncompressed batch (transactional for
// producerID >= 0) and returns once it is committed (with one replica,
// once appended).
func (s internalStore) append(p int32, records []internalRecord, producerID int64, producerEpoch int16) error {
	return notLeaderAs(s.n.appendInternal(s.topic.name, p, records, producerID, producerEpoch), s.topic.notLeader)
}

// replay calls fn for every record of partition p from its log start to
// its high watermark, transactional records and markers included.
func (s internalStore) replay(ctx context.Context, p int32, fn func(internalRecord) error) error {
	return notLeaderAs(s.n.replayInternal(ctx, s.topic.name, p, fn), s.topic.notLeader)
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
