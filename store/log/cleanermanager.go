package log

import (
	"path"
)

// DefaultDedupeBufferBytes is Kafka's log.cleaner.dedupe.buffer.size: the
// most memory one cleaning pass's offset map may take.
const DefaultDedupeBufferBytes = 128 << 20

// CleanDirtiest runs one cleaning pass over the compacted log most in need
// of it, as Kafka's LogCleanerManager.grabFilthiestCompactedLog picks it:
// among the logs whose cleanup.policy includes compact and that have a
// dirty section, those whose dirty ratio exceeds min.cleanable.dirty.ratio
// or whose oldest dirty record is older than max.compaction.lag.ms, the
// one with the highest ratio. upperBound gives each partition's first
// offset that must not be cleaned (its high watermark or last stable
// offset, whichever is lower), which the pass takes as opts.UpperBound;
// opts.Now is the time the logs are judged at. ok is false when no log
// qualified. The new cleaner checkpoint is written after the pass.
func (m *Manager) CleanDirtiest(opts CleanOptions, upperBound func(TopicPartition, *Log) int64) (tp TopicPartition, res CleanResult, ok bool, err error) {
	now := opts.Now
	var best *Log
	bestRatio := -1.0
	for p, l := range m.Logs() {
		cfg := l.Config()
		if !cfg.CleanupPolicy.Compact() {
			continue
		}
		l.mu.Lock()
		c := l.cleanableLocked(now, upperBound(p, l))
		l.mu.Unlock()
		if c.uncleanable <= c.firstDirty || c.dirtyBytes == 0 {
			continue
		}
		r := c.ratio()
		if !(c.mustClean(now, cfg) || r > cfg.MinCleanableDirtyRatio) {
			continue
		}
		if c.mustClean(now, cfg) {
			r += 1 // a log past max.compaction.lag.ms goes first
		}
		if r > bestRatio || r == bestRatio && (p.Topic < tp.Topic || p.Topic == tp.Topic && p.Partition < tp.Partition) {
			best, bestRatio, tp = l, r, p
		}
	}
	if best == nil {
		return TopicPartition{}, CleanResult{}, false, nil
	}
	opts.UpperBound = upperBound(tp, best)
	res, err = best.Clean(opts)
	if err != nil {
		return tp, res, true, err
	}
	return tp, res, true, m.writeCleanerCheckpoint()
}

// CleanNow cleans the log l, whatever its dirty ratio, as far as its
// first uncleanable offset: pass after pass while a pass ends early where
// its offset map filled. The rules of each pass are Clean's (the active
// segment, the upper bound and min.compaction.lag.ms still hold back what
// they do). The result sums the passes: FirstDirty and SegmentsBefore are
// the first's, End and SegmentsAfter the last's. A dry run
// (opts.DryRun) runs one pass that writes nothing. The new cleaner
// checkpoint is written after a real pass.
func (m *Manager) CleanNow(l *Log, opts CleanOptions) (CleanResult, error) {
	total, err := l.Clean(opts)
	if err != nil || opts.DryRun || !total.Cleaned {
		return total, err
	}
	for total.End < total.Uncleanable {
		res, err := l.Clean(opts)
		if err != nil {
			return total, err
		}
		if !res.Cleaned || res.End <= total.End {
			break
		}
		total.End, total.SegmentsAfter, total.Uncleanable = res.End, res.SegmentsAfter, res.Uncleanable
		total.BytesRemoved += res.BytesRemoved
		total.RecordsRemoved += res.RecordsRemoved
		total.TombstonesRemoved += res.TombstonesRemoved
		total.MarkersRemoved += res.MarkersRemoved
	}
	return total, m.writeCleanerCheckpoint()
}

// writeCleanerCheckpoint writes cleaner-offset-checkpoint after a pass.
func (m *Manager) writeCleanerCheckpoint() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	return m.writeCleanerCheckpointLocked()
}

// writeCleanerCheckpointLocked writes cleaner-offset-checkpoint: the
// first dirty offset of every compacted log that has one.
func (m *Manager) writeCleanerCheckpointLocked() error {
	offs := map[TopicPartition]int64{}
	for tp, l := range m.mu.logs {
		if o := l.CleanerCheckpoint(); o > 0 && l.Config().CleanupPolicy.Compact() {
			offs[tp] = o
		}
	}
	if len(offs) == 0 {
		if _, err := m.fs.Stat(path.Join(m.dir, CleanerOffsetCheckpoint)); err != nil {
			return nil // nothing cleaned, nothing to say
		}
	}
	return m.writeCheckpointLocked(CleanerOffsetCheckpoint, encodeOffsetCheckpoint(offs))
}
