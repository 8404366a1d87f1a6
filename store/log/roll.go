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
	seg.imu.RLock()
	nOffs, nTimes := len(seg.imu.offsets), len(seg.imu.times)
	seg.imu.RUnlock()
	reason := ""
	switch {
	case seg.size.Load()+size > cfg.SegmentBytes:
		reason = "segment.bytes"
	case l.segmentAgedLocked(seg, now, cfg):
		reason = "segment.ms"
	case int64(nOffs+1)*offsetEntrySize > int64(cfg.SegmentIndexBytes) || int64(nTimes+1)*timeEntrySize > int64(cfg.SegmentIndexBytes):
		reason = "segment.index.bytes"
	case seg.next+records-1-seg.base > maxRelOffset:
		reason = "relative offset overflow"
	default:
		return nil
	}
	return l.rollLocked(now, reason)
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
	s, err := createSegment(l.fs, l.dir, old.next, now)
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
	// Snapshots of the last two segments are kept, so that truncation
	// into the previous segment need not replay from the log start.
	return l.deleteSnapshotsLocked(func(o int64) bool { return o < old.base })
}
