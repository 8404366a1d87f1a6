package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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
	// acksAll makes the coordinator's writes acks=all appends: refused
	// below the topic's min.insync.replicas before the append and after
	// it, as Kafka's TransactionStateManager appends with
	// EnforcedRequiredAcks (-1). Without it a write is Kafka's group
	// coordinator's acks=1 append. Either way a write is answered only
	// once the high watermark passes it.
	acksAll bool
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
// configured partitions and replication factor (internalReplicationFactor).
// While fewer brokers are active than that factor it creates nothing and
// returns errInternalTopicReplicas, which FindCoordinator answers
// COORDINATOR_NOT_AVAILABLE, as Kafka does ("internal topic creation will
// fail until the cluster size meets this replication factor requirement"):
// clients retry until the other nodes have registered, and the topic is
// never created under-replicated for good.
func (n *Node) ensureInternalTopic(ctx context.Context, it *internalTopic) error {
	img := n.ctrl.Image()
	if _, ok := img.Topic(it.name); ok {
		return nil
	}
	s := it.settings(n.settings())
	rf := internalReplicationFactor(s.ReplicationFactor, img, len(n.settings().QuorumVoters))
	if active := activeBrokers(img); active < int(rf) {
		return fmt.Errorf("create %s: %w: replication factor %d, %d broker(s) active", it.name, errInternalTopicReplicas, rf, active)
	}
	configs := map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": it.compression,
		"segment.bytes":    strconv.Itoa(int(s.SegmentBytes)),
	}
	if s.SegmentBytes < config.MinSegmentBytes {
		// Smaller segments than segment.bytes takes (Kafka 4 would
		// fail to create the topic): for tests of the coordinators'
		// compaction.
		delete(configs, "segment.bytes")
		configs["internal.segment.bytes"] = strconv.Itoa(int(s.SegmentBytes))
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

// internalReplicationFactor is the replication factor an internal topic is
// created with: the configured one (Kafka's default is 3) capped at the
// cluster's size. The size is the larger of the voters (every voter is a
// broker too) and the brokers ever registered, fenced ones included, so a
// single node, one voter, creates the topic with one replica, while a node
// of klog up -n 3 that has registered before its peers waits for them
// rather than create the topic with fewer replicas than the cluster has;
// a broker-only node beyond the voters counts once it has registered.
// voters is len(controller.quorum.voters), 0 for a single node.
func internalReplicationFactor(configured int16, img *metadata.Image, voters int) int16 {
	size := max(len(img.Brokers), voters, 1)
	return int16(min(int(configured), size))
}

// activeBrokers counts the brokers replicas can be placed on: registered,
// not fenced, not shutting down.
func activeBrokers(img *metadata.Image) int {
	active := 0
	for _, b := range img.Brokers {
		if b.Active() {
			active++
		}
	}
	return active
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
	// A leader epoch moves only with the leader: a partition this node
	// leads again at a newer epoch than it loaded was led elsewhere in an
	// image this node did not see (Kafka's coordinators see every
	// resignation), so what it loaded may be stale: it is loaded afresh.
	// The transaction coordinator's markers also carry the epoch loaded.
	for p, epoch := range it.loaded {
		if e, ok := lead[p]; recreated || !ok || e != epoch {
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
// producerID >= 0) and returns once it is committed: once the partition's
// high watermark has passed it (with one replica, once appended), bounded
// by ctx.
func (s internalStore) append(ctx context.Context, p int32, records []internalRecord, producerID int64, producerEpoch int16) error {
	return notLeaderAs(s.n.appendInternal(ctx, s.topic, p, records, producerID, producerEpoch), s.topic.notLeader)
}

// replay calls fn for every record of partition p from its log start to
// its log end, transactional records and markers included, and returns
// once the high watermark has reached that end.
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
// write). It returns once the high watermark has passed the batch: a
// coordinator acts on a write, and answers its client, only once the
// write would survive the leader's loss, as Kafka's CoordinatorRuntime
// completes a write when the high watermark reaches it.
func (n *Node) appendInternal(ctx context.Context, it *internalTopic, p int32, records []internalRecord, producerID int64, producerEpoch int16) error {
	part, err := n.internalPartition(it.name, p)
	if err != nil {
		return err
	}
	batch, err := encodeBatch(records, producerID, producerEpoch, n.clock.Now().UnixMilli())
	if err != nil {
		return err
	}
	var opts partition.AppendOptions
	if it.acksAll {
		opts.MinInSyncReplicas = int64(n.internalMinISR(it.name, part))
	}
	bs := record.ParseBatches(batch)
	res, err := part.AppendWith(&bs, opts)
	if err != nil {
		return err
	}
	if err := waitCommitted(ctx, part, res.LastOffset+1); err != nil {
		return fmt.Errorf("%s-%d at %d: %w", it.name, p, res.LastOffset, err)
	}
	if isr := len(part.LeaderState().ISR); int64(isr) < opts.MinInSyncReplicas {
		// Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND.
		return fmt.Errorf("%s-%d: ISR of %d after the append: %w", it.name, p, isr, partition.ErrNotEnoughReplicas)
	}
	return nil
}

// internalMinISR is the min.insync.replicas an acks=all write to an
// internal topic partition needs, counting no more than the partition's
// replicas (Kafka 4's Partition.effectiveMinIsr).
func (n *Node) internalMinISR(topic string, part *partition.Partition) int {
	t, ok := n.ctrl.Image().Topic(topic)
	if !ok {
		return 0
	}
	return min(int(n.topicConfig(t).MinInsyncReplicas), len(part.LeaderState().Replicas))
}

// waitCommitted waits until the high watermark of part, which this node
// leads, reaches offset: ErrNotLeader once it no longer leads, ErrClosed
// once it is closed, ctx's error once ctx ends.
func waitCommitted(ctx context.Context, part *partition.Partition, offset int64) error {
	wake := make(chan struct{}, 1)
	for {
		if !part.IsLeader() {
			return partition.ErrNotLeader
		}
		if part.HighWatermark() >= offset {
			return nil
		}
		// Wait refuses to register once the watermark has moved past
		// offset-1 (the check above raced an advance) or the partition
		// closed.
		if !part.Wait(wake, offset-1, partition.ReadUncommitted) {
			if part.HighWatermark() >= offset {
				return nil
			}
			return partition.ErrClosed
		}
		select {
		case <-wake:
		case <-ctx.Done():
			part.Unwait(wake)
			return ctx.Err()
		}
	}
}

// replayInternal calls fn for every record of an internal topic partition
// from its log start to its log end, then waits until the high watermark
// reaches that end. A new leader's high watermark trails the records it
// holds: Kafka's coordinators load to the log end (FetchIsolation.LOG_END
// in CoordinatorLoaderImpl and TransactionStateManager), and a record the
// old leader answered for is among them. The coordinator serves nothing
// of the partition until its load returns, so it answers only from state
// that is committed.
func (n *Node) replayInternal(ctx context.Context, topic string, p int32, fn func(internalRecord) error) error {
	part, err := n.internalPartition(topic, p)
	if err != nil {
		return err
	}
	offset := part.LogStartOffset()
	end := part.LogEndOffset()
	var buf []byte
	for offset < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !part.IsLeader() {
			return fmt.Errorf("replay %s-%d: %w", topic, p, partition.ErrNotLeader)
		}
		buf, err = part.Read(buf[:0], offset, 1<<20, partition.ReadReplica, true)
		if err != nil {
			return fmt.Errorf("replay %s-%d at %d: %w", topic, p, offset, err)
		}
		if len(buf) == 0 {
			break
		}
		next, err := replayBatches(buf, offset, fn)
		if err != nil {
			return fmt.Errorf("replay %s-%d: %w", topic, p, err)
		}
		offset = next
	}
	if err := waitCommitted(ctx, part, end); err != nil {
		return fmt.Errorf("replay %s-%d: wait for the high watermark to reach %d: %w", topic, p, end, err)
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
