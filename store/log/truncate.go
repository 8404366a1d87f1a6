package log

import "fmt"

// Truncate removes every batch at or after offset (replication's
// truncation to a leader's epoch end). A batch straddling offset is removed
// whole. Truncating below the log start empties the log and restarts it at
// offset.
func (l *Log) Truncate(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("%w: truncate to %d", ErrOffsetOutOfRange, offset)
	}
	if offset >= l.end.Load() {
		return nil
	}
	l.truncatedLocked(offset)
	segs := l.segments()
	if offset < l.start.Load() || offset <= segs[0].base {
		return l.resetLocked(offset)
	}
	i := segmentFor(segs, offset)
	keep, drop := segs[:i+1], segs[i+1:]
	s := keep[len(keep)-1]
	pos, _, ok, err := s.find(offset, s.size.Load())
	if err != nil {
		return l.failLocked("read", err)
	}
	if !ok {
		pos = s.size.Load()
	}
	// The later segments go first, newest first, and only then is s cut:
	// a crash part-way must leave a prefix of the log, never data past
	// offset behind a gap, which recovery would take back (gaps are legal
	// in a compacted log).
	if len(drop) > 0 {
		if err := l.dropTailLocked(keep, drop); err != nil {
			return err
		}
	}
	if err := l.cutSegmentLocked(s, pos); err != nil {
		return err
	}
	l.end.Store(s.next)
	l.mu.recoveryPoint = min(l.mu.recoveryPoint, s.next)
	l.gsync.truncatedTo(s.next)
	if l.truncateEpochsFromEndLocked(s.next) {
		if err := l.writeEpochsLocked(); err != nil {
			return err
		}
	}
	// Producer state is rebuilt from the latest snapshot the truncation
	// left standing.
	if err := l.loadProducerStateLocked(l.now(), false); err != nil {
		return l.failLocked("read", err)
	}
	return nil
}

// dropTailLocked makes keep the log's segments, ending the log at the last
// one's end, and deletes the segments drop that followed them, newest
// first.
func (l *Log) dropTailLocked(keep, drop []*segment) error {
	l.publish(append([]*segment(nil), keep...))
	l.end.Store(keep[len(keep)-1].next)
	newestFirst := make([]*segment, len(drop))
	for j, d := range drop {
		newestFirst[len(drop)-1-j] = d
	}
	return l.dropSegmentsLocked(newestFirst)
}

// cutSegmentLocked cuts the segment s at file position pos and makes it
// durable: the file is truncated and synced, the rest re-scanned for its
// end and indexes, aborted transactions past the end dropped, and the
// rewritten indexes flushed. An error fails the log.
func (l *Log) cutSegmentLocked(s *segment, pos int64) error {
	if err := s.log.Truncate(pos); err != nil {
		return l.failLocked("truncate", fmt.Errorf("truncate segment %d: %w", s.base, err))
	}
	if err := s.log.Sync(); err != nil {
		return l.failLocked("sync", fmt.Errorf("sync segment %d: %w", s.base, err))
	}
	var good int64
	var err error
	good, l.mu.buf, err = s.scan(pos, false, int64(l.mu.cfg.IndexIntervalBytes), l.mu.buf, nil)
	if err != nil {
		return l.failLocked("read", err)
	}
	s.size.Store(good)
	s.imu.Lock()
	kept := s.imu.aborted[:0]
	for _, a := range s.imu.aborted {
		if a.LastOffset < s.next {
			kept = append(kept, a)
		}
	}
	clear(s.imu.aborted[len(kept):])
	s.imu.aborted = kept
	s.imu.Unlock()
	if l.mu.buf, err = s.rewriteIndexesLocked(l.mu.buf); err != nil {
		return l.failLocked("write", err)
	}
	return l.flushSegmentLocked(s)
}

// Reset deletes every batch and restarts the log empty at offset, which
// may lie past its end: what a follower does when its log end is below
// its leader's log start (Kafka's truncateFullyAndStartAt).
func (l *Log) Reset(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("%w: reset to %d", ErrOffsetOutOfRange, offset)
	}
	return l.resetLocked(offset)
}

// resetLocked deletes all segments and restarts the log empty at offset.
func (l *Log) resetLocked(offset int64) error {
	l.truncatedLocked(0)
	if err := l.dropSegmentsLocked(l.segments()); err != nil {
		return err
	}
	s, err := createSegment(l.fs, l.dir, offset, l.now())
	if err != nil {
		return l.failLocked("create", err)
	}
	l.publish([]*segment{s})
	l.end.Store(offset)
	l.start.Store(offset)
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.failLocked("sync", err)
	}
	l.mu.recoveryPoint = offset
	l.gsync.resetTo(offset)
	l.mu.epochs = nil
	if err := l.deleteSnapshotsLocked(func(int64) bool { return true }); err != nil {
		return err
	}
	l.mu.producers = newProducerState(0)
	l.fuo.Store(-1)
	return l.writeEpochsLocked()
}
