package log

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/klogdev/klog/store/log/record"
)

// CleanerState is what the log cleaner knows of one log, for an admin view.
type CleanerState struct {
	// FirstDirtyOffset is the cleaner checkpoint: every offset below it
	// has been cleaned (the log start when never cleaned).
	FirstDirtyOffset int64
	// FirstUncleanableOffset bounds the dirty section at the last
	// computation (see Log.CleanerState).
	FirstUncleanableOffset int64
	CleanBytes, DirtyBytes int64
	// DirtyRatio is DirtyBytes / (CleanBytes + DirtyBytes), 0 for an empty log.
	DirtyRatio float64
	// LastRun is when the last pass started, zero before the first;
	// LastDuration how long it took.
	LastRun      time.Time
	LastDuration time.Duration
	// LastBytesRemoved and LastRecordsRemoved are the last pass's; the
	// totals count every pass since the log was opened.
	LastBytesRemoved, LastRecordsRemoved int64
	BytesRemoved, RecordsRemoved         int64
	Runs                                 int64
}

// CleanOptions parameterise one cleaning pass of a log.
type CleanOptions struct {
	// Now is the time the rules are applied at: min.compaction.lag.ms,
	// delete horizons.
	Now time.Time
	// UpperBound is the first offset that must not be cleaned: the
	// partition's high watermark, or its last stable offset when lower
	// (an open transaction's first offset). Values above the log end mean
	// the log end.
	UpperBound int64
	// MapBytes bounds the offset map (log.cleaner.dedupe.buffer.size); a
	// pass cleans only as far as the map holds the keys of.
	MapBytes int64
	// Stop, when not nil, ends the pass early once closed: before its next
	// batch is read, and never between the renames of a swap. Clean then
	// returns ErrCleanStopped, with the groups swapped in so far kept.
	Stop <-chan struct{}
	// DryRun makes the pass decide everything a real one would and write
	// nothing: the result counts what it would remove, and its Plan says
	// per key. The cleaner's state and checkpoint are left as they were.
	DryRun bool
}

// CleanPlan details what a dry-run pass would remove (CleanOptions.DryRun).
// Its lists are bounded: Keys holds the maxPlanKeys keys losing the most
// records, Tombstones the first maxPlanTombstones pending ones by offset;
// the counts cover everything.
type CleanPlan struct {
	// Keys are the keys that would lose records, most first (ties by key).
	Keys []KeyRemoval
	// KeysAffected counts the distinct keys that would lose records, up
	// to maxPlanCountedKeys (KeysCapped says the count stopped there).
	KeysAffected int
	KeysCapped   bool
	// AbortedRecords and KeylessRecords count the records that would go
	// for being in an aborted transaction or having no key.
	AbortedRecords, KeylessRecords int64
	// Tombstones are the tombstones the pass would keep, with when they
	// may go; TombstonesPending counts them all.
	Tombstones        []PendingTombstone
	TombstonesPending int64
}

// KeyRemoval is how many records of one key a pass would remove: the
// values its latest record supersedes.
type KeyRemoval struct {
	Key     []byte
	Records int64
}

// PendingTombstone is a tombstone kept by cleaning until its delete
// horizon: a pass after Expires removes it.
type PendingTombstone struct {
	Key     []byte
	Offset  int64
	Expires time.Time
}

// Bounds of a CleanPlan.
const (
	maxPlanKeys        = 100
	maxPlanCountedKeys = 10000
	maxPlanTombstones  = 100
)

// CleanResult says what one pass did.
type CleanResult struct {
	// Cleaned is false when the log had no dirty section to clean.
	Cleaned bool
	// FirstDirty and End bound the section whose keys the pass indexed;
	// End is the new cleaner checkpoint.
	FirstDirty, End                   int64
	SegmentsBefore, SegmentsAfter     int
	BytesRemoved, RecordsRemoved      int64
	TombstonesRemoved, MarkersRemoved int64
	// Uncleanable is the first offset no pass may clean yet (the active
	// segment's base, the last stable offset or min.compaction.lag.ms).
	Uncleanable int64
	// Plan is set by a dry run.
	Plan *CleanPlan
}

// ErrCleanStopped: CleanOptions.Stop ended a pass.
var ErrCleanStopped = errors.New("cleaning stopped")

// errCleanAborted: the log changed under a pass (retention, truncation,
// close) before its segments were swapped; the pass is dropped.
var errCleanAborted = errors.New("log changed while it was cleaned")

// cleaner is a Log's cleaner state, guarded by its own mutex (never held
// with Log.mu taken after it... see Clean for the order).
type cleanerInfo struct {
	sync.Mutex
	state CleanerState
	// truncations counts Truncate and Reset calls: a pass whose segments
	// were cut under it is dropped.
	truncations int64
	// running serialises passes over one log.
	running sync.Mutex
}

// cleanWriteChunk is how many bytes of cleaned batches are written at once.
const cleanWriteChunk = 256 << 10

// Suffixes of the files of a segment being swapped in by the cleaner.
const (
	cleanedSuffix = ".cleaned"
	swapSuffix    = ".swap"
	deletedSuffix = ".deleted"
)

// swapExts are a segment's file extensions in the order a swap renames
// them: the .log goes last, so that a .log.swap means every file is there.
var swapExts = []string{".index", ".timeindex", ".txnindex", ".log"}

// truncatedLocked notes a truncation to offset: the cleaner checkpoint
// comes down to it (Kafka's LogCleanerManager.maybeTruncateCheckpoint)
// and a running pass will not swap its segments in.
func (l *Log) truncatedLocked(offset int64) {
	l.cleaner.Lock()
	defer l.cleaner.Unlock()
	l.cleaner.truncations++
	l.cleaner.state.FirstDirtyOffset = min(l.cleaner.state.FirstDirtyOffset, offset)
}

// CleanerCheckpoint returns the first dirty offset to persist in
// cleaner-offset-checkpoint.
func (l *Log) CleanerCheckpoint() int64 {
	l.cleaner.Lock()
	defer l.cleaner.Unlock()
	return l.cleaner.state.FirstDirtyOffset
}

// CleanerState returns the cleaner's view of the log, the dirty section
// computed for now and upperBound (see CleanOptions).
func (l *Log) CleanerState(now time.Time, upperBound int64) CleanerState {
	l.mu.Lock()
	r := l.cleanableLocked(now, upperBound)
	l.mu.Unlock()
	l.cleaner.Lock()
	defer l.cleaner.Unlock()
	st := l.cleaner.state
	st.FirstDirtyOffset, st.FirstUncleanableOffset = r.firstDirty, r.uncleanable
	st.CleanBytes, st.DirtyBytes, st.DirtyRatio = r.cleanBytes, r.dirtyBytes, r.ratio()
	return st
}

// cleanable is the dirty section of a log at one moment.
type cleanable struct {
	firstDirty, uncleanable int64
	cleanBytes, dirtyBytes  int64
	// firstDirtyTs is the first batch timestamp of the dirty section's
	// first segment (-1 unknown), for max.compaction.lag.ms.
	firstDirtyTs int64
}

func (c cleanable) ratio() float64 {
	if c.cleanBytes+c.dirtyBytes == 0 {
		return 0
	}
	return float64(c.dirtyBytes) / float64(c.cleanBytes+c.dirtyBytes)
}

// mustClean reports whether max.compaction.lag.ms forces a pass.
func (c cleanable) mustClean(now time.Time, cfg Config) bool {
	return c.uncleanable > c.firstDirty && c.firstDirtyTs >= 0 && cfg.MaxCompactionLagMs > 0 &&
		now.UnixMilli()-c.firstDirtyTs > cfg.MaxCompactionLagMs
}

// cleanableLocked computes the dirty section [first dirty offset, first
// uncleanable offset), as Kafka's LogCleanerManager.cleanableOffsets: the
// first uncleanable offset is the lowest of the active segment's base,
// upperBound, and the base of the first dirty segment with a record newer
// than now - min.compaction.lag.ms.
func (l *Log) cleanableLocked(now time.Time, upperBound int64) cleanable {
	segs := l.segments()
	start, end := l.start.Load(), l.end.Load()
	l.cleaner.Lock()
	fd := l.cleaner.state.FirstDirtyOffset
	l.cleaner.Unlock()
	if fd < start || fd > end {
		fd = start
	}
	cfg := l.mu.cfg
	unc := min(segs[len(segs)-1].base, upperBound)
	c := cleanable{firstDirty: fd, firstDirtyTs: -1}
	for _, s := range segs[:len(segs)-1] {
		if s.next <= fd {
			continue
		}
		if c.firstDirtyTs < 0 {
			c.firstDirtyTs = s.rollBaseTs
		}
		if cfg.MinCompactionLagMs > 0 && s.maxTs > now.UnixMilli()-cfg.MinCompactionLagMs {
			unc = min(unc, s.base)
			break
		}
	}
	c.uncleanable = max(unc, fd)
	for _, s := range segs {
		switch {
		case s.base < fd:
			c.cleanBytes += s.size.Load()
		case s.base < c.uncleanable:
			c.dirtyBytes += s.size.Load()
		}
	}
	return c
}

// cleanPass is the state of one pass.
type cleanPass struct {
	l           *Log
	truncations int64 // the log's count when the pass began
	cfg         Config
	nowMs       int64
	m           *offsetMap
	dec         *record.Decompressor   // the log's
	end         int64                  // the map covers [firstDirty, end)
	aborted     map[int64][]AbortedTxn // by producer
	// lastData holds, per producer the log knows, the last offset of its
	// last data batch, or -1 with its epoch in epochs when it has none.
	lastData map[int64]int64
	epochs   map[int64]int16
	// uncleanable is the first uncleanable offset of the pass.
	uncleanable int64
	// txnSeen: producers whose transaction had a data batch read since
	// its last marker (Kafka's ongoing transactions of the pass).
	txnSeen map[int64]bool
	buf     []byte
	out     []byte
	res     CleanResult
	// plan is the dry run's tally, nil for a real pass: removed records
	// per key (at most maxPlanCountedKeys keys) and pending tombstones.
	plan   *CleanPlan
	perKey map[string]int64
	stop   <-chan struct{}
}

// Clean runs one cleaning pass over a compacted log (cleanup.policy
// includes compact), as Kafka's Cleaner.clean: it indexes the keys of the
// dirty section into a bounded offset map, then rewrites every segment
// from the log start to the end of what the map holds, keeping per key
// only its latest record, and swaps the rewritten segments in, group by
// group. The active segment is never touched. See "Compaction" in the
// package doc for the rules and the swap protocol.
func (l *Log) Clean(opts CleanOptions) (CleanResult, error) {
	l.cleaner.running.Lock()
	defer l.cleaner.running.Unlock()
	started := time.Now()
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return CleanResult{}, err
	}
	cfg := l.mu.cfg
	if !cfg.CleanupPolicy.Compact() {
		l.mu.Unlock()
		return CleanResult{}, nil
	}
	c := l.cleanableLocked(opts.Now, opts.UpperBound)
	segs := l.segments()
	pinned := pinCleanable(segs, c.uncleanable)
	p := l.newCleanPassLocked(opts, cfg, c.uncleanable)
	l.mu.Unlock()
	defer func() {
		for _, s := range pinned {
			s.release()
		}
	}()
	res := CleanResult{FirstDirty: c.firstDirty, End: c.firstDirty, SegmentsBefore: len(segs), SegmentsAfter: len(segs), Uncleanable: c.uncleanable, Plan: p.plan}
	if c.uncleanable <= c.firstDirty || len(pinned) == 0 {
		return res, nil
	}
	p.aborted = map[int64][]AbortedTxn{}
	for _, a := range l.AbortedTransactions(l.start.Load(), c.uncleanable) {
		p.aborted[a.ProducerID] = append(p.aborted[a.ProducerID], a)
	}
	p.m = newOffsetMap(opts.MapBytes, c.uncleanable-c.firstDirty)
	if err := p.buildMap(pinned, c.firstDirty, c.uncleanable); err != nil {
		return res, err
	}
	if p.end == c.firstDirty {
		return res, nil
	}
	var clean []*segment
	for _, s := range pinned {
		if s.base < p.end {
			clean = append(clean, s)
		}
	}
	p.res = res
	p.res.End = p.end
	groups := groupSegmentsBySize(clean, cfg)
	if p.plan != nil {
		return p.planGroups(groups, len(segs)-len(clean))
	}
	for _, g := range groups {
		if err := p.cleanGroup(g); err != nil {
			if errors.Is(err, errCleanAborted) {
				l.logger.Info("cleaning aborted", "reason", err)
				return p.res, nil
			}
			return p.res, err
		}
	}
	p.res.Cleaned = true
	p.res.SegmentsAfter = len(l.segments())
	l.recordCleanRun(p, opts.Now, time.Since(started))
	l.logger.Info("cleaned log", "first_dirty", c.firstDirty, "end", p.end, "segments_before", p.res.SegmentsBefore,
		"segments_after", p.res.SegmentsAfter, "bytes_removed", p.res.BytesRemoved, "records_removed", p.res.RecordsRemoved)
	return p.res, nil
}

// pinCleanable acquires the segments of segs, short of the active one,
// that lie below uncleanable, so that they stay open while a pass reads
// them, and returns those it acquired.
func pinCleanable(segs []*segment, uncleanable int64) []*segment {
	var pinned []*segment
	for _, s := range segs[:len(segs)-1] {
		if s.base >= uncleanable {
			break
		}
		if s.acquire() {
			pinned = append(pinned, s)
		}
	}
	return pinned
}

// newCleanPassLocked starts a pass under the log's configuration cfg: it
// notes the log's truncation count and, for every producer the log knows,
// the last offset of its last data batch and its epoch. A dry run
// (opts.DryRun) gets an empty plan.
func (l *Log) newCleanPassLocked(opts CleanOptions, cfg Config, uncleanable int64) *cleanPass {
	l.cleaner.Lock()
	truncations := l.cleaner.truncations
	l.cleaner.Unlock()
	p := &cleanPass{l: l, cfg: cfg, truncations: truncations, dec: &l.dec, nowMs: opts.Now.UnixMilli(), lastData: map[int64]int64{}, epochs: map[int64]int16{}, uncleanable: uncleanable, txnSeen: map[int64]bool{}, buf: l.mu.buf[:0:0]}
	if opts.DryRun {
		p.plan, p.perKey = &CleanPlan{}, map[string]int64{}
	}
	p.stop = opts.Stop
	for id, e := range l.mu.producers.byID {
		p.lastData[id], p.epochs[id] = -1, e.epoch
		if m, ok := e.last(); ok {
			p.lastData[id] = m.lastOffset
		}
	}
	return p
}

// planGroups runs the dry run over the segment groups and returns its
// result; kept counts the log's segments outside every group.
func (p *cleanPass) planGroups(groups [][]*segment, kept int) (CleanResult, error) {
	for _, g := range groups {
		if err := p.planGroup(g); err != nil {
			return p.res, err
		}
	}
	p.res.SegmentsAfter = kept + len(groups)
	p.finishPlan()
	return p.res, nil
}

// recordCleanRun adds the finished pass p, run at now for took, to the
// cleaner's state. The cleaner checkpoint moves to the pass's end unless
// the log was truncated during the pass.
func (l *Log) recordCleanRun(p *cleanPass, now time.Time, took time.Duration) {
	l.cleaner.Lock()
	defer l.cleaner.Unlock()
	st := &l.cleaner.state
	if l.cleaner.truncations == p.truncations {
		st.FirstDirtyOffset = p.end
	}
	st.LastRun, st.LastDuration = now, took
	st.LastBytesRemoved, st.LastRecordsRemoved = p.res.BytesRemoved, p.res.RecordsRemoved
	st.BytesRemoved += p.res.BytesRemoved
	st.RecordsRemoved += p.res.RecordsRemoved
	st.Runs++
}

// forEachBatch reads the batches of s in order, each whole into p.buf.
func (p *cleanPass) forEachBatch(s *segment, fn func(b record.Batch, pos int64) (bool, error)) error {
	limit := s.size.Load()
	var hdr [record.ScanHeaderSize]byte
	for pos := int64(0); pos+record.HeaderSize <= limit; {
		select {
		case <-p.stop:
			return ErrCleanStopped
		default:
		}
		h, err := s.batchAt(pos, &hdr)
		if err != nil {
			return err
		}
		size := h.Size()
		if int64(size) > limit-pos {
			return fmt.Errorf("%w: segment %d: batch at %d runs past the end", ErrCorrupt, s.base, pos)
		}
		if cap(p.buf) < size {
			p.buf = make([]byte, size)
		}
		b := p.buf[:size]
		if err := readFull(s.log, b, pos); err != nil {
			return fmt.Errorf("read segment %d at %d: %w", s.base, pos, err)
		}
		more, err := fn(record.Batch(b), pos)
		if err != nil || !more {
			return err
		}
		pos += int64(size)
	}
	return nil
}

// buildMap indexes the keys of the whole batches in [from, to), stopping
// early when the map is full; p.end is where it stopped.
func (p *cleanPass) buildMap(segs []*segment, from, to int64) error {
	p.end = from
	full, stop := false, false
	for _, s := range segs {
		if s.next <= from {
			continue
		}
		err := p.forEachBatch(s, func(b record.Batch, _ int64) (bool, error) {
			if b.LastOffset() < from {
				return true, nil
			}
			if b.LastOffset() >= to {
				stop = true
				return false, nil
			}
			if b.Attributes().Control() || p.isAborted(b) {
				p.end = b.LastOffset() + 1
				return true, nil
			}
			if !p.m.room(int(b.RecordCount())) {
				full, stop = true, true
				return false, nil
			}
			it, err := b.Records(p.dec)
			if err != nil {
				return false, fmt.Errorf("segment %d, batch %d: %w", s.base, b.BaseOffset(), err)
			}
			for it.Next() {
				if r := it.Record(); r.Key != nil {
					p.m.put(r.Key, b.BaseOffset()+int64(r.OffsetDelta))
				}
			}
			if err := it.Err(); err != nil {
				return false, fmt.Errorf("segment %d, batch %d: %w", s.base, b.BaseOffset(), err)
			}
			p.end = b.LastOffset() + 1
			return true, nil
		})
		if err != nil {
			return err
		}
		if stop {
			break
		}
	}
	if full && p.end == from {
		return fmt.Errorf("log cleaner: the offset map (log.cleaner.dedupe.buffer.size) cannot hold one batch at offset %d", from)
	}
	return nil
}

// isAborted reports whether b is a data batch of an aborted transaction.
func (p *cleanPass) isAborted(b record.Batch) bool {
	if !b.Attributes().Transactional() || b.Attributes().Control() {
		return false
	}
	for _, a := range p.aborted[b.ProducerID()] {
		if a.FirstOffset <= b.BaseOffset() && b.BaseOffset() < a.LastOffset {
			return true
		}
	}
	return false
}

// groupSegmentsBySize splits segs into runs to be cleaned into one segment
// each, as Kafka's groupSegmentsBySize: a run stays within segment.bytes
// of log, segment.index.bytes of each index and relative offsets an index
// entry can hold.
func groupSegmentsBySize(segs []*segment, cfg Config) [][]*segment {
	var groups [][]*segment
	for len(segs) > 0 {
		g := segs[:1]
		size := segs[0].size.Load()
		segs[0].imu.RLock()
		offs, times := len(segs[0].imu.offsets), len(segs[0].imu.times)
		segs[0].imu.RUnlock()
		for len(g) < len(segs) {
			n := segs[len(g)]
			n.imu.RLock()
			no, nt := len(n.imu.offsets), len(n.imu.times)
			n.imu.RUnlock()
			if size+n.size.Load() > cfg.SegmentBytes ||
				int64(offs+no)*offsetEntrySize > int64(cfg.SegmentIndexBytes) ||
				int64(times+nt)*timeEntrySize > int64(cfg.SegmentIndexBytes) ||
				n.next-1-g[0].base > maxRelOffset {
				break
			}
			size += n.size.Load()
			offs, times = offs+no, times+nt
			g = segs[:len(g)+1]
		}
		groups = append(groups, g)
		segs = segs[len(g):]
	}
	return groups
}

// cleanGroup writes the cleaned version of the segments g as one new
// segment and swaps it in.
func (p *cleanPass) cleanGroup(g []*segment) error {
	l := p.l
	ns, err := createSegmentFiles(l.fs, l.dir, g[0].base, g[0].created, cleanedSuffix)
	if err != nil {
		return err
	}
	w := &cleanedWriter{ns: ns, indexInterval: int64(p.cfg.IndexIntervalBytes), keptMarkers: map[int64]bool{}}
	var oldBytes int64
	for _, s := range g {
		oldBytes += s.size.Load()
		err := p.forEachBatch(s, func(b record.Batch, _ int64) (bool, error) {
			out, err := p.filter(b)
			if err != nil {
				return false, fmt.Errorf("segment %d, batch %d: %w", s.base, b.BaseOffset(), err)
			}
			if out != nil {
				return true, w.write(out)
			}
			return true, nil
		})
		if err != nil {
			l.discardCleaned(ns)
			return err
		}
	}
	if err := w.flush(); err != nil {
		l.discardCleaned(ns)
		return err
	}
	ns.size.Store(w.pos)
	ns.imu.Lock()
	ns.maybeAppendTimeLocked()
	keepAbortedTxnsLocked(ns, g, w.keptMarkers)
	ns.imu.Unlock()
	if p.out, err = ns.flushLocked(p.out); err != nil {
		l.discardCleaned(ns)
		return err
	}
	if err := l.swapIn(g, ns, p.truncations); err != nil {
		return err
	}
	p.res.BytesRemoved += oldBytes - w.pos
	return nil
}

// cleanedWriter writes the batches a pass keeps to the cleaned segment ns,
// in chunks of up to cleanWriteChunk bytes, and indexes them. ns is not
// yet part of the log, so it takes none of its locks.
type cleanedWriter struct {
	ns            *segment
	indexInterval int64
	pos           int64 // the segment's size with the chunk written
	chunk         []byte
	// keptMarkers holds the base offsets of the control batches written.
	keptMarkers map[int64]bool
}

// write appends b to the chunk and indexes it, and writes the chunk out
// once it is full.
func (w *cleanedWriter) write(b record.Batch) error {
	w.chunk = append(w.chunk, b...)
	info := batchInfo{size: b.Size(), records: b.LastOffsetDelta() + 1, maxTimestamp: b.MaxTimestamp(), maxTsDelta: b.LastOffsetDelta()}
	if b.Attributes().TimestampType() == record.LogAppendTime {
		info.maxTsDelta = 0
	}
	w.ns.appendIndexesLocked(w.pos, &info, b.BaseOffset(), w.indexInterval)
	w.pos += int64(b.Size())
	if b.Attributes().Control() {
		w.keptMarkers[b.BaseOffset()] = true
	}
	if len(w.chunk) >= cleanWriteChunk {
		return w.flush()
	}
	return nil
}

// flush writes the chunk to the segment's log file.
func (w *cleanedWriter) flush() error {
	if len(w.chunk) == 0 {
		return nil
	}
	if _, err := w.ns.log.Write(w.chunk); err != nil {
		return fmt.Errorf("write cleaned segment %d: %w", w.ns.base, err)
	}
	w.chunk = w.chunk[:0]
	return nil
}

// keepAbortedTxnsLocked gives the cleaned segment ns the aborted
// transactions of the segments g whose markers it kept (keptMarkers, by
// offset). ns.imu is held.
func keepAbortedTxnsLocked(ns *segment, g []*segment, keptMarkers map[int64]bool) {
	for _, s := range g {
		s.imu.RLock()
		for _, a := range s.imu.aborted {
			if keptMarkers[a.LastOffset] {
				ns.imu.aborted = append(ns.imu.aborted, a)
			}
		}
		s.imu.RUnlock()
	}
}

// planGroup is cleanGroup for a dry run: each batch is filtered as
// cleaning would, and nothing is written.
func (p *cleanPass) planGroup(g []*segment) error {
	for _, s := range g {
		err := p.forEachBatch(s, func(b record.Batch, _ int64) (bool, error) {
			size := int64(b.Size())
			out, err := p.filter(b)
			if err != nil {
				return false, fmt.Errorf("segment %d, batch %d: %w", s.base, b.BaseOffset(), err)
			}
			p.res.BytesRemoved += size - int64(len(out))
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// noteRemoved counts, in a dry run, a record of b that cleaning removes.
func (p *cleanPass) noteRemoved(b record.Batch, r *record.Record, aborted bool) {
	switch {
	case p.plan == nil:
	case aborted:
		p.plan.AbortedRecords++
	case r.Key == nil:
		p.plan.KeylessRecords++
	default:
		if _, ok := p.perKey[string(r.Key)]; ok || len(p.perKey) < maxPlanCountedKeys {
			p.perKey[string(r.Key)]++
		} else {
			p.plan.KeysCapped = true
		}
	}
}

// noteTombstone records, in a dry run, a tombstone of b that cleaning
// keeps: it may go after the batch's delete horizon, or, when the batch
// has none yet, delete.retention.ms after this pass.
func (p *cleanPass) noteTombstone(b record.Batch, r *record.Record) {
	if p.plan == nil {
		return
	}
	p.plan.TombstonesPending++
	if len(p.plan.Tombstones) == maxPlanTombstones {
		return
	}
	horizon := p.nowMs + min(p.cfg.DeleteRetentionMs, math.MaxInt64-max(p.nowMs, 0))
	if b.Attributes().DeleteHorizon() {
		horizon = b.BaseTimestamp()
	}
	p.plan.Tombstones = append(p.plan.Tombstones, PendingTombstone{
		Key: bytes.Clone(r.Key), Offset: b.BaseOffset() + int64(r.OffsetDelta), Expires: time.UnixMilli(horizon),
	})
}

// finishPlan orders the dry run's per-key counts into its plan.
func (p *cleanPass) finishPlan() {
	keys := make([]KeyRemoval, 0, len(p.perKey))
	for k, n := range p.perKey {
		keys = append(keys, KeyRemoval{Key: []byte(k), Records: n})
	}
	slices.SortFunc(keys, func(a, b KeyRemoval) int {
		if c := cmp.Compare(b.Records, a.Records); c != 0 {
			return c
		}
		return bytes.Compare(a.Key, b.Key)
	})
	p.plan.KeysAffected = len(keys)
	p.plan.Keys = keys[:min(len(keys), maxPlanKeys)]
}

// discardCleaned closes and removes the files of a cleaned segment not
// swapped in.
func (l *Log) discardCleaned(ns *segment) {
	ns.closeFiles()
	for _, ext := range segmentExts {
		_ = l.fs.Remove(ns.path(ext + cleanedSuffix))
	}
}

// filter returns the batch b as cleaning leaves it: b itself, a rebuilt
// batch with fewer records (or none: the last batch of a producer keeps
// its header), or nil when it goes. The result may alias p.buf or p.out.
func (p *cleanPass) filter(b record.Batch) (record.Batch, error) {
	attrs := b.Attributes()
	horizonPassed := attrs.DeleteHorizon() && b.BaseTimestamp() <= p.nowMs
	lastOfProducer := p.retainEmpty(b)
	if b.RecordCount() == 0 {
		// Emptied by an earlier pass: kept only while it is its
		// producer's last batch.
		if lastOfProducer {
			return b, nil
		}
		return nil, nil
	}
	if attrs.Control() {
		// Kafka's CleanedTransactionMetadata.onControlBatchRead: a marker
		// may go once no batch of its transaction is left, and then only
		// after its delete horizon, which the first pass that finds it so
		// sets.
		_, isMarker, err := b.TxnMarker()
		empty := err == nil && isMarker && !p.txnSeen[b.ProducerID()]
		delete(p.txnSeen, b.ProducerID())
		switch {
		case !empty:
			return b, nil
		case horizonPassed:
			p.res.MarkersRemoved++
			p.res.RecordsRemoved += int64(b.RecordCount())
			if lastOfProducer {
				return p.rebuild(b, nil, false)
			}
			return nil, nil
		case !attrs.DeleteHorizon():
			return p.rebuild(b, nil, true)
		}
		return b, nil
	}
	if attrs.Transactional() {
		p.txnSeen[b.ProducerID()] = true
	}
	if p.isAborted(b) {
		return p.rebuild(b, func(*record.Record) bool { return false }, false)
	}
	return p.rebuild(b, func(r *record.Record) bool {
		if r.Key == nil {
			return false // Kafka drops keyless records of a compacted log
		}
		if latest := p.m.get(r.Key); latest > b.BaseOffset()+int64(r.OffsetDelta) {
			return false
		}
		if r.Value == nil && horizonPassed {
			p.res.TombstonesRemoved++
			return false
		}
		return true
	}, false)
}

// retainEmpty reports whether b stays, emptied if need be, as Kafka's
// cleaner keeps it (BatchRetention.RETAIN_EMPTY): the batch holding its
// producer's last data offset (its last sequence), a producer's marker of
// its current epoch when it has no data batch (for fencing), and the last
// batch before the first uncleanable offset (the log keeps its last
// offset).
func (p *cleanPass) retainEmpty(b record.Batch) bool {
	if b.LastOffset()+1 == p.uncleanable {
		return true
	}
	if b.ProducerID() < 0 {
		return false
	}
	last, ok := p.lastData[b.ProducerID()]
	switch {
	case !ok:
		return false
	case last >= 0:
		return b.LastOffset() == last
	}
	return b.Attributes().Control() && b.ProducerEpoch() == p.epochs[b.ProducerID()]
}

// rebuild filters the records of b by keep (nil keeps every record). A
// batch that keeps all its records and needs no delete horizon is returned
// as it is. A kept tombstone, or a marker (keep nil, setHorizon) gives the
// batch a delete horizon of now + delete.retention.ms, as KIP-534 does.
// A batch left without records is dropped unless it is its producer's
// last, which keeps its header (Kafka's BatchRetention.RETAIN_EMPTY).
func (p *cleanPass) rebuild(b record.Batch, keep func(*record.Record) bool, setHorizon bool) (record.Batch, error) {
	aborted := p.plan != nil && p.isAborted(b)
	it, err := b.Records(p.dec)
	if err != nil {
		return nil, err
	}
	var kept []record.Record
	dropped := false
	tombstones := false
	for it.Next() {
		r := it.Record()
		if b.Attributes().Control() {
			if keep == nil && !setHorizon {
				dropped = true
				continue
			}
			kept = append(kept, *r)
			continue
		}
		if keep(r) {
			kept = append(kept, *r)
			tombstones = tombstones || r.Value == nil
			if r.Value == nil {
				p.noteTombstone(b, r)
			}
		} else {
			dropped = true
			p.noteRemoved(b, r, aborted)
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if !b.Attributes().Control() {
		p.res.RecordsRemoved += int64(int(b.RecordCount()) - len(kept))
		setHorizon = tombstones && !b.Attributes().DeleteHorizon()
	}
	lastOfProducer := p.retainEmpty(b)
	switch {
	case len(kept) == 0 && !lastOfProducer:
		return nil, nil
	case !dropped && !setHorizon:
		return b, nil
	}
	nb := b.Rewrite()
	base := b.BaseTimestamp()
	if setHorizon {
		nb.DeleteHorizon = true
		nb.BaseTimestamp = p.nowMs + min(p.cfg.DeleteRetentionMs, math.MaxInt64-max(p.nowMs, 0))
	}
	if len(kept) == 0 {
		// An empty batch carries its max timestamp in both fields, and
		// no codec, as Kafka's DefaultRecordBatch.writeEmptyHeader
		// writes it: a bare header (a compressed empty body, e.g. a
		// snappy frame of nothing, is data clients fail to decompress).
		nb.BaseTimestamp, nb.DeleteHorizon = b.MaxTimestamp(), false
		nb.Compression = record.None
	}
	for i := range kept {
		r := kept[i]
		r.TimestampDelta = base + r.TimestampDelta - nb.BaseTimestamp
		nb.Append(r)
	}
	out, err := nb.AppendTo(p.out[:0])
	if err != nil {
		return nil, err
	}
	p.out = out
	return record.Batch(out), nil
}

// swapIn replaces the segments g by the cleaned segment ns, Kafka's way:
// ns's files "<base>.*.cleaned" are renamed to ".swap", the old segments'
// files to ".deleted", then ".swap" to the final names; the directory is
// fsynced after each step, and recovery completes a swap whose .log.swap
// it finds (see completeSwaps). An I/O error once the first rename is done
// fails the log (sticky): reopening finishes or undoes the swap.
func (l *Log) swapIn(g []*segment, ns *segment, truncations int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	segs, i, err := l.swapSlotLocked(g, truncations)
	if err != nil {
		l.discardCleaned(ns)
		return err
	}
	if err := l.renameSwapLocked(g, ns); err != nil {
		return err
	}
	next := append(append(append([]*segment(nil), segs[:i]...), ns), segs[i+len(g):]...)
	l.publish(next)
	for _, s := range g {
		for _, ext := range swapExts {
			if err := l.fs.Remove(s.path(ext + deletedSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return l.failLocked("remove", fmt.Errorf("remove cleaned-away segment %d: %w", s.base, err))
			}
		}
		s.release()
	}
	return l.syncSwapLocked(ns)
}

// swapSlotLocked checks that the segments g can still be swapped out: the
// log is writable, was not truncated since the pass began (its count was
// truncations), and g are still consecutive segments of the log, short of
// the active one. It returns the log's segments and the index of g[0] in
// them, or an error wrapping errCleanAborted.
func (l *Log) swapSlotLocked(g []*segment, truncations int64) ([]*segment, int, error) {
	if err := l.writableLocked(); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errCleanAborted, err)
	}
	l.cleaner.Lock()
	truncated := l.cleaner.truncations != truncations
	l.cleaner.Unlock()
	segs := l.segments()
	i := segmentFor(segs, g[0].base)
	if truncated || i+len(g) >= len(segs) {
		return nil, 0, errCleanAborted
	}
	for k, s := range g {
		if segs[i+k] != s {
			return nil, 0, errCleanAborted
		}
	}
	return segs, i, nil
}

// renameSwapLocked does the renames of a swap of ns for the segments g,
// syncing the directory after each step: ns's ".cleaned" files to
// ".swap", g's files to ".deleted", ns's ".swap" files to their final
// names. An error fails the log.
func (l *Log) renameSwapLocked(g []*segment, ns *segment) error {
	for _, ext := range swapExts {
		if err := l.swapRenameLocked(ns, ns.path(ext+cleanedSuffix), ns.path(ext+swapSuffix)); err != nil {
			return err
		}
	}
	if err := l.syncSwapLocked(ns); err != nil {
		return err
	}
	for _, s := range g {
		for _, ext := range swapExts {
			if err := l.swapRenameLocked(ns, s.path(ext), s.path(ext+deletedSuffix)); err != nil {
				return err
			}
		}
	}
	if err := l.syncSwapLocked(ns); err != nil {
		return err
	}
	for _, ext := range swapExts {
		if err := l.swapRenameLocked(ns, ns.path(ext+swapSuffix), ns.path(ext)); err != nil {
			return err
		}
	}
	return l.syncSwapLocked(ns)
}

// swapRenameLocked renames from to to for the swap of ns; an error fails
// the log.
func (l *Log) swapRenameLocked(ns *segment, from, to string) error {
	if err := l.fs.Rename(from, to); err != nil {
		return l.failLocked("rename", fmt.Errorf("swap cleaned segment %d: %w", ns.base, err))
	}
	return nil
}

// syncSwapLocked fsyncs the log directory for the swap of ns; an error
// fails the log.
func (l *Log) syncSwapLocked(ns *segment) error {
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.failLocked("sync", fmt.Errorf("swap cleaned segment %d: %w", ns.base, err))
	}
	return nil
}
