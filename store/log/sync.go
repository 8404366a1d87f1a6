package log

import (
	"fmt"
	"sync"
)

// groupSync is a log's group commit (SyncTo): one fsync of the segment
// data at a time, covering every append made before it started, so that
// appends waiting to be durable share fsyncs instead of taking one each.
type groupSync struct {
	mu      sync.Mutex
	synced  int64         // every offset below is on disk
	running chan struct{} // closed when the running sync ends; nil when none
	// cuts counts truncations: a sync that ran across one covered
	// records that are gone, and does not count.
	cuts uint64
}

// SyncTo returns once every record below offset is durable in its
// segment's .log file, or the sync failed (which makes the log's error
// sticky, as a failed flush does): a durable writer calls it before it
// acknowledges an append. Appends made by concurrent callers while one
// sync runs are covered together by the next (group commit). The indexes
// are not synced: recovery rebuilds them from the data past the recovery
// point, which SyncTo leaves to Flush.
func (l *Log) SyncTo(offset int64) error {
	g := &l.gsync
	for {
		g.mu.Lock()
		if g.synced >= offset {
			g.mu.Unlock()
			return nil
		}
		if wait := g.running; wait != nil {
			g.mu.Unlock()
			<-wait
			continue
		}
		done := make(chan struct{})
		g.running = done
		g.mu.Unlock()

		end, cuts, err := l.syncData(offset)

		g.mu.Lock()
		if err == nil && cuts == g.cuts {
			g.synced = max(g.synced, end)
		}
		g.running = nil
		close(done)
		g.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// syncData fsyncs the .log of every segment that may hold unsynced
// records below the log end, outside the log's lock so that appends go on
// meanwhile, and returns the end it covered.
func (l *Log) syncData(offset int64) (end int64, cuts uint64, err error) {
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return 0, 0, err
	}
	end = l.end.Load()
	if offset > end {
		l.mu.Unlock()
		return 0, 0, fmt.Errorf("%w: sync to %d past the log end %d", ErrOffsetOutOfRange, offset, end)
	}
	l.gsync.mu.Lock()
	from, cuts := max(l.gsync.synced, l.mu.recoveryPoint), l.gsync.cuts
	l.gsync.mu.Unlock()
	var segs []*segment
	for _, s := range l.segments() {
		if s.next > from && s.acquire() {
			segs = append(segs, s)
		}
	}
	l.mu.Unlock()
	for _, s := range segs {
		if err == nil {
			if serr := s.log.Sync(); serr != nil {
				err = fmt.Errorf("sync segment %d: %w", s.base, serr)
			}
		}
		s.release()
	}
	if err != nil {
		l.mu.Lock()
		err = l.failLocked("sync", err)
		l.mu.Unlock()
		return 0, 0, err
	}
	return end, cuts, nil
}

// Synced is the offset below which every record is known durable: where
// the last SyncTo or the opening recovery got to.
func (l *Log) Synced() int64 {
	l.gsync.mu.Lock()
	defer l.gsync.mu.Unlock()
	return l.gsync.synced
}

// truncatedTo lowers the synced offset after the log was cut back to
// offset: records appended there anew are not synced yet.
func (g *groupSync) truncatedTo(offset int64) {
	g.mu.Lock()
	g.synced = min(g.synced, offset)
	g.cuts++
	g.mu.Unlock()
}

// resetTo is truncatedTo for a log emptied to start at offset.
func (g *groupSync) resetTo(offset int64) {
	g.mu.Lock()
	g.synced = offset
	g.cuts++
	g.mu.Unlock()
}
