package log

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// producerBatchesRetained is how many recent batches per producer are kept
// for duplicate detection: a producer has at most five requests in flight
// per partition.
const producerBatchesRetained = 5

// ProducerState describes one producer known to a log (DescribeProducers).
type ProducerState struct {
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32 // -1 when no batch of the current epoch is retained
	LastTimestamp         int64 // ms: max timestamp of the last batch or marker
	CoordinatorEpoch      int32 // -1 until a transaction marker was written
	CurrentTxnStartOffset int64 // first offset of the open transaction, -1 none
}

// batchMetadata is one retained batch of a producer.
type batchMetadata struct {
	firstSeq    int32
	lastSeq     int32
	lastOffset  int64
	offsetDelta int32
	timestamp   int64
}

func (m batchMetadata) firstOffset() int64 { return m.lastOffset - int64(m.offsetDelta) }

// producerEntry is the state of one producer id. It is a plain value (the
// batch window is a fixed array) so that appends can stage a copy without
// allocating.
type producerEntry struct {
	id               int64
	epoch            int16
	batches          [producerBatchesRetained]batchMetadata // ring, oldest at head
	head, n          int8
	lastTimestamp    int64
	coordinatorEpoch int32
	txnFirstOffset   int64 // -1 when no transaction is open
}

func newProducerEntry(id int64) producerEntry {
	return producerEntry{id: id, epoch: -1, lastTimestamp: -1, coordinatorEpoch: -1, txnFirstOffset: -1}
}

func (e *producerEntry) at(i int8) *batchMetadata {
	return &e.batches[(e.head+i)%producerBatchesRetained]
}

// last returns the newest retained batch.
func (e *producerEntry) last() (batchMetadata, bool) {
	if e.n == 0 {
		return batchMetadata{}, false
	}
	return *e.at(e.n - 1), true
}

func (e *producerEntry) lastSeq() int32 {
	if m, ok := e.last(); ok {
		return m.lastSeq
	}
	return -1
}

// setEpoch moves to epoch, forgetting the batches of an older one.
func (e *producerEntry) setEpoch(epoch int16) {
	if e.epoch != epoch {
		e.epoch, e.head, e.n = epoch, 0, 0
	}
}

func (e *producerEntry) addBatch(epoch int16, m batchMetadata) {
	e.setEpoch(epoch)
	if e.n == producerBatchesRetained {
		e.head = (e.head + 1) % producerBatchesRetained
		e.n--
	}
	*e.at(e.n) = m
	e.n++
	e.lastTimestamp = m.timestamp
}

// find returns the retained batch with exactly this sequence range.
func (e *producerEntry) find(firstSeq, lastSeq int32) (batchMetadata, bool) {
	for i := range e.n {
		if m := e.at(i); m.firstSeq == firstSeq && m.lastSeq == lastSeq {
			return *m, true
		}
	}
	return batchMetadata{}, false
}

func (e *producerEntry) state() ProducerState {
	return ProducerState{
		ProducerID: e.id, ProducerEpoch: e.epoch, LastSequence: e.lastSeq(), LastTimestamp: e.lastTimestamp,
		CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnStartOffset: e.txnFirstOffset,
	}
}

// incrementSequence adds n to a sequence number, wrapping past MaxInt32 to 0.
func incrementSequence(seq, n int32) int32 {
	if seq > math.MaxInt32-n {
		return n - (math.MaxInt32 - seq) - 1
	}
	return seq + n
}

// decrementSequence is the inverse of incrementSequence.
func decrementSequence(seq, n int32) int32 {
	if seq < n {
		return math.MaxInt32 - (n - seq) + 1
	}
	return seq - n
}

// inSequence reports whether next directly follows last.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// ongoingTxn is an open transaction.
type ongoingTxn struct {
	producerID  int64
	firstOffset int64
}

// producerState is everything the log knows about producers: the entries
// and the open transactions, ordered by first offset.
type producerState struct {
	byID    map[int64]*producerEntry
	ongoing []ongoingTxn
}

func newProducerState() producerState {
	return producerState{byID: map[int64]*producerEntry{}}
}

func (ps *producerState) put(e producerEntry) {
	if p := ps.byID[e.id]; p != nil {
		*p = e
		return
	}
	ne := e
	ps.byID[e.id] = &ne
}

func (ps *producerState) startTxn(pid, first int64) {
	i := sort.Search(len(ps.ongoing), func(i int) bool { return ps.ongoing[i].firstOffset > first })
	ps.ongoing = append(ps.ongoing, ongoingTxn{})
	copy(ps.ongoing[i+1:], ps.ongoing[i:])
	ps.ongoing[i] = ongoingTxn{producerID: pid, firstOffset: first}
}

func (ps *producerState) endTxn(pid, first int64) {
	for i, t := range ps.ongoing {
		if t.producerID == pid && t.firstOffset == first {
			ps.ongoing = append(ps.ongoing[:i], ps.ongoing[i+1:]...)
			return
		}
	}
}

// lastStableOffsetFor is the last stable offset recorded with an aborted
// transaction of pid ending at last: the first offset of the earliest
// transaction of another producer still open, else last + 1.
func (ps *producerState) lastStableOffsetFor(pid, last int64) int64 {
	for _, t := range ps.ongoing {
		if t.producerID != pid {
			return t.firstOffset
		}
	}
	return last + 1
}

func (ps *producerState) firstUnstableOffset() int64 {
	if len(ps.ongoing) == 0 {
		return -1
	}
	return ps.ongoing[0].firstOffset
}

// producerBatch is what producer state needs of one batch.
type producerBatch struct {
	producerID       int64
	epoch            int16
	firstSeq         int32
	lastSeq          int32
	firstOffset      int64
	lastOffset       int64
	maxTimestamp     int64
	transactional    bool
	marker           int8 // -1 data batch, 0 abort marker, 1 commit marker
	coordinatorEpoch int32
}

// txnEvent is a transaction start or end staged by an append.
type txnEvent struct {
	producerID  int64
	firstOffset int64
	lastOffset  int64 // marker offset; -1 for a start
	abort       bool
}

// applyData records a data batch in e; it returns whether the batch began
// a transaction.
func (e *producerEntry) applyData(b *producerBatch) bool {
	e.addBatch(b.epoch, batchMetadata{
		firstSeq: b.firstSeq, lastSeq: b.lastSeq, lastOffset: b.lastOffset,
		offsetDelta: int32(b.lastOffset - b.firstOffset), timestamp: b.maxTimestamp,
	})
	if b.transactional && e.txnFirstOffset < 0 {
		e.txnFirstOffset = b.firstOffset
		return true
	}
	return false
}

// applyMarker ends e's transaction; it returns the first offset of the
// transaction it ended, or -1 when none was open.
func (e *producerEntry) applyMarker(b *producerBatch) int64 {
	first := e.txnFirstOffset
	e.setEpoch(b.epoch)
	e.txnFirstOffset = -1
	e.coordinatorEpoch = b.coordinatorEpoch
	e.lastTimestamp = b.maxTimestamp
	return first
}

// pendingProducer is a producer entry staged by an append that has not
// been written yet.
type pendingProducer struct {
	entry          producerEntry
	committedEpoch int16 // epoch before this append, -1 for an unknown producer
}

// pendingLocked returns the staged entry of pid, staging a copy of the
// committed one (or a new one) first. The pointer is valid until the next
// call.
func (l *Log) pendingLocked(pid int64) *pendingProducer {
	for i := range l.mu.pending {
		if l.mu.pending[i].entry.id == pid {
			return &l.mu.pending[i]
		}
	}
	p := pendingProducer{entry: newProducerEntry(pid), committedEpoch: -1}
	if c := l.mu.producers.byID[pid]; c != nil {
		p.entry, p.committedEpoch = *c, c.epoch
	}
	l.mu.pending = append(l.mu.pending, p)
	return &l.mu.pending[len(l.mu.pending)-1]
}

// checkProducersLocked validates the producer state of every batch of an
// append whose first offset will be first, staging the changes in
// l.mu.pending and l.mu.events. When a batch repeats one of the last
// batches of its producer it returns that batch's original placement and
// dup = true; nothing may then be appended. A recorded coordinator epoch
// above maxCoordinatorEpoch does not fence a marker (AppendCoordinatorMarker).
func (l *Log) checkProducersLocked(infos []batchInfo, first int64, maxCoordinatorEpoch int32) (res AppendResult, dup bool, err error) {
	l.mu.pending, l.mu.events = l.mu.pending[:0], l.mu.events[:0]
	off := first
	for i := range infos {
		in := &infos[i]
		b := producerBatch{
			producerID: in.producerID, epoch: in.producerEpoch, firstSeq: in.baseSequence,
			lastSeq: incrementSequence(in.baseSequence, in.records-1), firstOffset: off,
			lastOffset: off + int64(in.records) - 1, maxTimestamp: in.maxTimestamp,
			transactional: in.transactional, marker: in.marker, coordinatorEpoch: in.coordinatorEpoch,
		}
		off += int64(in.records)
		if b.producerID < 0 || (in.control && b.marker < 0) {
			continue
		}
		if b.marker >= 0 {
			if err := l.checkMarkerLocked(&b, maxCoordinatorEpoch); err != nil {
				return AppendResult{}, false, err
			}
			continue
		}
		// Coordinators write transactional records (offsets committed in
		// a transaction) without sequence numbers: only the epoch is
		// checked for them, as Kafka does for coordinator appends.
		sequenced := b.firstSeq >= 0
		if c := l.mu.producers.byID[b.producerID]; sequenced && c != nil && c.epoch == b.epoch {
			if m, ok := c.find(b.firstSeq, b.lastSeq); ok {
				return AppendResult{
					FirstOffset: m.firstOffset(), LastOffset: m.lastOffset, LogAppendTime: -1,
					MaxTimestamp: m.timestamp, Duplicate: true,
				}, true, nil
			}
		}
		p := l.pendingLocked(b.producerID)
		e := &p.entry
		if b.epoch < e.epoch {
			return AppendResult{}, false, fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, b.producerID, b.epoch, e.epoch)
		}
		if b.epoch != e.epoch {
			// A new epoch starts its sequences at 0, unless the producer
			// is unknown (its state expired or was never seen).
			if sequenced && b.firstSeq != 0 && e.epoch != -1 {
				return AppendResult{}, false, fmt.Errorf("%w: producer %d new epoch %d starts at sequence %d (current epoch %d)", ErrOutOfOrderSequence, b.producerID, b.epoch, b.firstSeq, e.epoch)
			}
		} else if last := e.lastSeq(); sequenced && p.committedEpoch != -1 && last >= 0 && !inSequence(last, b.firstSeq) {
			return AppendResult{}, false, fmt.Errorf("%w: producer %d epoch %d sequence %d after %d", ErrOutOfOrderSequence, b.producerID, b.epoch, b.firstSeq, last)
		}
		if e.txnFirstOffset >= 0 && !b.transactional {
			return AppendResult{}, false, fmt.Errorf("%w: producer %d wrote a non-transactional batch inside the transaction open since offset %d", ErrInvalidTxnState, b.producerID, e.txnFirstOffset)
		}
		if e.applyData(&b) {
			l.mu.events = append(l.mu.events, txnEvent{producerID: b.producerID, firstOffset: b.firstOffset, lastOffset: -1})
		}
	}
	return AppendResult{}, false, nil
}

func (l *Log) checkMarkerLocked(b *producerBatch, maxCoordinatorEpoch int32) error {
	p := l.pendingLocked(b.producerID)
	e := &p.entry
	if b.epoch < e.epoch {
		return fmt.Errorf("%w: marker for producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, b.producerID, b.epoch, e.epoch)
	}
	if e.coordinatorEpoch > b.coordinatorEpoch && e.coordinatorEpoch <= maxCoordinatorEpoch {
		return fmt.Errorf("%w: marker for producer %d from coordinator epoch %d, last seen %d", ErrTransactionCoordinatorFenced, b.producerID, b.coordinatorEpoch, e.coordinatorEpoch)
	}
	if first := e.applyMarker(b); first >= 0 {
		l.mu.events = append(l.mu.events, txnEvent{producerID: b.producerID, firstOffset: first, lastOffset: b.lastOffset, abort: b.marker == 0})
	}
	return nil
}

// commitProducersLocked applies the state staged by checkProducersLocked
// once the batches are written to seg. Transactions started by the append
// are registered before those it ended are completed, so the last stable
// offset recorded with an abort accounts for them.
func (l *Log) commitProducersLocked(seg *segment) {
	if len(l.mu.pending) == 0 {
		return
	}
	ps := &l.mu.producers
	for i := range l.mu.pending {
		ps.put(l.mu.pending[i].entry)
	}
	for _, ev := range l.mu.events {
		if ev.lastOffset < 0 {
			ps.startTxn(ev.producerID, ev.firstOffset)
		}
	}
	for _, ev := range l.mu.events {
		if ev.lastOffset < 0 {
			continue
		}
		lso := ps.lastStableOffsetFor(ev.producerID, ev.lastOffset)
		ps.endTxn(ev.producerID, ev.firstOffset)
		if ev.abort {
			seg.addAbortedLocked(AbortedTxn{ProducerID: ev.producerID, FirstOffset: ev.firstOffset, LastOffset: ev.lastOffset, LastStableOffset: lso})
		}
	}
	l.mu.pending = l.mu.pending[:0]
	l.mu.events = l.mu.events[:0]
	l.fuo.Store(ps.firstUnstableOffset())
}

// replayBatch applies a batch read back from the log to ps without checks
// (recovery and truncation rebuild state from data already accepted). An
// aborted transaction it completes is returned with ok = true.
func (ps *producerState) replayBatch(b *producerBatch) (AbortedTxn, bool) {
	e := ps.byID[b.producerID]
	if e == nil {
		ne := newProducerEntry(b.producerID)
		e = &ne
		ps.byID[b.producerID] = e
	}
	if b.marker < 0 {
		if e.applyData(b) {
			ps.startTxn(b.producerID, b.firstOffset)
		}
		return AbortedTxn{}, false
	}
	first := e.applyMarker(b)
	if first < 0 {
		return AbortedTxn{}, false
	}
	lso := ps.lastStableOffsetFor(b.producerID, b.lastOffset)
	ps.endTxn(b.producerID, first)
	if b.marker != 0 {
		return AbortedTxn{}, false
	}
	return AbortedTxn{ProducerID: b.producerID, FirstOffset: first, LastOffset: b.lastOffset, LastStableOffset: lso}, true
}

// FirstUnstableOffset is the first offset of the earliest open transaction,
// or -1 when none is open. The partition's last stable offset is the
// smaller of this and the high watermark. It takes no lock.
func (l *Log) FirstUnstableOffset() int64 { return l.fuo.Load() }

// Producers returns the state of every producer the log knows, ordered by
// producer id.
func (l *Log) Producers() []ProducerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ProducerState, 0, len(l.mu.producers.byID))
	for _, e := range l.mu.producers.byID {
		out = append(out, e.state())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// ExpireProducers forgets producers whose last batch or marker is at least
// expiration older than now (producer.id.expiration.ms), never one with an
// open transaction. It returns how many were dropped. A producer that
// writes again after expiring is treated as unknown.
func (l *Log) ExpireProducers(now time.Time, expiration time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.producers.expire(now.UnixMilli(), expiration.Milliseconds())
}

func (ps *producerState) expire(nowMs, expirationMs int64) int {
	n := 0
	for id, e := range ps.byID {
		if producerExpired(e, nowMs, expirationMs) {
			delete(ps.byID, id)
			n++
		}
	}
	return n
}

func producerExpired(e *producerEntry, nowMs, expirationMs int64) bool {
	return e.txnFirstOffset < 0 && nowMs-e.lastTimestamp >= expirationMs
}
