package log

import "time"

// Flush fsyncs every segment with unflushed data and advances the recovery
// point to the log end.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	for _, s := range l.segments() {
		if s.dirty {
			if err := l.flushSegmentLocked(s); err != nil {
				return err
			}
		}
	}
	l.mu.recoveryPoint = l.end.Load()
	l.mu.unflushedMsgs = 0
	l.mu.lastFlush = l.now()
	return nil
}

func (l *Log) flushSegmentLocked(s *segment) error {
	var err error
	l.mu.buf, err = s.flushLocked(l.mu.buf)
	if err != nil {
		return l.failLocked("sync", err)
	}
	return nil
}

// maybeFlushOnTime flushes when flush.ms has passed since the last flush.
func (l *Log) maybeFlushOnTime(now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed || l.mu.failed != nil || l.mu.unflushedMsgs == 0 {
		return nil
	}
	if now.Sub(l.mu.lastFlush).Milliseconds() < l.mu.cfg.FlushMs {
		return nil
	}
	return l.flushLocked()
}
