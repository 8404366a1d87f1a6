package log

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// segment is one .log file with its .index and .timeindex.
//
// Writer-owned fields (next, bytesSinceIndex, written counts, ...) are only
// touched under Log.mu. Readers see size (atomic) and the index slices
// (under imu, held only for slice appends and lookups, never during I/O).
type segment struct {
	base int64
	dir  string
	log  vfs.File
	idx  vfs.File
	tidx vfs.File
	txn  vfs.File // .txnindex

	size atomic.Int64 // bytes of .log visible to readers
	refs atomic.Int32 // 1 while part of the log, +1 per reader

	imu struct {
		sync.RWMutex
		offsets []offsetEntry
		times   []timeEntry
		aborted []AbortedTxn // the .txnindex entries
	}

	// Writer state (Log.mu).
	next            int64 // offset after the last batch; base when empty
	maxTs           int64 // largest batch max timestamp, -1 when none
	maxTsOffset     int64 // offset of the record holding maxTs
	maxTsLast       int64 // last offset of its batch: what time index entries record
	rollBaseTs      int64 // max timestamp of the first batch, -1 when none
	created         time.Time
	bytesSinceIndex int64
	offsetsOnDisk   int // entries already written to .index
	timesOnDisk     int // entries already written to .timeindex
	abortedOnDisk   int // entries already written to .txnindex
	txnUnsynced     bool
	txnStale        bool // .txnindex must be rebuilt by recovery
	dirty           bool
}

func segmentName(base int64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }

func (s *segment) path(ext string) string { return path.Join(s.dir, segmentName(s.base, ext)) }

func newSegment(base int64, dir string, created time.Time) *segment {
	s := &segment{base: base, dir: dir, next: base, maxTs: -1, maxTsOffset: -1, maxTsLast: -1, rollBaseTs: -1, created: created}
	s.refs.Store(1)
	return s
}

// createSegment creates empty files for a new segment.
func createSegment(fs vfs.FS, dir string, base int64, now time.Time) (*segment, error) {
	return createSegmentFiles(fs, dir, base, now, "")
}

// createSegmentFiles creates empty files for a new segment, each name
// ending in suffix (the cleaner writes "<base>.log.cleaned" and so on).
func createSegmentFiles(fs vfs.FS, dir string, base int64, now time.Time, suffix string) (*segment, error) {
	s := newSegment(base, dir, now)
	var err error
	if s.log, err = fs.Create(s.path(".log" + suffix)); err != nil {
		return nil, fmt.Errorf("create segment %d: %w", base, err)
	}
	if s.idx, err = fs.Create(s.path(".index" + suffix)); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("create segment %d index: %w", base, err)
	}
	if s.tidx, err = fs.Create(s.path(".timeindex" + suffix)); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("create segment %d time index: %w", base, err)
	}
	if s.txn, err = fs.Create(s.path(".txnindex" + suffix)); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("create segment %d transaction index: %w", base, err)
	}
	return s, nil
}

func (s *segment) closeFiles() {
	for _, f := range []vfs.File{s.log, s.idx, s.tidx, s.txn} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// acquire pins the segment's files for a reader; false if the segment has
// left the log.
func (s *segment) acquire() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the files.
func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		s.closeFiles()
	}
}

func (s *segment) empty() bool { return s.next == s.base }

// appendIndexesLocked records index entries for a batch just written at pos.
// Called with Log.mu held.
func (s *segment) appendIndexesLocked(pos int64, b *batchInfo, baseOffset int64, intervalBytes int64) {
	last := baseOffset + int64(b.records) - 1
	if b.maxTimestamp > s.maxTs {
		s.maxTs, s.maxTsOffset, s.maxTsLast = b.maxTimestamp, baseOffset+int64(b.maxTsDelta), last
	}
	if s.rollBaseTs < 0 {
		s.rollBaseTs = b.maxTimestamp
	}
	if s.bytesSinceIndex > intervalBytes {
		s.imu.Lock()
		s.imu.offsets = append(s.imu.offsets, offsetEntry{rel: uint32(last - s.base), pos: uint32(pos)})
		s.maybeAppendTimeLocked()
		s.imu.Unlock()
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int64(b.size)
	s.next = last + 1
}

// indexBatchesLocked records the index entries of the batches infos just
// written at pos, the first of them at offset first. Called with Log.mu
// held.
func (s *segment) indexBatchesLocked(pos int64, infos []batchInfo, first int64, intervalBytes int64) {
	off := first
	for i := range infos {
		s.appendIndexesLocked(pos+int64(infos[i].pos), &infos[i], off, intervalBytes)
		off += int64(infos[i].records)
	}
}

// maybeAppendTimeLocked adds a time index entry for the current maximum when
// it is newer than the last entry. Called with imu held.
func (s *segment) maybeAppendTimeLocked() {
	if s.maxTs < 0 {
		return
	}
	if n := len(s.imu.times); n > 0 && s.imu.times[n-1].ts >= s.maxTs {
		return
	}
	s.imu.times = append(s.imu.times, timeEntry{ts: s.maxTs, rel: uint32(s.maxTsLast - s.base)})
}

// writeIndexesLocked appends index entries not yet on disk.
func (s *segment) writeIndexesLocked(buf []byte) ([]byte, error) {
	s.imu.RLock()
	offs, times := s.imu.offsets[s.offsetsOnDisk:], s.imu.times[s.timesOnDisk:]
	buf = appendOffsetEntries(buf[:0], offs)
	n := len(buf)
	buf = appendTimeEntries(buf, times)
	no, nt := len(s.imu.offsets), len(s.imu.times)
	s.imu.RUnlock()
	if n > 0 {
		if _, err := s.idx.Write(buf[:n]); err != nil {
			return buf, fmt.Errorf("write index of segment %d: %w", s.base, err)
		}
	}
	s.offsetsOnDisk = no
	if len(buf) > n {
		if _, err := s.tidx.Write(buf[n:]); err != nil {
			return buf, fmt.Errorf("write time index of segment %d: %w", s.base, err)
		}
	}
	s.timesOnDisk = nt
	s.imu.RLock()
	aborted := s.imu.aborted[s.abortedOnDisk:]
	buf = appendAbortedTxns(buf[:0], aborted)
	na := s.abortedOnDisk + len(aborted)
	s.imu.RUnlock()
	if len(buf) > 0 {
		if _, err := s.txn.Write(buf); err != nil {
			return buf, fmt.Errorf("write transaction index of segment %d: %w", s.base, err)
		}
		s.txnUnsynced = true
	}
	s.abortedOnDisk = na
	return buf, nil
}

// addAbortedLocked records an aborted transaction whose marker lies in the
// segment and writes it to the .txnindex at once, as Kafka's
// TransactionIndex does as it appends the abort marker: a process killed
// before the next flush leaves the entry with the marker (in the page
// cache). Aborts are rare, so the write costs nothing measurable; the
// flush makes it durable. A failed write is left to the flush, which
// writes what is not on disk and reports the error.
func (s *segment) addAbortedLocked(a AbortedTxn) {
	s.imu.Lock()
	s.imu.aborted = append(s.imu.aborted, a)
	n := len(s.imu.aborted)
	s.imu.Unlock()
	s.dirty = true
	if s.abortedOnDisk != n-1 {
		return // earlier entries are still to be written: the flush keeps their order
	}
	var b [txnEntrySize]byte
	if _, err := s.txn.Write(appendAbortedTxns(b[:0], []AbortedTxn{a})); err != nil {
		// Cut a partial entry off, so the flush's write lands where it
		// belongs; if even that fails, the flush fails with it.
		_ = s.txn.Truncate(int64(s.abortedOnDisk) * txnEntrySize)
		return
	}
	s.abortedOnDisk, s.txnUnsynced = n, true
}

// flushLocked writes pending index entries and fsyncs all three files.
func (s *segment) flushLocked(buf []byte) ([]byte, error) {
	buf, err := s.writeIndexesLocked(buf)
	if err != nil {
		return buf, err
	}
	for _, f := range []vfs.File{s.log, s.idx, s.tidx} {
		if err := f.Sync(); err != nil {
			return buf, fmt.Errorf("sync segment %d: %w", s.base, err)
		}
	}
	if s.txnUnsynced {
		if err := s.txn.Sync(); err != nil {
			return buf, fmt.Errorf("sync segment %d transaction index: %w", s.base, err)
		}
		s.txnUnsynced = false
	}
	s.dirty = false
	return buf, nil
}

// rewriteIndexesLocked replaces both index files with the in-memory entries.
func (s *segment) rewriteIndexesLocked(buf []byte) ([]byte, error) {
	if err := s.idx.Truncate(0); err != nil {
		return buf, fmt.Errorf("truncate index of segment %d: %w", s.base, err)
	}
	if err := s.tidx.Truncate(0); err != nil {
		return buf, fmt.Errorf("truncate time index of segment %d: %w", s.base, err)
	}
	if err := s.txn.Truncate(0); err != nil {
		return buf, fmt.Errorf("truncate transaction index of segment %d: %w", s.base, err)
	}
	s.offsetsOnDisk, s.timesOnDisk, s.abortedOnDisk, s.txnUnsynced = 0, 0, 0, true
	return s.writeIndexesLocked(buf)
}

// errTornTail marks where recovery found the end of the valid data.
var errTornTail = errors.New("torn tail")

// scan walks the batches of the .log from position 0, rebuilding the
// in-memory indexes and writer state. With verify it also checks every
// CRC. It returns the position after the last good batch; a torn or
// corrupt batch stops the walk with an error wrapping errTornTail (and the
// reason). minBase is the smallest acceptable base offset of the first
// batch.
//
// onBatch, when not nil, sees each good batch's partition leader epoch and
// base offset (recovery rebuilds the leader epoch cache from them).
func (s *segment) scan(fileSize int64, verify bool, intervalBytes int64, buf []byte, onBatch func(epoch int32, base int64)) (int64, []byte, error) {
	s.imu.Lock()
	s.imu.offsets, s.imu.times = s.imu.offsets[:0], s.imu.times[:0]
	s.imu.Unlock()
	s.next, s.maxTs, s.maxTsOffset, s.maxTsLast, s.rollBaseTs, s.bytesSinceIndex = s.base, -1, -1, -1, -1, 0
	var hdr [record.ScanHeaderSize]byte
	pos := int64(0)
	for pos < fileSize {
		if fileSize-pos < record.HeaderSize {
			return pos, buf, fmt.Errorf("%w: %d bytes after the last batch", errTornTail, fileSize-pos)
		}
		if _, err := s.log.ReadAt(hdr[:], pos); err != nil {
			return pos, buf, fmt.Errorf("read segment %d at %d: %w", s.base, pos, err)
		}
		h, err := record.ParseHeader(hdr[:])
		if err != nil {
			return pos, buf, fmt.Errorf("%w: %w", errTornTail, err)
		}
		size := h.Size()
		if int64(size) > fileSize-pos {
			return pos, buf, fmt.Errorf("%w: batch of %d bytes, %d left", errTornTail, size, fileSize-pos)
		}
		if h.BaseOffset() < s.next || h.LastOffset()-s.base > maxRelOffset {
			return pos, buf, fmt.Errorf("%w: batch offset %d out of sequence (expected >= %d)", errTornTail, h.BaseOffset(), s.next)
		}
		if verify {
			if cap(buf) < size {
				buf = make([]byte, size)
			}
			b := buf[:size]
			if _, err := s.log.ReadAt(b, pos); err != nil && !(errors.Is(err, io.EOF) && len(b) == size) {
				return pos, buf, fmt.Errorf("read segment %d at %d: %w", s.base, pos, err)
			}
			if err := record.Batch(b).CheckCRC(); err != nil {
				return pos, buf, fmt.Errorf("%w: %w", errTornTail, err)
			}
		}
		lastDelta := h.LastOffsetDelta()
		info := batchInfo{size: size, records: lastDelta + 1, maxTimestamp: h.MaxTimestamp(), maxTsDelta: lastDelta}
		if h.Attributes().TimestampType() == record.LogAppendTime {
			info.maxTsDelta = 0
		}
		// Gaps between batches are legal (compaction); the batch keeps its
		// own base offset.
		s.appendIndexesLocked(pos, &info, h.BaseOffset(), intervalBytes)
		if onBatch != nil {
			onBatch(h.PartitionLeaderEpoch(), h.BaseOffset())
		}
		pos += int64(size)
	}
	return pos, buf, nil
}

// maxRelOffset is the largest offset distance from the segment base that a
// 4-byte relative index entry can hold.
const maxRelOffset = 1<<31 - 1

// batchAt reads the scan header of the batch at pos into hdr and returns
// the view of it.
func (s *segment) batchAt(pos int64, hdr *[record.ScanHeaderSize]byte) (record.Batch, error) {
	if _, err := s.log.ReadAt(hdr[:], pos); err != nil {
		return nil, fmt.Errorf("read segment %d at %d: %w", s.base, pos, err)
	}
	h, err := record.ParseHeader(hdr[:])
	if err != nil {
		return nil, fmt.Errorf("segment %d at %d: %w", s.base, pos, err)
	}
	return h, nil
}

// find returns the position of the batch holding offset (or the first batch
// after it) and that batch's header, scanning forward from the index
// position; ok is false when no batch at or after offset lies below limit.
func (s *segment) find(offset int64, limit int64) (int64, record.Batch, bool, error) {
	rel := offset - s.base
	if rel < 0 {
		rel = 0
	}
	s.imu.RLock()
	pos := lookupPos(s.imu.offsets, uint32(min(rel, maxRelOffset)))
	s.imu.RUnlock()
	var hdr [record.ScanHeaderSize]byte
	for pos+record.HeaderSize <= limit {
		h, err := s.batchAt(pos, &hdr)
		if err != nil {
			return 0, nil, false, err
		}
		if h.LastOffset() >= offset {
			return pos, h, true, nil
		}
		pos += int64(h.Size())
	}
	return 0, nil, false, nil
}

func readFull(f vfs.File, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}
