package log

// The in-memory offset and time indexes of a segment, read page by page
// for inspection (the admin API): each page is copied under the segment's
// index lock, which appends take only to add an entry.

// IndexPage is a page of one segment's index: Entries from the From-th,
// of Total.
type IndexPage[E any] struct {
	Entries []E
	From    int
	Total   int
}

// OffsetIndex returns up to limit entries of the offset index of the
// segment whose base offset is base, from the from-th; false when the log
// has no such segment.
func (l *Log) OffsetIndex(base int64, from, limit int) (IndexPage[OffsetIndexEntry], bool) {
	return indexPage(l, base, from, limit, func(s *segment) []offsetEntry { return s.imu.offsets },
		func(e offsetEntry) OffsetIndexEntry { return OffsetIndexEntry{RelativeOffset: e.rel, Position: e.pos} })
}

// TimeIndex is OffsetIndex for the time index.
func (l *Log) TimeIndex(base int64, from, limit int) (IndexPage[TimeIndexEntry], bool) {
	return indexPage(l, base, from, limit, func(s *segment) []timeEntry { return s.imu.times },
		func(e timeEntry) TimeIndexEntry { return TimeIndexEntry{Timestamp: e.ts, RelativeOffset: e.rel} })
}

// indexPage copies a page of the index entries returns from the segment at
// base, under its index lock.
func indexPage[R, E any](l *Log, base int64, from, limit int, entries func(*segment) []R, export func(R) E) (IndexPage[E], bool) {
	s := l.segmentAt(base)
	if s == nil {
		return IndexPage[E]{}, false
	}
	s.imu.RLock()
	defer s.imu.RUnlock()
	all := entries(s)
	from = min(max(from, 0), len(all))
	es := all[from:min(from+max(limit, 0), len(all))]
	out := IndexPage[E]{Entries: make([]E, len(es)), From: from, Total: len(all)}
	for i, e := range es {
		out.Entries[i] = export(e)
	}
	return out, true
}

// segmentAt returns the segment whose base offset is base, or nil.
func (l *Log) segmentAt(base int64) *segment {
	segs := l.segments()
	if len(segs) == 0 {
		return nil
	}
	if s := segs[segmentFor(segs, base)]; s.base == base {
		return s
	}
	return nil
}
