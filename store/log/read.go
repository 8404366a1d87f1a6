package log

import (
	"fmt"
	"slices"

	"github.com/klogdev/klog/store/log/record"
)

// Read appends to dst whole batches starting with the batch that holds
// offset, from a single segment. Only batches whose last offset is below
// upperBound (the caller's high watermark or log end) are returned, and
// reading stops before maxBytes would be exceeded — except that with
// minOneBatch the first batch is returned even when larger. offset equal to
// the log end (or to upperBound) returns dst unchanged; an offset below the
// log start or above the log end is ErrOffsetOutOfRange.
func (l *Log) Read(dst []byte, offset int64, maxBytes int, upperBound int64, minOneBatch bool) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		end := l.end.Load()
		if offset < l.start.Load() || offset > end {
			return dst, fmt.Errorf("%w: offset %d, log has [%d, %d)", ErrOffsetOutOfRange, offset, l.start.Load(), end)
		}
		bound := min(upperBound, end)
		if offset >= bound {
			return dst, nil
		}
		segs := l.segments()
		i := segmentFor(segs, offset)
		for ; i < len(segs); i++ {
			s := segs[i]
			if !s.acquire() {
				break // dropped by retention or truncation: retry
			}
			out, found, err := readSegment(s, dst, offset, maxBytes, bound, minOneBatch)
			s.release()
			if err != nil {
				if l.dropped(s) {
					break // its files went with it: retry
				}
				return dst, err
			}
			if found {
				return out, nil
			}
		}
		if attempt >= 3 {
			if l.isClosed() {
				return dst, ErrClosed
			}
			return dst, fmt.Errorf("%w: offset %d moved while reading", ErrOffsetOutOfRange, offset)
		}
	}
}

// dropped reports whether s has left the log. Its files may then be gone:
// a reader that pinned it cannot reopen them once the file cache closed
// them (vfs.LimitFS), and reads on from the segments still there.
func (l *Log) dropped(s *segment) bool {
	segs := l.segments()
	return len(segs) == 0 || segs[segmentFor(segs, s.base)] != s
}

func (l *Log) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.closed
}

func readSegment(s *segment, dst []byte, offset int64, maxBytes int, bound int64, minOneBatch bool) ([]byte, bool, error) {
	limit := s.size.Load()
	pos, h, ok, err := s.find(offset, limit)
	if err != nil || !ok {
		return dst, false, err
	}
	if h.BaseOffset() >= bound || h.LastOffset() >= bound {
		return dst, true, nil
	}
	want := limit - pos
	if int64(maxBytes) < want {
		want = int64(max(maxBytes, 0))
	}
	if int64(h.Size()) > want {
		if !minOneBatch {
			return dst, true, nil
		}
		want = int64(h.Size())
	}
	n0 := len(dst)
	dst = growLen(dst, int(want))
	buf := dst[n0:]
	if err := readFull(s.log, buf, pos); err != nil {
		return dst[:n0], true, fmt.Errorf("read segment %d at %d: %w", s.base, pos, err)
	}
	// Keep whole batches below the bound.
	used := 0
	for used+record.ScanHeaderSize <= len(buf) {
		bh, err := record.ParseHeader(buf[used:])
		if err != nil {
			return dst[:n0], true, fmt.Errorf("segment %d at %d: %w", s.base, pos+int64(used), err)
		}
		if used+bh.Size() > len(buf) || bh.LastOffset() >= bound {
			break
		}
		used += bh.Size()
	}
	return dst[:n0+used], true, nil
}

// growLen extends b by n bytes, reallocating at most once, with room to
// spare as append leaves it: a fetch reads many partitions into one
// buffer, and growing it by exactly each partition's bytes would copy it
// once per partition.
func growLen(b []byte, n int) []byte {
	return slices.Grow(b, n)[:len(b)+n]
}

// OffsetForTimestamp returns the earliest offset whose record timestamp is
// >= ts, with that timestamp; ok is false when no record qualifies.
// CreateTime batches are resolved to the record (compressed ones are
// decompressed for this, up to 64 MiB); in LogAppendTime batches every
// record has the batch's time, so the batch's first offset answers. A batch
// that cannot be decompressed is answered the same way.
func (l *Log) OffsetForTimestamp(ts int64) (int64, int64, bool, error) {
	start := l.start.Load()
	segs := l.segments()
	for _, s := range segs {
		if !s.acquire() {
			continue
		}
		off, rts, ok, err := l.offsetForTimestampIn(s, ts, start)
		s.release()
		if err != nil && l.dropped(s) {
			continue // its files went with it, and its records
		}
		if err != nil || ok {
			return off, rts, ok, err
		}
	}
	return 0, 0, false, nil
}

func (l *Log) offsetForTimestampIn(s *segment, ts, start int64) (int64, int64, bool, error) {
	limit := s.size.Load()
	s.imu.RLock()
	rel, found := lookupTime(s.imu.times, ts)
	s.imu.RUnlock()
	from := max(s.base, start)
	if found {
		from = max(from, s.base+int64(rel))
	}
	pos, _, ok, err := s.find(from, limit)
	if err != nil || !ok {
		return 0, 0, false, err
	}
	var hdr [record.ScanHeaderSize]byte
	var batch []byte
	for pos+record.HeaderSize <= limit {
		h, err := s.batchAt(pos, &hdr)
		if err != nil {
			return 0, 0, false, err
		}
		if h.LastOffset() >= start && h.MaxTimestamp() >= ts {
			base := h.BaseOffset()
			if h.Attributes().TimestampType() == record.LogAppendTime {
				// Every record carries the batch's append time.
				return max(base, start), h.MaxTimestamp(), true, nil
			}
			size := h.Size()
			if cap(batch) < size {
				batch = make([]byte, size)
			}
			batch = batch[:size]
			if err := readFull(s.log, batch, pos); err != nil {
				return 0, 0, false, fmt.Errorf("read segment %d at %d: %w", s.base, pos, err)
			}
			it, err := record.Batch(batch).Records(&l.dec)
			if err != nil {
				// Answer for the batch as a whole rather than fail.
				l.logger.Warn("cannot decompress batch for a timestamp lookup", "offset", base, "err", err)
				return max(base, start), h.MaxTimestamp(), true, nil
			}
			// The first record at or after ts, skipping those below the
			// log start; malformed records end the search.
			baseTs := h.BaseTimestamp()
			for it.Next() {
				r := it.Record()
				if rts := baseTs + r.TimestampDelta; rts >= ts && base+int64(r.OffsetDelta) >= start {
					return base + int64(r.OffsetDelta), rts, true, nil
				}
			}
		}
		pos += int64(h.Size())
	}
	return 0, 0, false, nil
}

// MaxTimestamp returns the largest timestamp in the log and the offset of
// the record holding it; (-1, -1) when the log is empty.
func (l *Log) MaxTimestamp() (int64, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts, off := int64(-1), int64(-1)
	start := l.start.Load()
	for _, s := range l.segments() {
		if s.next <= start {
			continue
		}
		if s.maxTs > ts {
			ts, off = s.maxTs, s.maxTsOffset
		}
	}
	return ts, off
}

// BatchSize returns the size of the batch Read would return first for
// offset: the batch holding it, when that batch lies below upperBound;
// 0 when there is none. A caller that must account for memory before it
// reads asks it first. Offsets out of range are ErrOffsetOutOfRange, as
// for Read.
func (l *Log) BatchSize(offset, upperBound int64) (int, error) {
	end := l.end.Load()
	if offset < l.start.Load() || offset > end {
		return 0, fmt.Errorf("%w: offset %d, log has [%d, %d)", ErrOffsetOutOfRange, offset, l.start.Load(), end)
	}
	bound := min(upperBound, end)
	if offset >= bound {
		return 0, nil
	}
	segs := l.segments()
	for i := segmentFor(segs, offset); i < len(segs); i++ {
		s := segs[i]
		if !s.acquire() {
			return 0, nil // dropped: Read will say what is left
		}
		pos, h, ok, err := s.find(offset, s.size.Load())
		s.release()
		if err != nil {
			if l.dropped(s) {
				return 0, nil
			}
			return 0, fmt.Errorf("segment %d at %d: %w", s.base, pos, err)
		}
		if ok {
			if h.LastOffset() >= bound {
				return 0, nil
			}
			return h.Size(), nil
		}
	}
	return 0, nil
}
