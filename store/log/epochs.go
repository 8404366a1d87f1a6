package log

import "path"

// LeaderEpochs returns the leader epoch cache, oldest first.
func (l *Log) LeaderEpochs() []EpochEntry {
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	return append([]EpochEntry(nil), l.rmu.epochs...)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch <= epoch
// and the offset where the next higher epoch starts (the log end for the
// latest epoch). Unknown epochs give (-1, -1).
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	es := l.rmu.epochs
	if epoch < 0 || len(es) == 0 {
		return -1, -1
	}
	if es[len(es)-1].Epoch == epoch {
		return epoch, l.end.Load()
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
