package log

import "path"

// LeaderEpochs returns the leader epoch cache, oldest first.
func (l *Log) LeaderEpochs() []EpochEntry {
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	return append([]EpochEntry(nil), l.rmu.epochs...)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch from the log's own cache;
// see EndOffsetFor.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	return EndOffsetFor(l.rmu.epochs, epoch, l.end.Load())
}

// EndOffsetFor is the answer of the leader-epoch cache es (oldest first) to
// OffsetForLeaderEpoch for epoch, as Kafka's
// LeaderEpochFileCache.endOffsetFor and UnifiedLog.endOffsetForEpoch give
// it: for the latest epoch, that epoch and logEnd; for an epoch between two
// entries, the largest epoch at or below it and the start of the next
// entry; for an epoch below the first entry, the epoch asked for and the
// first entry's start. The undefined epoch (-1), an epoch above the latest
// and an empty cache give (-1, -1).
func EndOffsetFor(es []EpochEntry, epoch int32, logEnd int64) (int32, int64) {
	if epoch == -1 || len(es) == 0 {
		return -1, -1
	}
	if es[len(es)-1].Epoch == epoch {
		return epoch, logEnd
	}
	hi := -1
	for i, e := range es {
		if e.Epoch > epoch {
			hi = i
			break
		}
	}
	if hi < 0 {
		return -1, -1
	}
	if hi == 0 {
		return epoch, es[0].StartOffset
	}
	return es[hi-1].Epoch, es[hi].StartOffset
}

func (l *Log) assignEpochLocked(epoch int32, offset int64) error {
	es := l.mu.epochs
	if n := len(es); n > 0 && es[n-1].Epoch >= epoch {
		return nil
	}
	l.mu.epochs = append(es, EpochEntry{Epoch: epoch, StartOffset: offset})
	if err := l.writeEpochsLocked(); err != nil {
		return err
	}
	return nil
}

func (l *Log) writeEpochsLocked() error {
	if err := writeFileAtomic(l.fs, path.Join(l.dir, LeaderEpochCheckpointFile), encodeEpochs(l.mu.epochs)); err != nil {
		return l.failLocked("write", err)
	}
	l.rmu.Lock()
	l.rmu.epochs = append(l.rmu.epochs[:0:0], l.mu.epochs...)
	l.rmu.Unlock()
	return nil
}

// truncateEpochsFromEndLocked drops entries starting at or after end.
func (l *Log) truncateEpochsFromEndLocked(end int64) bool {
	es := l.mu.epochs
	n := len(es)
	for n > 0 && es[n-1].StartOffset >= end {
		n--
	}
	if n == len(es) {
		return false
	}
	l.mu.epochs = es[:n]
	return true
}

// truncateEpochsFromStartLocked drops entries wholly before start, moving
// the start of the entry covering start up to it.
func (l *Log) truncateEpochsFromStartLocked(start int64) bool {
	es := l.mu.epochs
	i := 0
	for i+1 < len(es) && es[i+1].StartOffset <= start {
		i++
	}
	if len(es) == 0 || (i == 0 && es[0].StartOffset >= start) {
		return false
	}
	out := append([]EpochEntry(nil), es[i:]...)
	if out[0].StartOffset < start {
		out[0].StartOffset = start
	}
	l.mu.epochs = out
	return true
}

// FollowerTruncation is where a follower truncates its log before it
// fetches, as Kafka's AbstractFetcherThread.getOffsetTruncationState
// decides it (KIP-101, with KIP-279's fix for fast leader changes). es is
// the follower's leader-epoch cache (oldest first), logEnd its log end
// offset and highWatermark its high watermark; (leaderEpoch,
// leaderEndOffset) is the leader's OffsetForLeaderEpoch answer for the
// follower's latest epoch.
//
//   - A follower without epochs does not ask: it truncates to its high
//     watermark, as does one whose leader answers an undefined end offset.
//   - A leader answering the undefined epoch with an end offset: the
//     smaller of that and the log end.
//   - A leader answering an epoch the follower also has: the smallest of
//     the leader's end offset, the follower's end of that epoch and its
//     log end.
//   - A leader answering an epoch the follower lacks (KIP-279): the
//     follower's end of the largest epoch below it (or the log end), and
//     done is false: the follower truncates there and asks again for its
//     new latest epoch, until the two agree on a common epoch.
//   - A leader answering an epoch above all of the follower's: the
//     smaller of the leader's end offset and the log end.
func FollowerTruncation(es []EpochEntry, logEnd, highWatermark int64, leaderEpoch int32, leaderEndOffset int64) (offset int64, done bool) {
	if len(es) == 0 || leaderEndOffset == -1 {
		return min(highWatermark, logEnd), true
	}
	if leaderEpoch == -1 {
		return min(leaderEndOffset, logEnd), true
	}
	epoch, end := EndOffsetFor(es, leaderEpoch, logEnd)
	switch {
	case end == -1:
		return min(leaderEndOffset, logEnd), true
	case epoch != leaderEpoch:
		return min(end, logEnd), false
	}
	return min(end, leaderEndOffset, logEnd), true
}

// LatestEpoch is the latest epoch of the cache es, -1 when it is empty:
// the epoch a follower asks its leader about.
func LatestEpoch(es []EpochEntry) int32 {
	if len(es) == 0 {
		return -1
	}
	return es[len(es)-1].Epoch
}
