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
	s := l.segmentAt(base)
	if s == nil {
		return IndexPage[OffsetIndexEntry]{}, false
	}
	s.imu.RLock()
	defer s.imu.RUnlock()
	es := page(s.imu.offsets, from, limit)
	out := IndexPage[OffsetIndexEntry]{Entries: make([]OffsetIndexEntry, len(es)), From: from, Total: len(s.imu.offsets)}
	for i, e := range es {
		out.Entries[i] = OffsetIndexEntry{RelativeOffset: e.rel, Position: e.pos}
	}
	return out, true
}

// TimeIndex is OffsetIndex for the time index.
func (l *Log) TimeIndex(base int64, from, limit int) (IndexPage[TimeIndexEntry], bool) {
	s := l.segmentAt(base)
	if s == nil {
		return IndexPage[TimeIndexEntry]{}, false
	}
	s.imu.RLock()
	defer s.imu.RUnlock()
	es := page(s.imu.times, from, limit)
	out := IndexPage[TimeIndexEntry]{Entries: make([]TimeIndexEntry, len(es)), From: from, Total: len(s.imu.times)}
	for i, e := range es {
		out.Entries[i] = TimeIndexEntry{Timestamp: e.ts, RelativeOffset: e.rel}
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

// page is es[from:from+limit], clipped to es.
func page[E any](es []E, from, limit int) []E {
	from = min(max(from, 0), len(es))
	return es[from:min(from+max(limit, 0), len(es))]
}
