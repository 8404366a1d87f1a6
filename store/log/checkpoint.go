package log

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/klogdev/klog/store/vfs"
)

// File names Kafka uses inside a partition directory and a data directory.
const (
	LeaderEpochCheckpointFile = "leader-epoch-checkpoint"
	PartitionMetadataFile     = "partition.metadata"
	RecoveryPointCheckpoint   = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpoint  = "log-start-offset-checkpoint"
	// ReplicationOffsetCheckpoint holds each partition's high watermark,
	// as Kafka's ReplicaManager checkpoints it.
	ReplicationOffsetCheckpoint = "replication-offset-checkpoint"
	// CleanerOffsetCheckpoint holds each compacted log's first dirty
	// offset, as Kafka's LogCleanerManager checkpoints it.
	CleanerOffsetCheckpoint = "cleaner-offset-checkpoint"
	CleanShutdownFile       = ".kafka_cleanshutdown"
)

// writeFileAtomic replaces name with data durably: temp file, fsync,
// rename, fsync of the directory.
func writeFileAtomic(fsys vfs.FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return fmt.Errorf("rename %s: %w", name, err)
	}
	if err := fsys.SyncDir(path.Dir(name)); err != nil {
		return fmt.Errorf("sync dir of %s: %w", name, err)
	}
	return nil
}

// readFile reads a whole (small) file; a missing file returns fs.ErrNotExist.
func readFile(fsys vfs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > limit {
		return nil, fmt.Errorf("%w: %s is %d bytes, limit %d", ErrCorrupt, name, size, limit)
	}
	b := make([]byte, size)
	if err := readFull(f, b, 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

const maxCheckpointBytes = 64 << 20

// parseCheckpoint splits a "version, count, entries" checkpoint file into
// entry lines, each with fields fields. As in Kafka's CheckpointFile, a
// file that ends before the count (Kafka creates cleaner-offset-checkpoint
// empty) has no entries.
func parseCheckpoint(b []byte, fields int) ([][]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if strings.TrimSpace(lines[0]) != "0" {
		return nil, fmt.Errorf("%w: checkpoint version %q", ErrCorrupt, lines[0])
	}
	if len(lines) < 2 {
		return nil, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(lines[1]))
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("%w: checkpoint count %q with %d entries", ErrCorrupt, lines[1], len(lines)-2)
	}
	out := make([][]string, 0, n)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != fields {
			return nil, fmt.Errorf("%w: checkpoint line %q", ErrCorrupt, l)
		}
		out = append(out, f)
	}
	return out, nil
}

// EpochEntry is one leader-epoch-checkpoint entry: the first offset written
// in a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

func encodeEpochs(es []EpochEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(es))
	for _, e := range es {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b.Bytes()
}

func readEpochs(fsys vfs.FS, name string) ([]EpochEntry, error) {
	b, err := readFile(fsys, name, maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	es, err := parseEpochs(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return es, nil
}

// parseEpochs decodes a leader-epoch-checkpoint file: epochs strictly
// increasing, start offsets not decreasing.
func parseEpochs(b []byte) ([]EpochEntry, error) {
	lines, err := parseCheckpoint(b, 2)
	if err != nil {
		return nil, err
	}
	es := make([]EpochEntry, 0, len(lines))
	for _, f := range lines {
		ep, err1 := strconv.ParseInt(f[0], 10, 32)
		off, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || ep < 0 || off < 0 {
			return nil, fmt.Errorf("%w: entry %q", ErrCorrupt, f)
		}
		if n := len(es); n > 0 && (int32(ep) <= es[n-1].Epoch || off < es[n-1].StartOffset) {
			return nil, fmt.Errorf("%w: entries out of order", ErrCorrupt)
		}
		es = append(es, EpochEntry{Epoch: int32(ep), StartOffset: off})
	}
	return es, nil
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Dir is the directory name of the partition: "<topic>-<partition>".
func (tp TopicPartition) Dir() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// parsePartitionDir is the inverse of TopicPartition.Dir.
func parsePartitionDir(name string) (TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 || strconv.Itoa(int(p)) != name[i+1:] {
		return TopicPartition{}, false
	}
	return TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}

func encodeOffsetCheckpoint(m map[TopicPartition]int64) []byte {
	tps := make([]TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&b, "%s %d %d\n", tp.Topic, tp.Partition, m[tp])
	}
	return b.Bytes()
}

// readOffsetCheckpoint reads a recovery-point or log-start checkpoint; a
// missing file is an empty map.
func readOffsetCheckpoint(fsys vfs.FS, name string) (map[TopicPartition]int64, error) {
	b, err := readFile(fsys, name, maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := parseOffsetCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// parseOffsetCheckpoint decodes a "topic partition offset" checkpoint file.
func parseOffsetCheckpoint(b []byte) (map[TopicPartition]int64, error) {
	lines, err := parseCheckpoint(b, 3)
	if err != nil {
		return nil, err
	}
	m := make(map[TopicPartition]int64, len(lines))
	for _, f := range lines {
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 || off < 0 {
			return nil, fmt.Errorf("%w: entry %q", ErrCorrupt, f)
		}
		m[TopicPartition{Topic: f[0], Partition: int32(p)}] = off
	}
	return m, nil
}

// encodePartitionMetadata writes partition.metadata as Kafka does: two
// lines, the second without a final newline; the topic ID is base64 URL
// encoding without padding.
func encodePartitionMetadata(id [16]byte) []byte {
	return []byte("version: 0\ntopic_id: " + topicIDString(id))
}

// topicIDString is a topic ID as Kafka writes one: unpadded URL-safe
// base64.
func topicIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func parsePartitionMetadata(b []byte) ([16]byte, error) {
	var id [16]byte
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" {
		return id, fmt.Errorf("%w: partition.metadata header", ErrCorrupt)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "topic_id: ")
	if !ok {
		return id, fmt.Errorf("%w: partition.metadata topic_id line", ErrCorrupt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) != 16 {
		return id, fmt.Errorf("%w: partition.metadata topic id %q", ErrCorrupt, v)
	}
	copy(id[:], raw)
	return id, nil
}
