package dump

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klogdev/klog/store/log"
)

// SegmentInfo summarises one segment of a partition, from its batch
// headers and the entry counts of its indexes.
type SegmentInfo struct {
	File       string `json:"file"`
	BaseOffset int64  `json:"base_offset"`
	LastOffset int64  `json:"last_offset"` // -1 when the segment is empty
	Size       int64  `json:"size"`
	Batches    int    `json:"batches"`
	// Records is the sum of the batches' record counts.
	Records int64 `json:"records"`
	// FirstTimestamp is the first batch's max timestamp (what segment.ms
	// rolls by), MaxTimestamp the largest of all (what retention.ms
	// deletes by); -1 when there is no batch.
	FirstTimestamp int64 `json:"first_timestamp"`
	MaxTimestamp   int64 `json:"max_timestamp"`
	// IndexEntries, TimeIndexEntries and AbortedTxns count the entries of
	// the .index, .timeindex and .txnindex files; -1 for a file missing.
	IndexEntries     int `json:"index_entries"`
	TimeIndexEntries int `json:"time_index_entries"`
	AbortedTxns      int `json:"aborted_txns"`
	// Problems are what kept the summary from reading a file whole: a
	// batch that stopped the walk, an index that does not decode. Run
	// Verify for a full check.
	Problems []string `json:"problems,omitempty"`
}

// Partition summarises a partition directory.
type Partition struct {
	Dir       string `json:"dir"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	TopicID   string `json:"topic_id,omitempty"`
	// LogStartOffset, RecoveryPoint, HighWatermark and CleanerCheckpoint
	// (the log cleaner's first dirty offset) come from the data
	// directory's checkpoint files; nil when a file lacks the partition.
	LogStartOffset    *int64 `json:"log_start_offset"`
	RecoveryPoint     *int64 `json:"recovery_point"`
	HighWatermark     *int64 `json:"high_watermark"`
	CleanerCheckpoint *int64 `json:"cleaner_checkpoint"`
	// LogEndOffset is the offset after the last batch.
	LogEndOffset int64         `json:"log_end_offset"`
	Size         int64         `json:"size"`
	Segments     []SegmentInfo `json:"segments"`
	// Snapshots are the offsets of the producer snapshots.
	Snapshots    []int64      `json:"snapshots"`
	LeaderEpochs []EpochEntry `json:"leader_epochs"`
	Problems     []string     `json:"problems,omitempty"`
}

// ErrNotPartition reports a directory that is neither a partition
// directory nor a data directory holding some.
var ErrNotPartition = errors.New("not a partition or data directory")

// ReadDir summarises the partitions of dir: dir itself when it is a
// partition directory (holding segments, see isPartitionDir),
// else every partition directory in it, and in the node directories
// (node-N) of a local cluster's directory.
func ReadDir(dir string) ([]Partition, error) {
	dirs, self, err := partitionsIn(dir)
	if err != nil {
		return nil, err
	}
	if self {
		p, err := ReadPartition(dir)
		if err != nil {
			return nil, err
		}
		return []Partition{p}, nil
	}
	cps := map[string]checkpoints{}
	out := make([]Partition, 0, len(dirs))
	for _, d := range dirs {
		parent := filepath.Dir(d)
		cp, ok := cps[parent]
		if !ok {
			cp = readCheckpoints(parent)
			cps[parent] = cp
		}
		p, err := readPartition(d, cp)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Files lists the files of dir that this package reads, sorted: dir's own
// when it is a partition directory, else the data directory's checkpoints
// and the files of every partition directory in it (and in its node-N
// directories), as ReadDir finds them.
func Files(dir string) ([]string, error) {
	dirs, self, err := partitionsIn(dir)
	if err != nil {
		return nil, err
	}
	if self {
		return knownFiles(dir)
	}
	roots := map[string]bool{}
	var out []string
	for _, d := range dirs {
		if root := filepath.Dir(d); !roots[root] {
			roots[root] = true
			fs, err := knownFiles(root)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		fs, err := knownFiles(d)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// knownFiles lists the files of dir whose kind this package knows.
func knownFiles(dir string) ([]string, error) {
	names, err := listNames(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if KindOf(n) != KindUnknown {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}

// FindPartition returns the directories of partition tp in a data
// directory: dataDir/<topic>-<partition>, or in a local cluster's
// directory the one of each node holding it.
func FindPartition(dataDir string, tp log.TopicPartition) ([]string, error) {
	var out []string
	cands := []string{filepath.Join(dataDir, tp.Dir())}
	nodes, err := nodeDirs(dataDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, n := range nodes {
		cands = append(cands, filepath.Join(n, tp.Dir()))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no directory %s in %s: %w", tp.Dir(), dataDir, fs.ErrNotExist)
	}
	return out, nil
}

// partitionsIn returns the partition directories dir stands for: dir
// itself (self) when it is one, else those in it and in its node-N
// directories, at least one.
func partitionsIn(dir string) (dirs []string, self bool, err error) {
	isPart, err := isPartitionDir(dir)
	if err != nil {
		return nil, false, err
	}
	if isPart {
		return []string{dir}, true, nil
	}
	if dirs, err = partitionDirs(dir); err != nil {
		return nil, false, err
	}
	if len(dirs) == 0 {
		return nil, false, fmt.Errorf("%s: %w", dir, ErrNotPartition)
	}
	return dirs, false, nil
}

// isPartitionDir reports whether dir holds a partition's files: a
// segment, leader-epoch-checkpoint or partition.metadata. Names alone
// cannot tell: a local cluster's node-0 would be partition 0 of "node".
func isPartitionDir(dir string) (bool, error) {
	names, err := listNames(dir)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		switch KindOf(n) {
		case KindLog, KindLeaderEpochs, KindPartitionMetadata:
			return true, nil
		}
	}
	return false, nil
}

// partitionDirs lists the partition directories in dataDir and in its
// node directories, sorted.
func partitionDirs(dataDir string) ([]string, error) {
	roots := []string{dataDir}
	nodes, err := nodeDirs(dataDir)
	if err != nil {
		return nil, err
	}
	roots = append(roots, nodes...)
	var out []string
	for _, r := range roots {
		ents, err := os.ReadDir(r)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if _, ok := log.ParsePartitionDir(e.Name()); !ok || !e.IsDir() {
				continue
			}
			d := filepath.Join(r, e.Name())
			if isPart, err := isPartitionDir(d); err != nil {
				return nil, err
			} else if isPart {
				out = append(out, d)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// nodeDirs lists the node-N directories of a local cluster's directory.
func nodeDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "node-")
		if !ok || !e.IsDir() || rest == "" || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		d := filepath.Join(dir, e.Name())
		if isPart, err := isPartitionDir(d); err != nil {
			return nil, err
		} else if !isPart {
			out = append(out, d)
		}
	}
	return out, nil
}

func listNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// checkpoints are a data directory's offset checkpoints.
type checkpoints struct {
	logStart, recovery, hw, cleaner map[log.TopicPartition]int64
}

func readCheckpoints(dataDir string) checkpoints {
	read := func(name string) map[log.TopicPartition]int64 {
		es, err := ReadOffsetCheckpoint(filepath.Join(dataDir, name))
		if err != nil {
			return nil
		}
		m := make(map[log.TopicPartition]int64, len(es))
		for _, e := range es {
			m[log.TopicPartition{Topic: e.Topic, Partition: e.Partition}] = e.Offset
		}
		return m
	}
	return checkpoints{
		logStart: read(log.LogStartOffsetCheckpoint),
		recovery: read(log.RecoveryPointCheckpoint),
		hw:       read(log.ReplicationOffsetCheckpoint),
		cleaner:  read(log.CleanerOffsetCheckpoint),
	}
}

func lookup(m map[log.TopicPartition]int64, tp log.TopicPartition) *int64 {
	if o, ok := m[tp]; ok {
		return &o
	}
	return nil
}

// ReadPartition summarises one partition directory, with the offsets the
// checkpoints of its data directory (its parent) hold for it.
func ReadPartition(dir string) (Partition, error) {
	return readPartition(dir, readCheckpoints(filepath.Dir(dir)))
}

func readPartition(dir string, cp checkpoints) (Partition, error) {
	names, err := listNames(dir)
	if err != nil {
		return Partition{}, err
	}
	p := Partition{Dir: dir, Partition: -1, Segments: []SegmentInfo{}, Snapshots: []int64{}, LeaderEpochs: []EpochEntry{}}
	abs, _ := filepath.Abs(dir)
	if tp, ok := log.ParsePartitionDir(filepath.Base(abs)); ok {
		p.Topic, p.Partition = tp.Topic, tp.Partition
		p.LogStartOffset = lookup(cp.logStart, tp)
		p.RecoveryPoint = lookup(cp.recovery, tp)
		p.HighWatermark = lookup(cp.hw, tp)
		p.CleanerCheckpoint = lookup(cp.cleaner, tp)
	}
	for _, n := range names {
		path := filepath.Join(dir, n)
		switch KindOf(n) {
		case KindLog:
			if _, ok := segmentBase(n); !ok {
				continue
			}
			s, err := readSegmentInfo(path)
			if err != nil {
				return Partition{}, err
			}
			p.Segments = append(p.Segments, s)
			p.Size += s.Size
		case KindSnapshot:
			if o, ok := segmentBase(n); ok {
				p.Snapshots = append(p.Snapshots, o)
			}
		case KindLeaderEpochs:
			es, err := ReadLeaderEpochs(path)
			if err != nil {
				p.Problems = append(p.Problems, err.Error())
				continue
			}
			p.LeaderEpochs = es
		case KindPartitionMetadata:
			id, err := ReadPartitionMetadata(path)
			if err != nil {
				p.Problems = append(p.Problems, err.Error())
				continue
			}
			p.TopicID = id
		}
	}
	if n := len(p.Segments); n > 0 {
		last := p.Segments[n-1]
		p.LogEndOffset = last.BaseOffset
		if last.LastOffset >= 0 {
			p.LogEndOffset = last.LastOffset + 1
		}
	}
	return p, nil
}

// readSegmentInfo summarises the segment whose .log is path, walking its
// batch headers.
func readSegmentInfo(path string) (SegmentInfo, error) {
	s, err := OpenSegment(path)
	if err != nil {
		return SegmentInfo{}, err
	}
	defer s.Close()
	s.headersOnly = true
	info := SegmentInfo{File: filepath.Base(path), BaseOffset: s.BaseOffset(), LastOffset: -1, Size: s.Size(), FirstTimestamp: -1, MaxTimestamp: -1}
	for s.Next() {
		b := s.Batch()
		if info.Batches == 0 {
			info.FirstTimestamp = b.MaxTimestamp
		}
		info.Batches++
		info.Records += int64(b.Count)
		info.LastOffset = max(info.LastOffset, b.LastOffset)
		info.MaxTimestamp = max(info.MaxTimestamp, b.MaxTimestamp)
	}
	if err := s.Err(); err != nil {
		return SegmentInfo{}, err
	}
	if p := s.Stopped(); p != nil {
		info.Problems = append(info.Problems, p.String())
	}
	count := func(ext string, read func(string) (int, error)) int {
		n, err := read(sibling(path, ext))
		if errors.Is(err, fs.ErrNotExist) {
			return -1
		}
		if err != nil {
			info.Problems = append(info.Problems, err.Error())
			return -1
		}
		return n
	}
	info.IndexEntries = count(log.IndexFileExt, func(p string) (int, error) { es, err := ReadOffsetIndex(p); return len(es), err })
	info.TimeIndexEntries = count(log.TimeIndexFileExt, func(p string) (int, error) { es, err := ReadTimeIndex(p); return len(es), err })
	info.AbortedTxns = count(log.TxnIndexFileExt, func(p string) (int, error) { es, err := ReadTxnIndex(p); return len(es), err })
	return info, nil
}
