package log

import (
	"fmt"
	"time"
)

// MaybeRoll rolls the active segment when it is non-empty and older than
// segment.ms.
func (l *Log) MaybeRoll(now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	seg := l.active()
	if seg.empty() || !l.segmentAgedLocked(seg, now, l.mu.cfg) {
		return nil
	}
	return l.rollLocked(now, "segment.ms")
}

// maybeRollLocked rolls the active segment when the next append of size
// bytes and records records would not fit it.
func (l *Log) maybeRollLocked(now time.Time, size, records int64, cfg Config) error {
	seg := l.active()
	if seg.empty() {
		return nil
	}
	if reason := l.rollReasonLocked(seg, now, size, seg.next+records-1, 1, cfg); reason != "" {
		return l.rollLocked(now, reason)
	}
	return nil
}

// rollReasonLocked says why the non-empty segment seg cannot take an
// append of size bytes ending at lastOffset that adds up to indexEntries
// index entries, or "" when it can.
func (l *Log) rollReasonLocked(seg *segment, now time.Time, size, lastOffset int64, indexEntries int, cfg Config) string {
	seg.imu.RLock()
	nOffs, nTimes := len(seg.imu.offsets), len(seg.imu.times)
	seg.imu.RUnlock()
	switch {
	case seg.size.Load()+size > cfg.SegmentBytes:
		return "segment.bytes"
	case l.segmentAgedLocked(seg, now, cfg):
		return "segment.ms"
	case int64(nOffs+indexEntries)*offsetEntrySize > int64(cfg.SegmentIndexBytes) || int64(nTimes+indexEntries)*timeEntrySize > int64(cfg.SegmentIndexBytes):
		return "segment.index.bytes"
	case lastOffset-seg.base > maxRelOffset:
		return "relative offset overflow"
	}
	return ""
}

func (l *Log) segmentAgedLocked(seg *segment, now time.Time, cfg Config) bool {
	baseMs := seg.created.UnixMilli()
	if seg.rollBaseTs >= 0 {
		baseMs = seg.rollBaseTs
	}
	return now.UnixMilli()-baseMs > cfg.SegmentMs-cfg.SegmentJitterMs
}

// rollLocked closes the active segment for writes, fsyncs it (Kafka's
// policy: data is flushed on roll) and starts a new one at the log end.
func (l *Log) rollLocked(now time.Time, reason string) error {
	return l.rollAtLocked(now, reason, l.active().next)
}

// rollAtLocked is rollLocked with the new segment based at base, at or
// after the log end: a follower rolls at the base offset of the batch it
// appends, which lies past the log end when the leader's log has a gap
// there, as Kafka bases it.
func (l *Log) rollAtLocked(now time.Time, reason string, base int64) error {
	old := l.active()
	old.imu.Lock()
	old.maybeAppendTimeLocked()
	old.imu.Unlock()
	if err := l.flushSegmentLocked(old); err != nil {
		return err
	}
	if err := l.writeSnapshotLocked(old.next); err != nil {
		return err
	}
	s, err := createSegment(l.fs, l.dir, base, now)
	if err != nil {
		return l.failLocked("create", err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		s.closeFiles()
		return l.failLocked("sync", fmt.Errorf("sync dir after roll: %w", err))
	}
	segs := append(append([]*segment(nil), l.segments()...), s)
	l.publish(segs)
	l.mu.recoveryPoint = max(l.mu.recoveryPoint, old.next)
	l.logger.Debug("rolled segment", "reason", reason, "old", old.base, "new", s.base)
	if l.onRoll != nil {
		l.onRoll(Roll{Reason: reason, OldBase: old.base, NewBase: s.base, Time: now})
	}
	// Snapshots of the last two segments are kept, so that truncation
	// into the previous segment need not replay from the log start.
	return l.deleteSnapshotsLocked(func(o int64) bool { return o < old.base })
}

// replaceEmptyActiveLocked replaces the empty active segment by one based
// at base, past the log end: a replicated batch after a gap wider than a
// segment's relative offsets reach. As on recovery, a log of that one
// segment starts at its base.
func (l *Log) replaceEmptyActiveLocked(now time.Time, base int64) error {
	segs := l.segments()
	old := segs[len(segs)-1]
	s, err := createSegment(l.fs, l.dir, base, now)
	if err != nil {
		return l.failLocked("create", err)
	}
	l.publish(append(append([]*segment(nil), segs[:len(segs)-1]...), s))
	if len(segs) == 1 {
		l.start.Store(max(l.start.Load(), base))
	}
	l.logger.Debug("replaced empty segment", "old", old.base, "new", base)
	return l.dropSegmentsLocked([]*segment{old})
}
