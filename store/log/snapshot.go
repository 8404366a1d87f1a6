package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/klogdev/klog/store/log/record"
)

// castagnoli is the CRC-32C table of snapshot checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Producer state snapshot layout (version 1), see the package doc.
const (
	snapshotVersion    = 1
	snapshotHeaderSize = 10 // version int16, crc uint32, entry count int32
	snapshotEntrySize  = 46
	snapshotExt        = ".snapshot"
	// maxSnapshotBytes bounds what is read back: over 1.4 million producers.
	maxSnapshotBytes = 64 << 20
)

// encodeSnapshot serialises every producer entry, ordered by producer id.
func encodeSnapshot(ps *producerState) []byte {
	ids := make([]int64, 0, len(ps.byID))
	for id := range ps.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b := make([]byte, snapshotHeaderSize, snapshotHeaderSize+len(ids)*snapshotEntrySize)
	binary.BigEndian.PutUint16(b, snapshotVersion)
	binary.BigEndian.PutUint32(b[6:], uint32(len(ids)))
	for _, id := range ids {
		e := ps.byID[id]
		m, ok := e.last()
		if !ok {
			m = batchMetadata{lastSeq: -1, lastOffset: -1, timestamp: e.lastTimestamp}
		}
		b = binary.BigEndian.AppendUint64(b, uint64(e.id))
		b = binary.BigEndian.AppendUint16(b, uint16(e.epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(m.lastSeq))
		b = binary.BigEndian.AppendUint64(b, uint64(m.lastOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(m.offsetDelta))
		b = binary.BigEndian.AppendUint64(b, uint64(e.lastTimestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.coordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.txnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}

// decodeSnapshot parses a snapshot file into producer state, each entry
// retaining its last batch only, dropping the producers expired at nowMs
// (producer.id.expiration.ms is expirationMs). The file is checked whole
// before anything is kept, and the map is made to the size it ends with.
func decodeSnapshot(b []byte, nowMs, expirationMs int64) (producerState, error) {
	if err := checkSnapshot(b); err != nil {
		return producerState{}, err
	}
	kept := 0
	for p := snapshotHeaderSize; p < len(b); p += snapshotEntrySize {
		e, err := decodeSnapshotEntry(b[p : p+snapshotEntrySize])
		if err != nil {
			return producerState{}, err
		}
		if !producerExpired(&e.producerInfo, nowMs, expirationMs) {
			kept++
		}
	}
	ps := newProducerState(kept)
	for p := snapshotHeaderSize; p < len(b); p += snapshotEntrySize {
		e, _ := decodeSnapshotEntry(b[p : p+snapshotEntrySize])
		if producerExpired(&e.producerInfo, nowMs, expirationMs) {
			continue
		}
		s := e.stage()
		ps.put(&s)
		if e.txnFirstOffset >= 0 {
			ps.startTxn(e.id, e.txnFirstOffset)
		}
	}
	return ps, nil
}

// checkSnapshot checks a snapshot file's header: its size, version, CRC
// and entry count.
func checkSnapshot(b []byte) error {
	if len(b) < snapshotHeaderSize {
		return fmt.Errorf("%w: snapshot of %d bytes", ErrCorrupt, len(b))
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != snapshotVersion {
		return fmt.Errorf("%w: snapshot version %d", ErrCorrupt, v)
	}
	if want, got := binary.BigEndian.Uint32(b[2:]), crc32.Checksum(b[6:], castagnoli); want != got {
		return fmt.Errorf("%w: snapshot crc %08x, computed %08x", ErrCorrupt, want, got)
	}
	n := int32(binary.BigEndian.Uint32(b[6:]))
	if n < 0 || int64(n)*snapshotEntrySize != int64(len(b)-snapshotHeaderSize) {
		return fmt.Errorf("%w: snapshot claims %d entries in %d bytes", ErrCorrupt, n, len(b))
	}
	return nil
}

// snapshotEntryAt reads the fields of one snapshotEntrySize entry as they
// are stored.
func snapshotEntryAt(b []byte) SnapshotEntry {
	return SnapshotEntry{
		ProducerID:            int64(binary.BigEndian.Uint64(b)),
		ProducerEpoch:         int16(binary.BigEndian.Uint16(b[8:])),
		LastSequence:          int32(binary.BigEndian.Uint32(b[10:])),
		LastOffset:            int64(binary.BigEndian.Uint64(b[14:])),
		OffsetDelta:           int32(binary.BigEndian.Uint32(b[22:])),
		Timestamp:             int64(binary.BigEndian.Uint64(b[26:])),
		CoordinatorEpoch:      int32(binary.BigEndian.Uint32(b[34:])),
		CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(b[38:])),
	}
}

// decodeSnapshotEntry parses one snapshotEntrySize entry.
func decodeSnapshotEntry(b []byte) (producerEntry, error) {
	r := snapshotEntryAt(b)
	e := producerEntry{producerInfo: producerInfo{
		id:               r.ProducerID,
		epoch:            r.ProducerEpoch,
		lastTimestamp:    r.Timestamp,
		coordinatorEpoch: r.CoordinatorEpoch,
		txnFirstOffset:   r.CurrentTxnFirstOffset,
	}}
	m := batchMetadata{
		lastSeq:     r.LastSequence,
		lastOffset:  r.LastOffset,
		offsetDelta: r.OffsetDelta,
		timestamp:   e.lastTimestamp,
	}
	if e.id < 0 || m.offsetDelta < 0 || e.txnFirstOffset < -1 {
		return producerEntry{}, fmt.Errorf("%w: snapshot entry for producer %d", ErrCorrupt, e.id)
	}
	e.one = batchMetadata{lastOffset: -1}
	if m.lastOffset >= 0 && m.lastSeq >= 0 {
		e.one = m
	}
	return e, nil
}

func snapshotPath(dir string, offset int64) string {
	return path.Join(dir, segmentName(offset, snapshotExt))
}

// snapshotOffsetsLocked lists the offsets of the snapshot files, ascending.
func (l *Log) snapshotOffsetsLocked() ([]int64, error) {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var offs []int64
	for _, n := range names {
		if !strings.HasSuffix(n, snapshotExt) {
			continue
		}
		if o, ok := parseSegmentName(strings.TrimSuffix(n, snapshotExt)); ok {
			offs = append(offs, o)
		}
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	return offs, nil
}

// writeSnapshotLocked durably writes the producer state as the snapshot at
// offset, the offset of the next batch. A failure is sticky.
func (l *Log) writeSnapshotLocked(offset int64) error {
	if err := writeFileAtomic(l.fs, snapshotPath(l.dir, offset), encodeSnapshot(&l.mu.producers)); err != nil {
		return l.failLocked("write", fmt.Errorf("producer snapshot %d: %w", offset, err))
	}
	return nil
}

// deleteSnapshotsLocked removes the snapshots whose offsets del selects.
func (l *Log) deleteSnapshotsLocked(del func(offset int64) bool) error {
	offs, err := l.snapshotOffsetsLocked()
	if err != nil {
		return l.failLocked("read", err)
	}
	removed := false
	for _, o := range offs {
		if !del(o) {
			continue
		}
		if err := l.fs.Remove(snapshotPath(l.dir, o)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return l.failLocked("remove", fmt.Errorf("remove producer snapshot %d: %w", o, err))
		}
		removed = true
	}
	if removed {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.failLocked("sync", err)
		}
	}
	return nil
}

// loadSnapshotLocked reads the latest readable snapshot at or below limit
// into a fresh state, dropping producers expired at nowMs (as Kafka's
// ProducerStateManager.loadFromSnapshot does). Unreadable
// snapshots are deleted. It returns the snapshot's offset, or -1 (and an
// empty state) when there is none.
func (l *Log) loadSnapshotLocked(limit, nowMs int64) (producerState, int64, error) {
	offs, err := l.snapshotOffsetsLocked()
	if err != nil {
		return newProducerState(0), -1, err
	}
	for i := len(offs) - 1; i >= 0; i-- {
		o := offs[i]
		if o > limit {
			continue
		}
		b, err := readFile(l.fs, snapshotPath(l.dir, o), maxSnapshotBytes)
		var ps producerState
		if err == nil {
			ps, err = decodeSnapshot(b, nowMs, l.mu.cfg.ProducerIDExpirationMs)
		}
		if err != nil {
			l.logger.Warn("producer snapshot unreadable, deleting it", "offset", o, "err", err)
			if rerr := l.fs.Remove(snapshotPath(l.dir, o)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				return newProducerState(0), -1, fmt.Errorf("remove producer snapshot %d: %w", o, rerr)
			}
			continue
		}
		return ps, o, nil
	}
	return newProducerState(0), -1, nil
}

// segmentExts are the files of one segment.
var segmentExts = []string{".log", ".index", ".timeindex", ".txnindex"}

// loadTxnIndexesLocked reads the transaction index of every segment that
// recovery did not mark for rebuilding; an unreadable one is marked.
func (l *Log) loadTxnIndexesLocked() error {
	for _, s := range l.segments() {
		if s.txnStale {
			continue
		}
		b, err := readAll(s.txn)
		if err != nil {
			return fmt.Errorf("read transaction index of segment %d: %w", s.base, err)
		}
		es, err := parseTxnIndex(b, s.base, s.next)
		if err != nil {
			l.logger.Warn("transaction index unreadable, rebuilding", "segment", s.base, "err", err)
			s.txnStale = true
			continue
		}
		s.imu.Lock()
		s.imu.aborted = es
		s.imu.Unlock()
		s.abortedOnDisk = len(es)
	}
	return nil
}

// loadProducerStateLocked rebuilds producer state: snapshots beyond the
// log end or below its first segment are deleted, the latest remaining one
// is loaded and the batches after it are replayed. With rebuild, the
// transaction indexes of segments marked stale are rebuilt as well, by
// replaying from a snapshot at or below the oldest of them when that lies
// before the latest snapshot.
func (l *Log) loadProducerStateLocked(now time.Time, rebuild bool) error {
	segs := l.segments()
	end, first := l.end.Load(), segs[0].base
	if err := l.deleteSnapshotsLocked(func(o int64) bool { return o > end || o < first }); err != nil {
		return err
	}
	nowMs := now.UnixMilli()
	ps, snap, err := l.loadSnapshotLocked(end, nowMs)
	if err != nil {
		return err
	}
	if snap < 0 {
		snap = first
	}
	var stale []*segment
	oldest := int64(math.MaxInt64)
	if rebuild {
		for _, s := range segs {
			if s.txnStale {
				stale = append(stale, s)
				oldest = min(oldest, s.base)
				s.imu.Lock()
				s.imu.aborted = nil
				s.imu.Unlock()
			}
		}
	}
	var collect func(*segment, AbortedTxn)
	if len(stale) > 0 {
		collect = func(s *segment, a AbortedTxn) {
			if s.txnStale {
				s.imu.Lock()
				s.imu.aborted = append(s.imu.aborted, a)
				s.imu.Unlock()
			}
		}
	}
	if oldest < snap {
		early, from, err := l.loadSnapshotLocked(oldest, nowMs)
		if err != nil {
			return err
		}
		if from < 0 {
			from = first
		}
		if err := l.replayLocked(&early, from, snap, collect, true); err != nil {
			return err
		}
	}
	if err := l.replayLocked(&ps, snap, end, collect, false); err != nil {
		return err
	}
	// Replay re-creates producers from batches the live state may have
	// expired already; drop them now rather than at the next check.
	ps.expire(nowMs, l.mu.cfg.ProducerIDExpirationMs)
	if err := l.rebuildWindowsLocked(&ps, snap); err != nil {
		return err
	}
	for _, s := range stale {
		if err := s.txn.Truncate(0); err != nil {
			return fmt.Errorf("truncate transaction index of segment %d: %w", s.base, err)
		}
		s.abortedOnDisk, s.txnUnsynced = 0, true
		if l.mu.buf, err = s.flushLocked(l.mu.buf); err != nil {
			return err
		}
		s.txnStale = false
	}
	l.mu.producers = ps
	l.fuo.Store(ps.firstUnstableOffset())
	return nil
}

// maxReplayedControlBatch bounds the control batches recovery reads whole.
const maxReplayedControlBatch = 64 << 10

// replayLocked applies the batches with offsets in [from, to) to ps.
// collect, when not nil, sees every aborted transaction completed, with the
// segment holding its marker. With txnOnly, ps is wanted for the aborted
// transactions alone: producers that open none are not recorded (a
// rebuild of transaction indexes would otherwise hold a second copy of
// every producer in the replayed range).
func (l *Log) replayLocked(ps *producerState, from, to int64, collect func(*segment, AbortedTxn), txnOnly bool) error {
	for _, s := range l.segments() {
		if s.next <= from {
			continue
		}
		if s.base >= to {
			break
		}
		limit := s.size.Load()
		pos := int64(0)
		if from > s.base {
			p, _, ok, err := s.find(from, limit)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			pos = p
		}
		more := true
		_, err := scanHeaders(s, pos, limit, func(pos int64, h record.Batch) bool {
			if h.BaseOffset() >= to {
				more = false
				return false
			}
			// Markers are transactional batches too.
			if b, ok := l.replayedBatch(s, pos, h); ok && h.LastOffset() >= from && (b.transactional || !txnOnly) {
				if a, ok := ps.replayBatch(&b); ok && collect != nil {
					collect(s, a)
				}
			}
			return true
		})
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// scanHeaders calls fn with the header (HeaderSize bytes) of every batch of
// s from pos, a batch boundary, up to limit, until fn returns false. It
// returns how many bytes of batches it passed.
func scanHeaders(s *segment, pos, limit int64, fn func(pos int64, h record.Batch) bool) (int64, error) {
	var hdr [record.HeaderSize]byte
	start := pos
	for pos+record.HeaderSize <= limit {
		if err := readFull(s.log, hdr[:], pos); err != nil {
			return pos - start, fmt.Errorf("read segment %d at %d: %w", s.base, pos, err)
		}
		h, err := record.ParseHeader(hdr[:])
		if err != nil {
			return pos - start, fmt.Errorf("segment %d at %d: %w", s.base, pos, err)
		}
		if !fn(pos, h) {
			break
		}
		pos += int64(h.Size())
	}
	return pos - start, nil
}

// windowScanBytes bounds how much of the log before a snapshot
// rebuildWindowsLocked reads back.
const windowScanBytes = 16 << 20

// rebuildWindowsLocked gives the producers of ps back the batches before
// snap that their windows held. A snapshot keeps each producer's last batch
// only (the layout Kafka's snapshots have), so a producer whose last five
// batches straddle it would come back from a restart or a truncation
// knowing only the newer ones, and the retry of an older one in flight
// would be answered ErrOutOfOrderSequence instead of as a duplicate (and
// a client that then resets its producer writes it again). The log before
// snap is read backwards, segment by segment and, inside one, from index
// entry to index entry, batch headers only, until each producer whose
// oldest retained batch lies before snap has five batches or reaches the
// start of its sequences (0), a sequence gap, a batch or marker of another
// epoch or the log start, or until windowScanBytes were read: a producer
// whose batches lie further apart keeps what was found.
func (l *Log) rebuildWindowsLocked(ps *producerState, snap int64) error {
	w := newWindowRebuild(ps, snap)
	if w == nil {
		return nil
	}
	segs := l.segments()
	for k := len(segs) - 1; k >= 0 && w.searching(); k-- {
		if err := l.scanWindowsBackLocked(w, segs[k]); err != nil {
			return err
		}
	}
	for _, i := range w.at {
		ps.put(&w.short[i])
	}
	return nil
}

// windowRebuild is the state of rebuildWindowsLocked's backward scan.
type windowRebuild struct {
	ps    *producerState
	short []stagedProducer // the producers whose windows are short
	// at holds the index in short of each producer still searched, left
	// how many there are.
	at   map[int64]int
	left int
	// hi is the largest first offset of their oldest retained batches:
	// the scan starts below it.
	hi      int64
	scanned int64           // header bytes read so far
	found   []producerBatch // the batches of one stretch between index entries
}

// newWindowRebuild stages the producers of ps whose oldest retained batch
// lies before snap and whose window is neither full nor at the start of
// its sequences. It returns nil when there are none.
func newWindowRebuild(ps *producerState, snap int64) *windowRebuild {
	w := &windowRebuild{ps: ps, at: make(map[int64]int), hi: -1}
	for id, e := range ps.byID {
		s := e.stage()
		o, ok := s.batches.first()
		if !ok || s.batches.n == producerBatchesRetained || o.firstOffset() >= snap || o.lastSeq < 0 || o.firstSeq() == 0 {
			continue
		}
		w.at[id] = len(w.short)
		w.short = append(w.short, s)
		w.hi = max(w.hi, o.firstOffset())
	}
	if len(w.short) == 0 {
		return nil
	}
	w.left = len(w.short)
	return w
}

// searching reports whether producers are still short and the scan is
// within windowScanBytes.
func (w *windowRebuild) searching() bool {
	return w.left > 0 && w.scanned < windowScanBytes
}

// take adds b, the next batch down of a producer still short, to its
// window, or ends its search.
func (w *windowRebuild) take(b *producerBatch) {
	i, ok := w.at[b.producerID]
	if !ok {
		return
	}
	s := &w.short[i]
	o, _ := s.batches.first()
	if b.lastOffset >= o.firstOffset() {
		return
	}
	if b.marker < 0 && b.epoch == s.epoch && b.firstSeq >= 0 && inSequence(b.lastSeq, o.firstSeq()) {
		s.batches.prepend(batchMetadata{
			lastSeq: b.lastSeq, lastOffset: b.lastOffset,
			offsetDelta: int32(b.lastOffset - b.firstOffset), timestamp: b.maxTimestamp,
		})
		if s.batches.n < producerBatchesRetained && b.firstSeq != 0 {
			return
		}
	} else if b.marker >= 0 && b.epoch == s.epoch {
		return
	}
	w.ps.put(s)
	delete(w.at, b.producerID)
	w.left--
}

// scanWindowsBackLocked reads the batch headers of seg below w.hi
// backwards, from index entry to index entry, and hands the batches of the
// producers still searched to w.take, newest first.
func (l *Log) scanWindowsBackLocked(w *windowRebuild, seg *segment) error {
	if seg.base >= w.hi {
		return nil
	}
	end := seg.size.Load()
	if seg.next > w.hi {
		p, _, ok, err := seg.find(w.hi, end)
		if err != nil {
			return err
		}
		if ok {
			end = p
		}
	}
	starts := indexedStarts(seg, end)
	for j := len(starts) - 1; j >= 0 && w.searching(); j-- {
		w.found = w.found[:0]
		n, err := scanHeaders(seg, starts[j], end, func(pos int64, h record.Batch) bool {
			if _, ok := w.at[h.ProducerID()]; ok {
				if b, ok := l.replayedBatch(seg, pos, h); ok {
					w.found = append(w.found, b)
				}
			}
			return true
		})
		if err != nil {
			return err
		}
		w.scanned += n
		for i := len(w.found) - 1; i >= 0; i-- {
			w.take(&w.found[i])
		}
		end = starts[j]
	}
	return nil
}

// indexedStarts returns the batch boundaries of seg to read from below
// end, ascending: the segment start and the offset index entries.
func indexedStarts(seg *segment, end int64) []int64 {
	seg.imu.RLock()
	defer seg.imu.RUnlock()
	starts := []int64{0}
	for _, e := range seg.imu.offsets {
		if p := int64(e.pos); p > 0 && p < end {
			starts = append(starts, p)
		}
	}
	return starts
}

// replayedBatch decodes what producer state needs of the batch at pos,
// whose header (HeaderSize bytes) is h; ok is false for batches without
// producer id and for control batches that are not transaction markers.
func (l *Log) replayedBatch(s *segment, pos int64, h record.Batch) (producerBatch, bool) {
	attrs := h.Attributes()
	b := producerBatch{
		producerID:    h.ProducerID(),
		epoch:         h.ProducerEpoch(),
		firstSeq:      h.BaseSequence(),
		firstOffset:   h.BaseOffset(),
		lastOffset:    h.LastOffset(),
		maxTimestamp:  h.MaxTimestamp(),
		transactional: attrs.Transactional(),
		marker:        -1,
	}
	if b.producerID < 0 {
		return b, false
	}
	b.lastSeq = lastSequence(b.firstSeq, h.LastOffsetDelta())
	if !attrs.Control() {
		return b, true
	}
	size := h.Size()
	if attrs.Compression() != record.None || size > maxReplayedControlBatch {
		return b, false
	}
	if cap(l.mu.buf) < size {
		l.mu.buf = make([]byte, size)
	}
	buf := l.mu.buf[:size]
	if err := readFull(s.log, buf, pos); err != nil {
		l.logger.Warn("cannot read control batch", "offset", b.firstOffset, "err", err)
		return b, false
	}
	m, ok, err := record.Batch(buf).TxnMarker()
	if err != nil || !ok {
		return b, false
	}
	b.marker, b.coordinatorEpoch = markerType(m.Commit), m.CoordinatorEpoch
	return b, true
}
