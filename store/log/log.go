package log

import (
	"errors"
	"fmt"
	"log/slog"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// Log is one partition's log: a directory of segments.
//
// Locking: mu serialises writers (Append, roll, flush, truncation, retention,
// close). Readers (Read, offsets, OffsetForTimestamp, ...) take no Log lock:
// they load the segment list and end offset atomically and pin a segment
// with a reference count while reading its file. Lock order: Log.mu, then
// segment.imu.
type Log struct {
	fs     vfs.FS
	dir    string
	logger *slog.Logger
	now    func() time.Time
	onRoll func(Roll)

	segs  atomic.Pointer[[]*segment] // immutable slice, replaced on change
	end   atomic.Int64               // log end offset
	start atomic.Int64               // log start offset
	fuo   atomic.Int64               // first unstable offset, -1 none

	mu struct {
		sync.Mutex
		cfg           Config
		closed        bool
		failed        *IOError
		epochs        []EpochEntry
		recoveryPoint int64
		unflushedMsgs int64
		lastFlush     time.Time
		infos         []batchInfo // scratch for Append
		producers     producerState
		// verifying holds, by producer id, the lowest sequence of the
		// transactional batches this leader has started verifying with
		// the transaction coordinator and not yet appended (Kafka's
		// VerificationStateEntry): see StartVerification.
		verifying map[int64]verification
		pending   []pendingProducer // scratch for Append
		events    []txnEvent        // scratch for Append
		buf       []byte            // scratch for index and recovery I/O
	}
	// Readers of these use rmu, so Segments/LeaderEpochs do not wait on a
	// long write.
	dec record.Decompressor
	// epochsRebuilt is set during Open when recovery changed the epoch
	// cache, so that it is written back.
	epochsRebuilt bool

	rmu struct {
		sync.RWMutex
		epochs []EpochEntry
		cfg    Config
	}

	// cleaner is the log cleaner's state of this log (cleaner.go). Lock
	// order: Log.mu, then cleaner's mutex.
	cleaner cleanerInfo

	// gsync is the group commit of SyncTo (sync.go). Lock order: Log.mu,
	// then gsync.mu.
	gsync groupSync
}

// Options are the per-open parameters of a Log.
type Options struct {
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// RecoveryPoint is the offset up to which data is known flushed;
	// segments that may hold offsets >= it are re-scanned on open.
	RecoveryPoint int64
	// LogStartOffset is the log start offset from the node's checkpoint.
	LogStartOffset int64
	// CleanerCheckpoint is the first dirty offset from
	// cleaner-offset-checkpoint; 0 (or anything outside the log) means the
	// log start.
	CleanerCheckpoint int64
	// OnRoll, when set, is told of each roll of the active segment. It
	// is called with the log's lock held: it must return quickly and not
	// call into the log.
	OnRoll func(Roll)
}

// Roll is a roll of a log's active segment.
type Roll struct {
	// Reason is the limit the segment reached: segment.bytes,
	// segment.ms, segment.index.bytes or relative offset overflow.
	Reason string
	// OldBase is the base offset of the segment rolled, NewBase that of
	// the new active segment.
	OldBase, NewBase int64
	Time             time.Time
}

// SegmentInfo is a snapshot of one segment for observability, the
// in-memory counterpart of what klog log segments reads from the files
// (store/log/dump.SegmentInfo). The log does not count a segment's
// batches or records; the dump walks the file for them.
type SegmentInfo struct {
	BaseOffset       int64
	NextOffset       int64 // offset after the last batch; BaseOffset when empty
	Size             int64
	IndexEntries     int
	TimeIndexEntries int
	// AbortedTxns counts the segment's transaction index entries.
	AbortedTxns int
	// FirstTimestamp is the first batch's max timestamp (what segment.ms
	// rolls by), MaxTimestamp the largest of all (what retention.ms
	// deletes by); -1 when empty.
	FirstTimestamp int64
	MaxTimestamp   int64
	Active         bool
	Created        time.Time
}

// Open opens (creating if needed) the log in dir and recovers it.
func Open(fsys vfs.FS, dir string, cfg Config, opts Options) (*Log, error) {
	l := &Log{fs: fsys, dir: dir, logger: opts.Logger, now: opts.Now, onRoll: opts.OnRoll}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.logger = l.logger.With("log", path.Base(dir))
	cfg = cfg.sanitized()
	l.mu.cfg, l.rmu.cfg = cfg, cfg
	l.cleaner.state.FirstDirtyOffset = opts.CleanerCheckpoint
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	if err := l.load(opts); err != nil {
		for _, s := range l.segments() {
			s.closeFiles()
		}
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	// What recovery found is on disk.
	l.gsync.synced = l.end.Load()
	return l, nil
}

func (l *Log) segments() []*segment {
	if p := l.segs.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *Log) publish(segs []*segment) { l.segs.Store(&segs) }

func (l *Log) active() *segment {
	segs := l.segments()
	return segs[len(segs)-1]
}

// segmentFor returns the index of the last segment with base <= offset (0
// when offset lies before the first segment).
func segmentFor(segs []*segment, offset int64) int {
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if segs[m].base <= offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}

// Dir returns the log's directory.
func (l *Log) Dir() string { return l.dir }

// SetConfig applies altered topic settings to future operations.
func (l *Log) SetConfig(cfg Config) {
	cfg = cfg.sanitized()
	l.mu.Lock()
	l.mu.cfg = cfg
	l.mu.Unlock()
	l.rmu.Lock()
	l.rmu.cfg = cfg
	l.rmu.Unlock()
}

// Config returns the settings in force.
func (l *Log) Config() Config {
	l.rmu.RLock()
	defer l.rmu.RUnlock()
	return l.rmu.cfg
}

// StartOffset returns the log start offset.
func (l *Log) StartOffset() int64 { return l.start.Load() }

// EndOffset returns the log end offset: the next offset to be assigned.
func (l *Log) EndOffset() int64 { return l.end.Load() }

// RecoveryPoint returns the offset below which all data is fsynced.
func (l *Log) RecoveryPoint() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.recoveryPoint
}

func (l *Log) writableLocked() error {
	if l.mu.closed {
		return ErrClosed
	}
	if l.mu.failed != nil {
		return l.mu.failed
	}
	return nil
}

// failLocked makes err sticky and returns the sticky error.
func (l *Log) failLocked(op string, err error) error {
	if l.mu.failed == nil {
		l.mu.failed = &IOError{Op: op, Err: err}
		l.logger.Error("log failed, refusing further writes", "op", op, "err", err)
	}
	return l.mu.failed
}

// Size is the log's size in bytes, its segments' files together (the
// indexes not counted), as Kafka's UnifiedLog.size.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segments() {
		n += s.size.Load()
	}
	return n
}

// Segments returns a snapshot of the segments, oldest first.
func (l *Log) Segments() []SegmentInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	segs := l.segments()
	out := make([]SegmentInfo, len(segs))
	for i, s := range segs {
		s.imu.RLock()
		out[i] = SegmentInfo{
			BaseOffset:       s.base,
			NextOffset:       s.next,
			Size:             s.size.Load(),
			IndexEntries:     len(s.imu.offsets),
			TimeIndexEntries: len(s.imu.times),
			AbortedTxns:      len(s.imu.aborted),
			FirstTimestamp:   s.rollBaseTs,
			MaxTimestamp:     s.maxTs,
			Active:           i == len(segs)-1,
			Created:          s.created,
		}
		s.imu.RUnlock()
	}
	return out
}

// Close flushes and closes the log. Later calls return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return ErrClosed
	}
	var err error
	if l.mu.failed == nil {
		act := l.active()
		act.imu.Lock()
		act.maybeAppendTimeLocked()
		act.imu.Unlock()
		act.dirty = true
		err = l.flushLocked()
		if err == nil {
			// A snapshot at the log end: the next open replays nothing.
			err = l.writeSnapshotLocked(l.end.Load())
		}
	}
	l.mu.closed = true
	l.dec.Close()
	for _, s := range l.segments() {
		s.release()
	}
	if err == nil && l.mu.failed != nil {
		err = l.mu.failed
	}
	return err
}

// Delete closes the log and removes its directory.
func (l *Log) Delete() error {
	if err := l.Close(); err != nil && !errors.Is(err, ErrClosed) {
		var ioe *IOError
		if !errors.As(err, &ioe) {
			return err
		}
	}
	if err := l.fs.RemoveAll(l.dir); err != nil {
		return fmt.Errorf("delete log %s: %w", l.dir, err)
	}
	if err := l.fs.SyncDir(path.Dir(l.dir)); err != nil {
		return fmt.Errorf("delete log %s: %w", l.dir, err)
	}
	return nil
}
