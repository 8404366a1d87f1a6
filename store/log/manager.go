package log

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klogdev/klog/store/vfs"
)

// Manager owns every partition log of one data directory and the node-level
// checkpoint files.
type Manager struct {
	fs        vfs.FS // files, the open ones capped
	files     *vfs.LimitFS
	dir       string
	logger    *slog.Logger
	now       func() time.Time
	configFor func(topic string) Config
	onRoll    func(TopicPartition, Roll)

	mu struct {
		sync.Mutex
		logs   map[TopicPartition]*Log
		ids    map[TopicPartition][16]byte
		closed bool
		// hws is replication-offset-checkpoint as read at open.
		hws map[TopicPartition]int64
		// written holds what each checkpoint file of the data directory
		// was last written with, so that a tick with nothing new writes
		// nothing (writeCheckpointLocked).
		written map[string][]byte
	}
}

// ManagerOptions configure OpenManager.
type ManagerOptions struct {
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// ConfigFor returns the settings of a topic when its logs are opened at
	// start-up; nil means DefaultConfig for every topic.
	ConfigFor func(topic string) Config
	// MaxOpenFiles caps the files the Manager and its logs keep open at
	// once, all partitions together; 0 means DefaultMaxOpenFiles(). See
	// "Open files" in the package doc.
	MaxOpenFiles int
	// OnRoll, when set, is told of each roll of a log's active segment,
	// with the log's lock held (see Options.OnRoll).
	OnRoll func(TopicPartition, Roll)
	// TopicID, when set, returns a topic's ID in the cluster metadata,
	// false when the cluster has no topic of that name. OpenManager then
	// does not open a stray log, one whose partition.metadata names a
	// topic ID the cluster does not have under its name: the topic was
	// deleted, or deleted and created again, while the node was away, or
	// the directory came from another cluster. It renames the directory
	// "<topic>-<partition>.<topic id>-stray", which later opens ignore,
	// and logs a warning; the data stays for the operator to remove.
	// Kafka's LogManager moves its stray logs aside the same way. A log
	// without partition.metadata is opened: Create records its ID.
	TopicID func(topic string) ([16]byte, bool)
}

// rollHook is the OnRoll of tp's log: the Manager's, told tp.
func (m *Manager) rollHook(tp TopicPartition) func(Roll) {
	if m.onRoll == nil {
		return nil
	}
	return func(r Roll) { m.onRoll(tp, r) }
}

// DefaultMaxOpenFiles is the cap on open files of a Manager opened without
// one: half the process's limit on file descriptors (RLIMIT_NOFILE), which
// leaves the other half to connections, the metadata store and the rest;
// at least minDefaultOpenFiles, and maxDefaultOpenFiles when the limit is
// unknown or larger. A limit below 2*minDefaultOpenFiles gets
// minDefaultOpenFiles all the same: the node must start.
func DefaultMaxOpenFiles() int {
	n := vfs.NoFileLimit() / 2
	if n == 0 || n > maxDefaultOpenFiles {
		return maxDefaultOpenFiles
	}
	return max(int(n), minDefaultOpenFiles)
}

const (
	minDefaultOpenFiles = 16
	maxDefaultOpenFiles = 1 << 20
)

// OpenManager opens the data directory dir, creating it if needed, and
// recovers every partition directory ("<topic>-<partition>") in it. After a
// clean shutdown (the marker file written by Close is present) no segment is
// re-scanned; otherwise each log re-scans from its checkpointed recovery
// point. Unrelated files and directories are ignored. Files are opened
// through a vfs.LimitFS of opts.MaxOpenFiles.
func OpenManager(fsys vfs.FS, dir string, opts ManagerOptions) (*Manager, error) {
	m := newManager(fsys, dir, opts)
	if err := m.fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("open data dir %s: %w", dir, err)
	}
	var cps recoveryCheckpoints
	cps.recoveryPoints = m.readCheckpoint(RecoveryPointCheckpoint, "recovery point checkpoint unreadable, recovering every log fully")
	cps.starts = m.readCheckpoint(LogStartOffsetCheckpoint, "log start checkpoint unreadable, using segment bases")
	m.mu.hws = m.readCheckpoint(ReplicationOffsetCheckpoint, "replication offset checkpoint unreadable, high watermarks start at the log start")
	cps.cleaned = m.readCheckpoint(CleanerOffsetCheckpoint, "cleaner offset checkpoint unreadable, compacted logs are cleaned again from their start")
	clean := false
	if _, err := m.fs.Stat(path.Join(dir, CleanShutdownFile)); err == nil {
		clean = true
	}
	names, err := PartitionDirs(m.fs, dir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if err := m.openPartitionDir(n, opts.TopicID, cps, clean); err != nil {
			_ = m.closeLogs()
			return nil, err
		}
	}
	if clean {
		if err := m.removeCleanShutdownMarker(); err != nil {
			_ = m.closeLogs()
			return nil, err
		}
	}
	return m, nil
}

// newManager returns a manager of dir with no logs open, its files opened
// through a vfs.LimitFS over fsys and the options' defaults filled in.
func newManager(fsys vfs.FS, dir string, opts ManagerOptions) *Manager {
	maxOpen := opts.MaxOpenFiles
	if maxOpen <= 0 {
		maxOpen = DefaultMaxOpenFiles()
	}
	files := vfs.LimitOpen(fsys, maxOpen)
	m := &Manager{fs: files, files: files, dir: dir, logger: opts.Logger, now: opts.Now, configFor: opts.ConfigFor, onRoll: opts.OnRoll}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.configFor == nil {
		m.configFor = func(string) Config { return DefaultConfig() }
	}
	m.mu.logs = map[TopicPartition]*Log{}
	m.mu.ids = map[TopicPartition][16]byte{}
	return m
}

// recoveryCheckpoints are the per-partition checkpoints OpenManager hands
// to each log it opens.
type recoveryCheckpoints struct {
	recoveryPoints, starts, cleaned map[TopicPartition]int64
}

// readCheckpoint reads the offset checkpoint file name of the data
// directory. An unreadable one is logged with warning and read as empty.
func (m *Manager) readCheckpoint(name, warning string) map[TopicPartition]int64 {
	offsets, err := readOffsetCheckpoint(m.fs, path.Join(m.dir, name))
	if err != nil {
		m.logger.Warn(warning, "err", err)
		return map[TopicPartition]int64{}
	}
	return offsets
}

// openPartitionDir opens and recovers the log in the partition directory
// n, and adds it to the manager. A directory whose topic id is not the one
// topicID gives for its topic (nil: every id is right) is moved aside
// instead. After a clean shutdown the log trusts all its segments;
// otherwise it re-scans from its recovery point in cps.
func (m *Manager) openPartitionDir(n string, topicID func(string) ([16]byte, bool), cps recoveryCheckpoints, clean bool) error {
	tp, _ := parsePartitionDir(n)
	id, hasID := m.readTopicID(path.Join(m.dir, n))
	if hasID && topicID != nil {
		if want, ok := topicID(tp.Topic); !ok || want != id {
			return m.moveAside(n, id)
		}
	}
	rp := cps.recoveryPoints[tp]
	if clean {
		rp = math.MaxInt64
	}
	l, err := Open(m.fs, path.Join(m.dir, n), m.configFor(tp.Topic), Options{
		Logger: m.logger, Now: m.now, RecoveryPoint: rp, LogStartOffset: cps.starts[tp],
		CleanerCheckpoint: cps.cleaned[tp], OnRoll: m.rollHook(tp),
	})
	if err != nil {
		return err
	}
	m.mu.logs[tp] = l
	if hasID {
		m.mu.ids[tp] = id
	}
	return nil
}

// removeCleanShutdownMarker removes the clean shutdown marker once the
// logs are open: it only vouches for the shutdown that wrote it.
func (m *Manager) removeCleanShutdownMarker() error {
	if err := m.fs.Remove(path.Join(m.dir, CleanShutdownFile)); err != nil {
		return fmt.Errorf("remove clean shutdown marker: %w", err)
	}
	if err := m.fs.SyncDir(m.dir); err != nil {
		return fmt.Errorf("sync data dir: %w", err)
	}
	return nil
}

// readTopicID reads the topic ID in the partition.metadata of the log
// directory dir; false when there is none or it is unreadable (logged).
func (m *Manager) readTopicID(dir string) ([16]byte, bool) {
	b, err := readFile(m.fs, path.Join(dir, PartitionMetadataFile), 4096)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.logger.Warn("partition.metadata unreadable", "dir", dir, "err", err)
		}
		return [16]byte{}, false
	}
	id, err := parsePartitionMetadata(b)
	if err != nil {
		m.logger.Warn("partition.metadata unreadable", "dir", dir, "err", err)
		return [16]byte{}, false
	}
	return id, true
}

// moveAside moves the stray log directory name, of topic ID id, to
// "<name>.<id>-stray" (see ManagerOptions.TopicID), file by file, as
// vfs.FS renames files only. partition.metadata goes last: a crash
// part-way leaves it in name, which the next open finds stray again and
// finishes moving.
func (m *Manager) moveAside(name string, id [16]byte) error {
	from := path.Join(m.dir, name)
	to := path.Join(m.dir, name+"."+topicIDString(id)+"-stray")
	files, err := m.fs.List(from)
	if err != nil {
		return fmt.Errorf("move stray log %s aside: %w", name, err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == PartitionMetadataFile })
	files = append(files, PartitionMetadataFile)
	if err := m.fs.MkdirAll(to); err != nil {
		return fmt.Errorf("move stray log %s aside: %w", name, err)
	}
	for _, f := range files {
		if err := m.fs.Rename(path.Join(from, f), path.Join(to, f)); err != nil {
			return fmt.Errorf("move stray log %s aside: %w", name, err)
		}
	}
	for _, step := range []func() error{
		func() error { return m.fs.SyncDir(to) },
		func() error { return m.fs.SyncDir(from) },
		func() error { return m.fs.Remove(from) },
		func() error { return m.fs.SyncDir(m.dir) },
	} {
		if err := step(); err != nil {
			return fmt.Errorf("move stray log %s aside: %w", name, err)
		}
	}
	m.logger.Warn("stray log moved aside: the cluster has no topic of its topic id under its name; remove the directory when its data is not wanted",
		"dir", to)
	return nil
}

// OpenFiles returns how many files the Manager's logs have open and the
// most they may have open at once.
func (m *Manager) OpenFiles() (open, maxOpen int) {
	return m.files.OpenFiles(), m.files.MaxOpen()
}

func (m *Manager) closeLogs() error {
	var errs []error
	for _, l := range m.mu.logs {
		if err := l.Close(); err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Get returns the log of a partition, or nil.
func (m *Manager) Get(topic string, partition int32) *Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.logs[TopicPartition{topic, partition}]
}

// Create returns the partition's log, creating it (and its
// partition.metadata) when absent. An existing log of another topic ID
// is refused with ErrInconsistentTopicID, as Kafka's Partition refuses
// it: its records are another topic's. An existing log without
// partition.metadata gets one, of topicID.
func (m *Manager) Create(topic string, partition int32, topicID [16]byte, cfg Config) (*Log, error) {
	tp := TopicPartition{topic, partition}
	if topic == "" || partition < 0 || topic == "." || topic == ".." || containsSlash(topic) {
		return nil, fmt.Errorf("create log: invalid partition %q/%d", topic, partition)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, ErrClosed
	}
	if l := m.mu.logs[tp]; l != nil {
		id, ok := m.mu.ids[tp]
		if ok && id != topicID {
			return nil, fmt.Errorf("%w: the log of %s holds topic id %s, not %s", ErrInconsistentTopicID, tp.Dir(),
				topicIDString(id), topicIDString(topicID))
		}
		if !ok {
			if err := writeFileAtomic(m.fs, path.Join(m.dir, tp.Dir(), PartitionMetadataFile), encodePartitionMetadata(topicID)); err != nil {
				return nil, err
			}
			m.mu.ids[tp] = topicID
		}
		return l, nil
	}
	dir := path.Join(m.dir, tp.Dir())
	l, err := Open(m.fs, dir, cfg, Options{Logger: m.logger, Now: m.now, OnRoll: m.rollHook(tp)})
	if err != nil {
		return nil, err
	}
	if err := m.fs.SyncDir(m.dir); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("create log %s: %w", tp.Dir(), err)
	}
	if err := writeFileAtomic(m.fs, path.Join(dir, PartitionMetadataFile), encodePartitionMetadata(topicID)); err != nil {
		_ = l.Close()
		return nil, err
	}
	m.mu.logs[tp] = l
	m.mu.ids[tp] = topicID
	return l, nil
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == '\\' || s[i] == 0 {
			return true
		}
	}
	return false
}

// TopicID returns the topic ID recorded in the partition's
// partition.metadata.
func (m *Manager) TopicID(topic string, partition int32) ([16]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.mu.ids[TopicPartition{topic, partition}]
	return id, ok
}

// Delete closes a partition's log and removes its directory. Deleting an
// absent partition is a no-op.
func (m *Manager) Delete(topic string, partition int32) error {
	tp := TopicPartition{topic, partition}
	m.mu.Lock()
	l := m.mu.logs[tp]
	delete(m.mu.logs, tp)
	delete(m.mu.ids, tp)
	delete(m.mu.hws, tp) // a partition created again starts afresh
	m.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.Delete()
}

// Logs returns a copy of the partition-to-log map.
func (m *Manager) Logs() map[TopicPartition]*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[TopicPartition]*Log, len(m.mu.logs))
	for tp, l := range m.mu.logs {
		out[tp] = l
	}
	return out
}

// Checkpoint writes recovery-point-offset-checkpoint and
// log-start-offset-checkpoint for every log.
func (m *Manager) Checkpoint() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	return m.checkpointLocked()
}

func (m *Manager) checkpointLocked() error {
	rps := make(map[TopicPartition]int64, len(m.mu.logs))
	starts := make(map[TopicPartition]int64, len(m.mu.logs))
	for tp, l := range m.mu.logs {
		rps[tp] = l.RecoveryPoint()
		starts[tp] = l.StartOffset()
	}
	if err := m.writeCheckpointLocked(RecoveryPointCheckpoint, encodeOffsetCheckpoint(rps)); err != nil {
		return err
	}
	if err := m.writeCleanerCheckpointLocked(); err != nil {
		return err
	}
	return m.writeCheckpointLocked(LogStartOffsetCheckpoint, encodeOffsetCheckpoint(starts))
}

// writeCheckpointLocked replaces the checkpoint file name of the data
// directory with data, unless this Manager last wrote it with the same
// bytes: an idle node's maintenance ticks would otherwise rewrite and
// fsync every checkpoint each second for nothing. The caller holds m.mu.
func (m *Manager) writeCheckpointLocked(name string, data []byte) error {
	if prev, ok := m.mu.written[name]; ok && bytes.Equal(prev, data) {
		return nil
	}
	// A failed write leaves the file unknown: the next one writes.
	delete(m.mu.written, name)
	if err := writeFileAtomic(m.fs, path.Join(m.dir, name), data); err != nil {
		return err
	}
	if m.mu.written == nil {
		m.mu.written = map[string][]byte{}
	}
	m.mu.written[name] = data
	return nil
}

// WriteFile replaces the file name at the top of the data directory with
// data, durably (a temporary file, fsync, rename, fsync of the
// directory): for small state of the node's own beside the checkpoints.
// name is a plain file name.
func (m *Manager) WriteFile(name string, data []byte) error {
	if err := topFileName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	return writeFileAtomic(m.fs, path.Join(m.dir, name), data)
}

// ReadFile reads the file name at the top of the data directory, written
// by WriteFile: fs.ErrNotExist when there is none, ErrCorrupt when it
// holds more than limit bytes.
func (m *Manager) ReadFile(name string, limit int64) ([]byte, error) {
	if err := topFileName(name); err != nil {
		return nil, err
	}
	return readFile(m.fs, path.Join(m.dir, name), limit)
}

// topFileName refuses a name that is not a plain file name.
func topFileName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
		return fmt.Errorf("log: %q is not a file name", name)
	}
	return nil
}

// CheckpointedHighWatermark is the high watermark of topic/partition in
// replication-offset-checkpoint as it was when the Manager opened; false
// when it had none.
func (m *Manager) CheckpointedHighWatermark(topic string, partition int32) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	hw, ok := m.mu.hws[TopicPartition{topic, partition}]
	return hw, ok
}

// CheckpointHighWatermarks replaces replication-offset-checkpoint with
// hws, the high watermark of every partition the broker holds. Kafka's
// ReplicaManager writes it every replica.high.watermark.checkpoint.interval.ms
// and at shutdown; a replica that restarts takes its high watermark from
// it, not from its log end, which may hold records never committed.
func (m *Manager) CheckpointHighWatermarks(hws map[TopicPartition]int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	return m.writeCheckpointLocked(ReplicationOffsetCheckpoint, encodeOffsetCheckpoint(hws))
}

// Maintain runs one maintenance pass over every log: segment.ms rolls and
// flush.ms flushes, then the checkpoints. Errors are logged (a failed log
// stays failed and reports itself on its next write). Retention
// (ApplyRetention) and producer expiry (ExpireProducers) have their own
// intervals.
func (m *Manager) Maintain(now time.Time) {
	for tp, l := range m.Logs() {
		if err := l.MaybeRoll(now); err != nil && !errors.Is(err, ErrClosed) {
			m.logger.Warn("segment roll failed", "partition", tp.Dir(), "err", err)
		}
		if err := l.maybeFlushOnTime(now); err != nil {
			m.logger.Warn("flush failed", "partition", tp.Dir(), "err", err)
		}
	}
	m.checkpointLogged()
}

// ApplyRetention runs Log.ApplyRetention on every log, the pass a node
// runs every log.retention.check.interval.ms, then the checkpoints (the
// log start offsets moved). Errors are logged.
func (m *Manager) ApplyRetention(now time.Time) {
	for tp, l := range m.Logs() {
		if n, err := l.ApplyRetention(now); err != nil && !errors.Is(err, ErrClosed) {
			m.logger.Warn("retention failed", "partition", tp.Dir(), "err", err)
		} else if n > 0 {
			m.logger.Info("deleted segments by retention", "partition", tp.Dir(), "segments", n, "log_start_offset", l.StartOffset())
		}
	}
	m.checkpointLogged()
}

func (m *Manager) checkpointLogged() {
	if err := m.Checkpoint(); err != nil && !errors.Is(err, ErrClosed) {
		m.logger.Warn("checkpoint failed", "err", err)
	}
}

// Close flushes and closes every log, writes the checkpoints and, when all
// of that succeeded, the clean-shutdown marker.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	m.mu.closed = true
	err := m.closeLogs()
	if cerr := m.checkpointLocked(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return err
	}
	return writeFileAtomic(m.fs, path.Join(m.dir, CleanShutdownFile), nil)
}
