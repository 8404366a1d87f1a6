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
	LastOffset            int64 // last offset of the last batch retained, -1 none
	LastTimestamp         int64 // ms: max timestamp of the last batch or marker
	CoordinatorEpoch      int32 // -1 until a transaction marker was written
	CurrentTxnStartOffset int64 // first offset of the open transaction, -1 none
}

// batchMetadata is one retained batch of a producer, 24 bytes. Its first
// sequence is not stored: sequences advance by one per record, so it is
// lastSeq less offsetDelta.
type batchMetadata struct {
	lastSeq     int32
	offsetDelta int32
	lastOffset  int64 // -1 in producerEntry.one when no batch is retained
	timestamp   int64
}

func (m batchMetadata) firstOffset() int64 { return m.lastOffset - int64(m.offsetDelta) }

func (m batchMetadata) firstSeq() int32 { return decrementSequence(m.lastSeq, m.offsetDelta) }

// batchWindow is the recent batches of a producer's current epoch: a ring,
// oldest at head.
type batchWindow struct {
	b       [producerBatchesRetained]batchMetadata
	head, n int8
}

func (w *batchWindow) at(i int8) *batchMetadata {
	return &w.b[(w.head+i)%producerBatchesRetained]
}

// last returns the newest retained batch.
func (w *batchWindow) last() (batchMetadata, bool) {
	if w.n == 0 {
		return batchMetadata{}, false
	}
	return *w.at(w.n - 1), true
}

// first returns the oldest retained batch.
func (w *batchWindow) first() (batchMetadata, bool) {
	if w.n == 0 {
		return batchMetadata{}, false
	}
	return *w.at(0), true
}

// prepend adds m before the oldest retained batch of a window that is not
// full.
func (w *batchWindow) prepend(m batchMetadata) {
	w.head = (w.head + producerBatchesRetained - 1) % producerBatchesRetained
	*w.at(0) = m
	w.n++
}

func (w *batchWindow) push(m batchMetadata) {
	if w.n == producerBatchesRetained {
		w.head = (w.head + 1) % producerBatchesRetained
		w.n--
	}
	*w.at(w.n) = m
	w.n++
}

// find returns the retained batch with exactly this sequence range.
func (w *batchWindow) find(firstSeq, lastSeq int32) (batchMetadata, bool) {
	for i := range w.n {
		if m := w.at(i); m.lastSeq == lastSeq && m.firstSeq() == firstSeq {
			return *m, true
		}
	}
	return batchMetadata{}, false
}

// producerInfo is the state of one producer id besides its batches.
type producerInfo struct {
	id               int64
	lastTimestamp    int64
	txnFirstOffset   int64 // -1 when no transaction is open
	coordinatorEpoch int32
	epoch            int16
}

// producerEntry is the committed state of one producer id. Any client can
// make a log hold one per producer id it invents, so it is kept small: 64
// bytes with at most one batch retained, which is every producer that wrote
// once, and every producer loaded from a snapshot. The window of a producer
// that has more is allocated on its second batch and kept while it has
// more than one. Entries change only through stage and set.
type producerEntry struct {
	producerInfo
	one  batchMetadata // the retained batch when more is nil; lastOffset -1 when none
	more *batchWindow  // the retained batches, when more than one is
}

// stage returns a copy of e to change; set stores it back.
func (e *producerEntry) stage() stagedProducer {
	s := stagedProducer{producerInfo: e.producerInfo}
	switch {
	case e.more != nil:
		s.batches = *e.more
	case e.one.lastOffset >= 0:
		s.batches.push(e.one)
	}
	return s
}

func (e *producerEntry) set(s *stagedProducer) {
	e.producerInfo = s.producerInfo
	if s.batches.n <= 1 {
		e.more = nil
		e.one = batchMetadata{lastOffset: -1}
		if m, ok := s.batches.last(); ok {
			e.one = m
		}
		return
	}
	if e.more == nil {
		e.more = new(batchWindow)
	}
	*e.more = s.batches
}

// last returns the newest retained batch.
func (e *producerEntry) last() (batchMetadata, bool) {
	if e.more != nil {
		return e.more.last()
	}
	return e.one, e.one.lastOffset >= 0
}

// find returns the retained batch with exactly this sequence range.
func (e *producerEntry) find(firstSeq, lastSeq int32) (batchMetadata, bool) {
	if e.more != nil {
		return e.more.find(firstSeq, lastSeq)
	}
	if m := e.one; m.lastOffset >= 0 && m.lastSeq == lastSeq && m.firstSeq() == firstSeq {
		return m, true
	}
	return batchMetadata{}, false
}

func (e *producerEntry) state() ProducerState {
	lastSeq, lastOffset := int32(-1), int64(-1)
	if m, ok := e.last(); ok {
		lastSeq, lastOffset = m.lastSeq, m.lastOffset
	}
	return ProducerState{
		ProducerID: e.id, ProducerEpoch: e.epoch, LastSequence: lastSeq, LastOffset: lastOffset, LastTimestamp: e.lastTimestamp,
		CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnStartOffset: e.txnFirstOffset,
	}
}

// stagedProducer is the state of a producer id while an append or a replay
// changes it: a plain value holding the whole window, so that appends stage
// a copy without allocating.
type stagedProducer struct {
	producerInfo
	batches batchWindow
}

// newStagedProducer is the state of a producer id the log does not know.
func newStagedProducer(id int64) stagedProducer {
	return stagedProducer{producerInfo: producerInfo{id: id, epoch: -1, lastTimestamp: -1, coordinatorEpoch: -1, txnFirstOffset: -1}}
}

func (s *stagedProducer) lastSeq() int32 {
	if m, ok := s.batches.last(); ok {
		return m.lastSeq
	}
	return -1
}

// setEpoch moves to epoch, forgetting the batches of an older one.
func (s *stagedProducer) setEpoch(epoch int16) {
	if s.epoch != epoch {
		s.epoch, s.batches = epoch, batchWindow{}
	}
}

func (s *stagedProducer) addBatch(epoch int16, m batchMetadata) {
	s.setEpoch(epoch)
	s.batches.push(m)
	s.lastTimestamp = m.timestamp
}

// incrementSequence adds n to a sequence number, wrapping past MaxInt32 to 0.
func incrementSequence(seq, n int32) int32 {
	if seq > math.MaxInt32-n {
		return n - (math.MaxInt32 - seq) - 1
	}
	return seq + n
}

// lastSequence is the last sequence of a batch starting at firstSeq whose
// last offset delta is delta: -1 for a batch without sequence numbers, as
// Kafka's DefaultRecordBatch.lastSequence.
func lastSequence(firstSeq, delta int32) int32 {
	if firstSeq < 0 {
		return -1
	}
	return incrementSequence(firstSeq, delta)
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
	// peak is the most entries byID has held since it was made: a Go map
	// never shrinks, so expire remakes it once it holds far fewer.
	peak int
}

func newProducerState(size int) producerState {
	return producerState{byID: make(map[int64]*producerEntry, size), peak: size}
}

// put stores s as the committed state of its producer.
func (ps *producerState) put(s *stagedProducer) {
	e := ps.byID[s.id]
	if e == nil {
		e = new(producerEntry)
		ps.byID[s.id] = e
		ps.peak = max(ps.peak, len(ps.byID))
	}
	e.set(s)
}

// stage returns the state of pid to change, a new one if it is unknown.
func (ps *producerState) stage(pid int64) stagedProducer {
	if e := ps.byID[pid]; e != nil {
		return e.stage()
	}
	return newStagedProducer(pid)
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

// applyData records a data batch in s; it returns whether the batch began
// a transaction.
func (s *stagedProducer) applyData(b *producerBatch) bool {
	s.addBatch(b.epoch, batchMetadata{
		lastSeq: b.lastSeq, lastOffset: b.lastOffset,
		offsetDelta: int32(b.lastOffset - b.firstOffset), timestamp: b.maxTimestamp,
	})
	if b.transactional && s.txnFirstOffset < 0 {
		s.txnFirstOffset = b.firstOffset
		return true
	}
	return false
}

// applyMarker ends s's transaction; it returns the first offset of the
// transaction it ended, or -1 when none was open.
func (s *stagedProducer) applyMarker(b *producerBatch) int64 {
	first := s.txnFirstOffset
	s.setEpoch(b.epoch)
	s.txnFirstOffset = -1
	s.coordinatorEpoch = b.coordinatorEpoch
	s.lastTimestamp = b.maxTimestamp
	return first
}

// pendingProducer is a producer entry staged by an append that has not
// been written yet.
type pendingProducer struct {
	entry          stagedProducer
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
	p := pendingProducer{entry: newStagedProducer(pid), committedEpoch: -1}
	if c := l.mu.producers.byID[pid]; c != nil {
		p.entry, p.committedEpoch = c.stage(), c.epoch
	}
	l.mu.pending = append(l.mu.pending, p)
	return &l.mu.pending[len(l.mu.pending)-1]
}

// checkProducersLocked validates the producer state of every batch of an
// append whose first offset will be first, staging the changes in
// l.mu.pending and l.mu.events. When a batch repeats one of the last
// batches of its producer it returns that batch's original placement and
// dup = true; nothing may then be appended. Markers are checked per mc
// (AppendCoordinatorMarker, Marker.TransactionVersion).
func (l *Log) checkProducersLocked(infos []batchInfo, first int64, mc markerCheck) (res AppendResult, dup bool, err error) {
	l.mu.pending, l.mu.events = l.mu.pending[:0], l.mu.events[:0]
	off := first
	for i := range infos {
		in := &infos[i]
		b := producerBatch{
			producerID: in.producerID, epoch: in.producerEpoch, firstSeq: in.baseSequence,
			lastSeq: lastSequence(in.baseSequence, in.records-1), firstOffset: off,
			lastOffset: off + int64(in.records) - 1, maxTimestamp: in.maxTimestamp,
			transactional: in.transactional, marker: in.marker, coordinatorEpoch: in.coordinatorEpoch,
		}
		off += int64(in.records)
		if b.producerID < 0 || (in.control && b.marker < 0) {
			continue
		}
		if b.marker >= 0 {
			if err := l.checkMarkerLocked(&b, mc); err != nil {
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
		if v, ok := l.mu.verifying[b.producerID]; ok && sequenced && b.transactional {
			// A batch after one that is still being verified (or failed
			// verification) would leave a gap: refused until the lower
			// one is appended, as Kafka's ProducerAppendInfo.checkSequence.
			if b.firstSeq > v.lowestSeq {
				return AppendResult{}, false, fmt.Errorf("%w: producer %d sequence %d while sequence %d is not appended yet", ErrOutOfOrderSequence, b.producerID, b.firstSeq, v.lowestSeq)
			}
			delete(l.mu.verifying, b.producerID)
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

func (l *Log) checkMarkerLocked(b *producerBatch, mc markerCheck) error {
	p := l.pendingLocked(b.producerID)
	e := &p.entry
	switch {
	case mc.txnVersion >= 2 && b.epoch == e.epoch && (e.txnFirstOffset < 0 || b.epoch == math.MaxInt16):
		// The retry of a marker already written: accepted as Kafka
		// accepts it (an idempotent marker retry).
	case mc.txnVersion >= 2 && b.epoch <= e.epoch:
		return fmt.Errorf("%w: marker for producer %d epoch %d is not above %d (transaction version 2)", ErrInvalidProducerEpoch, b.producerID, b.epoch, e.epoch)
	case b.epoch < e.epoch:
		return fmt.Errorf("%w: marker for producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, b.producerID, b.epoch, e.epoch)
	}
	if e.coordinatorEpoch > b.coordinatorEpoch && e.coordinatorEpoch <= mc.maxCoordinatorEpoch {
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
		ps.put(&l.mu.pending[i].entry)
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
	e := ps.stage(b.producerID)
	if b.marker < 0 {
		if e.applyData(b) {
			ps.startTxn(b.producerID, b.firstOffset)
		}
		ps.put(&e)
		return AbortedTxn{}, false
	}
	first := e.applyMarker(b)
	ps.put(&e)
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
// open transaction, as Kafka's ProducerStateManager.removeExpiredProducers
// does. It returns how many were dropped. A producer that writes again
// after expiring is treated as unknown.
//
// Unlike Kafka, a producer whose last timestamp lies ahead of now (a client
// clock ahead, or a client that invents timestamps) is taken as last active
// now: else a batch timestamped years ahead would keep its producer for
// years. Its LastTimestamp reads now from then on.
func (l *Log) ExpireProducers(now time.Time, expiration time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, v := range l.mu.verifying {
		if now.UnixMilli()-v.startMs > expiration.Milliseconds() {
			delete(l.mu.verifying, id)
		}
	}
	return l.mu.producers.expire(now.UnixMilli(), expiration.Milliseconds())
}

// verification is a producer's transactional batches under verification.
type verification struct {
	lowestSeq int32
	epoch     int16
	startMs   int64
}

// maxVerifying bounds the producers under verification one log tracks; a
// new one past it is not tracked (its batches are checked as before).
const maxVerifying = 1 << 16

// StartVerification records that the leader is about to verify a
// transactional batch of producerID at epoch, starting at sequence seq,
// with the transaction coordinator (KIP-890). Until a transactional batch
// of the producer is appended, one that starts past the lowest sequence
// recorded is refused ErrOutOfOrderSequence: when the first batch of a
// transaction fails verification and is retried, a later batch already in
// flight must not be appended ahead of it (Kafka's
// ProducerStateManager.maybeCreateVerificationStateEntry). A higher epoch
// starts over; entries expire with producer.id.expiration.ms.
func (l *Log) StartVerification(producerID int64, epoch int16, seq int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.mu.verifying[producerID]
	switch {
	case !ok:
		if l.mu.verifying == nil {
			l.mu.verifying = make(map[int64]verification)
		}
		if len(l.mu.verifying) >= maxVerifying {
			return
		}
		v = verification{lowestSeq: seq, epoch: epoch, startMs: l.now().UnixMilli()}
	case epoch > v.epoch:
		v = verification{lowestSeq: seq, epoch: epoch, startMs: l.now().UnixMilli()}
	case epoch == v.epoch:
		v.lowestSeq = min(v.lowestSeq, seq)
	}
	l.mu.verifying[producerID] = v
}

// ExpireProducers runs Log.ExpireProducers over every log, each with its
// producer.id.expiration.ms; the broker calls it every
// producer.id.expiration.check.interval.ms. It returns how many producers
// were dropped.
func (m *Manager) ExpireProducers(now time.Time) int {
	n := 0
	for tp, l := range m.Logs() {
		if k := l.ExpireProducers(now, time.Duration(l.Config().ProducerIDExpirationMs)*time.Millisecond); k > 0 {
			m.logger.Debug("expired producers", "partition", tp.Dir(), "producers", k)
			n += k
		}
	}
	return n
}

// minShrinkPeak is the peak size below which expire never remakes the map.
const minShrinkPeak = 1024

func (ps *producerState) expire(nowMs, expirationMs int64) int {
	n := 0
	for id, e := range ps.byID {
		if producerExpired(&e.producerInfo, nowMs, expirationMs) {
			delete(ps.byID, id)
			n++
		}
	}
	if ps.peak >= minShrinkPeak && len(ps.byID) <= ps.peak/4 {
		m := make(map[int64]*producerEntry, len(ps.byID))
		for id, e := range ps.byID {
			m[id] = e
		}
		ps.byID, ps.peak = m, len(m)
	}
	return n
}

// producerExpired reports whether e has been idle expirationMs at nowMs. A
// last timestamp ahead of nowMs is first brought back to nowMs.
func producerExpired(e *producerInfo, nowMs, expirationMs int64) bool {
	e.lastTimestamp = min(e.lastTimestamp, nowMs)
	return e.txnFirstOffset < 0 && nowMs-e.lastTimestamp >= expirationMs
}
