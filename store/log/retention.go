package log

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// ApplyRetention deletes old segments by retention.ms (a segment expires
// when its largest timestamp is older than now - retention.ms) and by
// retention.bytes when the cleanup policy includes delete, and segments
// wholly below the log start whatever the policy. The active segment is
// never deleted. It returns how many segments went.
func (l *Log) ApplyRetention(now time.Time) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return 0, err
	}
	cfg := l.mu.cfg
	start := l.start.Load()
	total := int64(0)
	for _, s := range l.segments() {
		total += s.size.Load()
	}
	nowMs := now.UnixMilli()
	excess := int64(-1)
	if cfg.RetentionBytes >= 0 {
		excess = total - cfg.RetentionBytes
	}
	byRetention := cfg.CleanupPolicy.Delete()
	return l.deletePrefixLocked(func(s, next *segment) bool {
		if next.base <= start {
			return true
		}
		if !byRetention {
			return false
		}
		if cfg.RetentionMs >= 0 {
			ts := s.maxTs
			if ts < 0 {
				ts = s.created.UnixMilli()
			}
			if nowMs-ts > cfg.RetentionMs {
				excess -= s.size.Load()
				return true
			}
		}
		if excess >= 0 && excess-s.size.Load() >= 0 {
			excess -= s.size.Load()
			return true
		}
		return false
	})
}

// SetStartOffset advances the log start offset (DeleteRecords) and deletes
// segments wholly below it. Moving it backwards is a no-op.
func (l *Log) SetStartOffset(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if offset > l.end.Load() {
		return fmt.Errorf("%w: start offset %d beyond log end %d", ErrOffsetOutOfRange, offset, l.end.Load())
	}
	if offset <= l.start.Load() {
		return nil
	}
	l.start.Store(offset)
	_, err := l.deletePrefixLocked(func(s *segment, next *segment) bool { return next.base <= offset })
	return err
}

// deletePrefixLocked deletes leading non-active segments while del says so,
// then raises the log start to the first remaining segment.
func (l *Log) deletePrefixLocked(del func(s, next *segment) bool) (int, error) {
	segs := l.segments()
	n := 0
	for n < len(segs)-1 && del(segs[n], segs[n+1]) {
		n++
	}
	if n > 0 {
		l.publish(append([]*segment(nil), segs[n:]...))
		if b := segs[n].base; b > l.start.Load() {
			l.start.Store(b)
		}
		if err := l.dropSegmentsLocked(segs[:n]); err != nil {
			return 0, err
		}
		first := segs[n].base
		if err := l.deleteSnapshotsLocked(func(o int64) bool { return o < first }); err != nil {
			return 0, err
		}
	}
	if l.truncateEpochsFromStartLocked(l.start.Load()) {
		if err := l.writeEpochsLocked(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// dropSegmentsLocked removes segments that are no longer published; open
// readers keep their files until they finish.
func (l *Log) dropSegmentsLocked(drop []*segment) error {
	for _, s := range drop {
		for _, ext := range segmentExts {
			if err := l.fs.Remove(s.path(ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return l.failLocked("remove", fmt.Errorf("remove segment %d: %w", s.base, err))
			}
		}
		s.release()
	}
	if len(drop) > 0 {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.failLocked("sync", err)
		}
	}
	return nil
}
