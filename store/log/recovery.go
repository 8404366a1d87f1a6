package log

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// load reads the directory, recovers segments and the epoch cache. Open
// calls it before the log is shared: it does not take l.mu, and the
// ...Locked steps it calls use the fields l.mu guards as if it were held.
func (l *Log) load(opts Options) error {
	rescan, err := l.completeSwaps()
	if err != nil {
		return err
	}
	bases, err := l.sweepDir()
	if err != nil {
		return err
	}
	// The epoch cache is read first: recovery extends it from the leader
	// epochs of the batches it re-scans.
	epochs, err := readEpochs(l.fs, path.Join(l.dir, LeaderEpochCheckpointFile))
	if err != nil {
		l.logger.Warn("leader epoch checkpoint unreadable, rebuilding from recovered batches", "err", err)
		epochs, l.epochsRebuilt = nil, true
	}
	l.mu.epochs = epochs
	now := l.now()
	l.mu.buf = make([]byte, 0, 64<<10)
	segs, err := l.recoverSegmentsLocked(bases, rescan, opts.RecoveryPoint, now)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		s, err := l.createFirstSegment(max(opts.LogStartOffset, 0), now)
		if err != nil {
			return err
		}
		segs = append(segs, s)
	}
	return l.publishRecoveredLocked(segs, opts.LogStartOffset, now)
}

// sweepDir lists the log directory, removes what an interrupted write,
// delete, clean or swap left behind (".tmp", ".deleted", ".cleaned" and
// ".swap" files) and index files without their segment, and returns the
// base offsets of the segment files in directory order.
func (l *Log) sweepDir() ([]int64, error) {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return nil, err
	}
	bases := []int64{}
	exts := map[string]bool{}
	for _, n := range names {
		exts[n] = true
	}
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".deleted") || strings.HasSuffix(n, ".cleaned") || strings.HasSuffix(n, ".swap"):
			if err := l.fs.Remove(path.Join(l.dir, n)); err != nil {
				return nil, fmt.Errorf("remove leftover %s: %w", n, err)
			}
		case strings.HasSuffix(n, ".log"):
			b, ok := parseSegmentName(strings.TrimSuffix(n, ".log"))
			if ok {
				bases = append(bases, b)
			}
		case strings.HasSuffix(n, ".index") || strings.HasSuffix(n, ".timeindex") || strings.HasSuffix(n, ".txnindex"):
			stem := n[:strings.LastIndexByte(n, '.')]
			if _, ok := parseSegmentName(stem); ok && !exts[stem+".log"] {
				if err := l.fs.Remove(path.Join(l.dir, n)); err != nil {
					return nil, fmt.Errorf("remove orphan index %s: %w", n, err)
				}
			}
		}
	}
	return bases, nil
}

// recoverSegmentsLocked opens and recovers the segments based at bases in
// order and returns those kept. A segment overlapping its predecessor is
// dropped with all later ones; after a segment whose tail was cut off, the
// later ones are removed too. Segments that may hold offsets at or above
// recoveryPoint, and those in rescan, are re-scanned. On error every
// segment it opened is closed.
func (l *Log) recoverSegmentsLocked(bases []int64, rescan map[int64]bool, recoveryPoint int64, now time.Time) ([]*segment, error) {
	cfg := l.mu.cfg
	var segs []*segment
	fail := func(err error) ([]*segment, error) {
		for _, o := range segs {
			o.closeFiles()
		}
		return nil, err
	}
	for i, base := range bases {
		s, err := l.openSegment(base, now)
		if err != nil {
			return fail(err)
		}
		if n := len(segs); n > 0 && base < segs[n-1].next {
			// Overlapping segments: keep the older data, drop the rest.
			s.closeFiles()
			l.logger.Warn("segment overlaps its predecessor, dropping it and later ones", "segment", base, "previous_end", segs[n-1].next)
			if err := l.removeSegmentFiles(bases[i:]); err != nil {
				return fail(err)
			}
			break
		}
		segs = append(segs, s)
		// A segment may hold offsets >= the recovery point unless the next
		// segment starts at or below it.
		needsScan := i == len(bases)-1 || bases[i+1] > recoveryPoint || rescan[base]
		truncated, err := l.recoverSegment(s, needsScan, cfg)
		if err != nil {
			return fail(err)
		}
		if truncated {
			// Everything after a damaged segment is unreachable.
			if err := l.removeSegmentFiles(bases[i+1:]); err != nil {
				return fail(err)
			}
			break
		}
	}
	return segs, nil
}

// createFirstSegment creates the empty segment based at base of a log
// that has none and syncs the directory.
func (l *Log) createFirstSegment(base int64, now time.Time) (*segment, error) {
	s, err := createSegment(l.fs, l.dir, base, now)
	if err != nil {
		return nil, err
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("sync dir: %w", err)
	}
	return s, nil
}

// publishRecoveredLocked makes the recovered segments the log's: it sets
// the end, the start (logStartOffset, raised to the first segment's base
// and capped at the end) and the recovery point, trims the epoch cache to
// [start, end] (writing it when it changed or was rebuilt) and loads the
// transaction indexes and producer state.
func (l *Log) publishRecoveredLocked(segs []*segment, logStartOffset int64, now time.Time) error {
	l.publish(segs)
	end := segs[len(segs)-1].next
	l.end.Store(end)
	start := max(logStartOffset, segs[0].base)
	if start > end {
		start = end
	}
	l.start.Store(start)
	// Every segment is now either below the recovery point it was given
	// or was re-scanned and fsynced, so all of it is durable.
	l.mu.recoveryPoint = end
	l.mu.lastFlush = now

	changed := l.truncateEpochsFromEndLocked(end)
	changed = l.truncateEpochsFromStartLocked(start) || changed
	if changed || l.epochsRebuilt {
		if err := l.writeEpochsLocked(); err != nil {
			return err
		}
	}
	l.rmu.epochs = append([]EpochEntry(nil), l.mu.epochs...)
	if err := l.loadTxnIndexesLocked(); err != nil {
		return err
	}
	return l.loadProducerStateLocked(now, true)
}

// completeSwaps finishes the cleaner's swaps a crash interrupted (see
// Log.swapIn): for every "<base>.log.swap" the segments it replaces (those
// based in [base, its next offset)) are deleted and its files renamed to
// their final names. Files of a swap without its .log.swap (it was not
// complete) and every ".cleaned" and ".deleted" file are removed later by
// load. It returns the bases of the segments swapped in, which recovery
// re-scans.
func (l *Log) completeSwaps() (map[int64]bool, error) {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return nil, err
	}
	var swaps, bases []int64
	for _, n := range names {
		if stem, ok := strings.CutSuffix(n, ".log"+swapSuffix); ok {
			if b, ok := parseSegmentName(stem); ok {
				swaps = append(swaps, b)
			}
		} else if stem, ok := strings.CutSuffix(n, ".log"); ok {
			if b, ok := parseSegmentName(stem); ok {
				bases = append(bases, b)
			}
		}
	}
	if len(swaps) == 0 {
		return nil, nil
	}
	done := map[int64]bool{}
	for _, sb := range swaps {
		next, err := l.swapNextOffset(sb)
		if err != nil {
			return nil, err
		}
		var replaced []int64
		for _, b := range bases {
			if b >= sb && b < max(next, sb+1) {
				replaced = append(replaced, b)
			}
		}
		l.logger.Warn("completing an interrupted cleaner swap", "segment", sb, "replaces", replaced)
		if err := l.removeSegmentFiles(replaced); err != nil {
			return nil, err
		}
		for _, ext := range swapExts {
			from := path.Join(l.dir, segmentName(sb, ext+swapSuffix))
			if err := l.fs.Rename(from, path.Join(l.dir, segmentName(sb, ext))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("complete swap of segment %d: %w", sb, err)
			}
		}
		done[sb] = true
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return nil, fmt.Errorf("sync dir: %w", err)
	}
	return done, nil
}

// swapNextOffset walks the batch headers of "<base>.log.swap" and returns
// the offset after its last whole batch (base when it has none).
func (l *Log) swapNextOffset(base int64) (int64, error) {
	name := path.Join(l.dir, segmentName(base, ".log"+swapSuffix))
	f, err := l.fs.Open(name)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", name, err)
	}
	next := base
	var hdr [record.ScanHeaderSize]byte
	for pos := int64(0); pos+record.HeaderSize <= size; {
		if err := readFull(f, hdr[:], pos); err != nil {
			return 0, fmt.Errorf("read %s at %d: %w", name, pos, err)
		}
		h, err := record.ParseHeader(hdr[:])
		if err != nil || int64(h.Size()) > size-pos {
			break
		}
		next = h.LastOffset() + 1
		pos += int64(h.Size())
	}
	return next, nil
}

// removeSegmentFiles deletes the files of segments that are not open.
func (l *Log) removeSegmentFiles(bases []int64) error {
	if len(bases) == 0 {
		return nil
	}
	for _, b := range bases {
		for _, ext := range segmentExts {
			if err := l.fs.Remove(path.Join(l.dir, segmentName(b, ext))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove segment %d: %w", b, err)
			}
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	return nil
}

func parseSegmentName(stem string) (int64, bool) {
	if len(stem) != 20 {
		return 0, false
	}
	b, err := strconv.ParseInt(stem, 10, 64)
	if err != nil || b < 0 {
		return 0, false
	}
	return b, true
}

func (l *Log) openSegment(base int64, now time.Time) (*segment, error) {
	s := newSegment(base, l.dir, now)
	var err error
	if s.log, err = l.fs.Open(s.path(".log")); err != nil {
		return nil, fmt.Errorf("open segment %d: %w", base, err)
	}
	if st, err := l.fs.Stat(s.path(".log")); err == nil && !st.ModTime().IsZero() {
		s.created = st.ModTime()
	}
	for _, x := range []struct {
		ext string
		f   *vfs.File
	}{{".index", &s.idx}, {".timeindex", &s.tidx}, {".txnindex", &s.txn}} {
		f, err := l.fs.Open(s.path(x.ext))
		if errors.Is(err, fs.ErrNotExist) {
			f, err = l.fs.Create(s.path(x.ext))
			if x.ext == ".txnindex" {
				s.txnStale = true
			}
		}
		if err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("open segment %d%s: %w", base, x.ext, err)
		}
		*x.f = f
	}
	return s, nil
}

// recoverSegment establishes a segment's state. Segments needing a scan are
// re-read batch by batch with CRC checks; a torn or corrupt tail is cut off
// and the indexes are rebuilt. Other segments trust their index files when
// they are consistent (else they are rebuilt too) and only walk headers after
// the last index entry. It reports whether the segment was truncated.
func (l *Log) recoverSegment(s *segment, verify bool, cfg Config) (bool, error) {
	size, err := s.log.Size()
	if err != nil {
		return false, fmt.Errorf("size of segment %d: %w", s.base, err)
	}
	if !verify {
		ok, err := l.loadIndexes(s, size, cfg)
		if err != nil {
			return false, err
		}
		if ok {
			return false, nil
		}
		l.logger.Warn("index inconsistent, rebuilding", "segment", s.base)
	}
	// The transaction index is rebuilt from producer state once every
	// segment is recovered.
	s.txnStale = true
	s.imu.Lock()
	s.imu.aborted = nil
	s.imu.Unlock()
	var good int64
	good, l.mu.buf, err = s.scan(size, true, int64(cfg.IndexIntervalBytes), l.mu.buf, func(epoch int32, base int64) {
		es := l.mu.epochs
		if epoch >= 0 && (len(es) == 0 || epoch > es[len(es)-1].Epoch) {
			l.mu.epochs = append(es, EpochEntry{Epoch: epoch, StartOffset: base})
			l.epochsRebuilt = true
		}
	})
	truncated := false
	if err != nil {
		if !errors.Is(err, errTornTail) {
			return false, err
		}
		l.logger.Warn("truncating damaged segment tail", "segment", s.base, "position", good, "size", size, "reason", err)
		if err := s.log.Truncate(good); err != nil {
			return false, fmt.Errorf("truncate segment %d: %w", s.base, err)
		}
		truncated = true
	}
	s.size.Store(good)
	// Like a cleanly closed segment, end the time index with the largest
	// timestamp.
	s.imu.Lock()
	s.maybeAppendTimeLocked()
	s.imu.Unlock()
	if l.mu.buf, err = s.rewriteIndexesLocked(l.mu.buf); err != nil {
		return false, err
	}
	if l.mu.buf, err = s.flushLocked(l.mu.buf); err != nil {
		return false, err
	}
	return truncated, nil
}

// loadIndexes reads a segment's index files and walks the batch headers
// after the last offset index entry to find the segment's end. It returns
// false when the files do not match the log.
func (l *Log) loadIndexes(s *segment, size int64, cfg Config) (bool, error) {
	ib, err := readAll(s.idx)
	if err != nil {
		return false, fmt.Errorf("read index of segment %d: %w", s.base, err)
	}
	tb, err := readAll(s.tidx)
	if err != nil {
		return false, fmt.Errorf("read time index of segment %d: %w", s.base, err)
	}
	offs, err1 := parseOffsetIndex(ib, size)
	times, err2 := parseTimeIndex(tb)
	if err1 != nil || err2 != nil {
		return false, nil
	}
	if len(offs)*offsetEntrySize != len(ib) || len(times)*timeEntrySize != len(tb) {
		return false, nil // preallocated files: rewrite compactly
	}
	// Walk from the last indexed batch to the end.
	pos := int64(0)
	if n := len(offs); n > 0 {
		pos = int64(offs[n-1].pos)
	}
	var hdr [record.ScanHeaderSize]byte
	s.next = s.base
	first := true
	for pos < size {
		if size-pos < record.HeaderSize {
			return false, nil
		}
		h, err := s.batchAt(pos, &hdr)
		if err != nil || int64(h.Size()) > size-pos {
			return false, nil
		}
		if first && len(offs) > 0 && h.LastOffset() != s.base+int64(offs[len(offs)-1].rel) {
			return false, nil
		}
		if first && pos == 0 {
			s.rollBaseTs = h.MaxTimestamp()
		}
		first = false
		if h.MaxTimestamp() > s.maxTs {
			s.maxTs, s.maxTsOffset, s.maxTsLast = h.MaxTimestamp(), h.LastOffset(), h.LastOffset()
		}
		s.next = h.LastOffset() + 1
		s.bytesSinceIndex += int64(h.Size())
		pos += int64(h.Size())
	}
	if s.rollBaseTs < 0 && size > 0 {
		h, err := s.batchAt(0, &hdr)
		if err != nil {
			return false, nil
		}
		s.rollBaseTs = h.MaxTimestamp()
	}
	if n := len(times); n > 0 && times[n-1].ts >= s.maxTs {
		s.maxTs, s.maxTsOffset = times[n-1].ts, s.base+int64(times[n-1].rel)
		s.maxTsLast = s.maxTsOffset
	}
	if n := len(times); n > 0 && s.base+int64(times[n-1].rel) >= s.next {
		return false, nil
	}
	s.imu.Lock()
	s.imu.offsets, s.imu.times = offs, times
	s.imu.Unlock()
	s.offsetsOnDisk, s.timesOnDisk = len(offs), len(times)
	s.size.Store(size)
	return true, nil
}

func readAll(f vfs.File) ([]byte, error) {
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("%w: index of %d bytes", ErrCorrupt, n)
	}
	b := make([]byte, n)
	if err := readFull(f, b, 0); err != nil {
		return nil, err
	}
	return b, nil
}
