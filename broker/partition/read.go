package partition

import (
	"slices"

	"github.com/klogdev/klog/store/log"
)

// The reads of the Kafka handlers: each applies the partition's bounds, so
// no handler reaches the log itself.

// FetchResult is one read with the offsets that bounded it, taken once so
// that they agree with each other and with the records.
type FetchResult struct {
	// Records is dst with whole batches appended.
	Records          []byte
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	// AbortedTransactions overlap the records read, for ReadCommitted
	// reads that returned records; nil otherwise. A superset of the
	// records' range: clients match them against the batches they got.
	AbortedTransactions []log.AbortedTxn
}

// Fetch is Read for a consumer's fetch: it also reports the high
// watermark, last stable offset and log start offset, and the aborted
// transactions up to the same last stable offset that bounded a
// read_committed read. A read with no room (maxBytes <= 0 without
// minOneBatch) reads nothing and reports only the offsets. The offsets are
// reported with an error too.
func (p *Partition) Fetch(dst []byte, offset int64, maxBytes int, iso Isolation, minOneBatch bool) (FetchResult, error) {
	hw := p.hw.Load()
	res := FetchResult{
		Records:          dst,
		HighWatermark:    hw,
		LastStableOffset: p.lastStable(hw),
		LogStartOffset:   p.log.StartOffset(),
	}
	if maxBytes <= 0 && !minOneBatch {
		return res, nil
	}
	bound := hw
	switch iso {
	case ReadCommitted:
		bound = res.LastStableOffset
	case ReadReplica:
		bound = p.log.EndOffset()
	}
	out, err := p.log.Read(dst, offset, maxBytes, bound, minOneBatch)
	if err != nil {
		return res, err
	}
	res.Records = out
	if iso == ReadCommitted && len(out) > len(dst) {
		res.AbortedTransactions = p.log.AbortedTransactions(offset, res.LastStableOffset)
	}
	return res, nil
}

// FirstBatchSize is the size of the first batch Fetch would return at
// offset under iso; 0 when it would return none.
func (p *Partition) FirstBatchSize(offset int64, iso Isolation) (int, error) {
	return p.log.BatchSize(offset, p.bound(iso))
}

// OffsetForTimestamp finds the earliest committed offset (below the high
// watermark) whose record timestamp is at or after ts, with that
// timestamp; ok is false when no record qualifies.
func (p *Partition) OffsetForTimestamp(ts int64) (offset, timestamp int64, ok bool, err error) {
	offset, timestamp, ok, err = p.log.OffsetForTimestamp(ts)
	if err != nil || !ok || offset >= p.hw.Load() {
		return 0, 0, false, err
	}
	return offset, timestamp, true, nil
}

// MaxTimestamp is the largest record timestamp in the log and the offset
// of its batch; (-1, -1) for an empty log. It is not bounded by the high
// watermark.
func (p *Partition) MaxTimestamp() (timestamp, offset int64) { return p.log.MaxTimestamp() }

// LeaderEpochOf is the leader epoch that wrote offset, from the log's
// leader-epoch cache; -1 when the cache has no epoch that early.
func (p *Partition) LeaderEpochOf(offset int64) int32 {
	epoch := int32(-1)
	for _, e := range p.log.LeaderEpochs() {
		if e.StartOffset > offset {
			break
		}
		epoch = e.Epoch
	}
	return epoch
}

// LeaderEpochs is the log's leader-epoch cache, oldest first: what a
// follower asks its leader about and truncates by.
func (p *Partition) LeaderEpochs() []log.EpochEntry { return p.log.LeaderEpochs() }

// EndOffsetForEpoch answers OffsetForLeaderEpoch for epoch: the largest
// leader epoch at or below it and the offset where the next one starts, the
// log end for the current epoch (store/log.EndOffsetFor). The leader's
// current epoch counts from the log end even before its first append, as in
// Kafka, which writes it to the cache when the replica becomes leader
// (Partition.makeLeader); klog writes it with the first batch of the epoch.
func (p *Partition) EndOffsetForEpoch(epoch int32) (int32, int64) {
	p.mu.Lock() // no append in flight: the cache and the log end agree
	defer p.mu.Unlock()
	st := p.state.Load()
	es := p.log.LeaderEpochs()
	end := p.log.EndOffset()
	if n := len(es); p.leads(st) && st.Epoch >= 0 && (n == 0 || es[n-1].Epoch < st.Epoch) {
		es = append(es, log.EpochEntry{Epoch: st.Epoch, StartOffset: end})
	}
	return log.EndOffsetFor(es, epoch, end)
}

// Size is the partition's log size in bytes, its segments together.
func (p *Partition) Size() int64 { return p.log.Size() }

// Segments describes the log's segments, oldest first.
func (p *Partition) Segments() []log.SegmentInfo { return p.log.Segments() }

// Producers is the state of every producer the log knows, ordered by
// producer id.
func (p *Partition) Producers() []log.ProducerState { return p.log.Producers() }

// Snapshot is a partition's offsets and leader state at one moment, a plain
// value for inspection (the admin API, the TUI).
type Snapshot struct {
	Topic   string
	Index   int32
	TopicID [16]byte
	// IsLeader reports whether this replica is Leader.Leader.
	IsLeader bool
	Leader   LeaderState

	LogStartOffset   int64
	HighWatermark    int64
	LastStableOffset int64
	LogEndOffset     int64
	// Followers is the leader's state of each follower; nil unless
	// IsLeader.
	Followers []ReplicaState
	// TakenMs is when the snapshot was taken (the partition's clock, in
	// Unix milliseconds) and ReplicaLagTimeMaxMs the partition's
	// replica.lag.time.max.ms: with them ReplicaState.CaughtUp says
	// whether a follower counts as caught up, as the ISR check does.
	TakenMs             int64
	ReplicaLagTimeMaxMs int64
}

// Snapshot returns the partition's offsets and leader state taken together:
// it waits for an append in flight, so the high watermark, the log end and
// the leader state are those between two writes. The log start may still
// move with retention.
func (p *Partition) Snapshot() Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.state.Load()
	hw := p.hw.Load()
	return Snapshot{
		Topic:            p.topic,
		Index:            p.index,
		TopicID:          p.topicID,
		IsLeader:         p.leads(st),
		Leader:           st.clone(),
		LogStartOffset:   p.log.StartOffset(),
		HighWatermark:    hw,
		LastStableOffset: p.lastStable(hw),
		LogEndOffset:     p.log.EndOffset(),
		Followers:        slices.Clone(p.mu.followers),

		TakenMs:             p.now().UnixMilli(),
		ReplicaLagTimeMaxMs: p.lagMaxMs,
	}
}
