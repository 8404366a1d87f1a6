// Package dump reads a partition's files offline — the segments, their
// indexes, producer snapshots and checkpoints of klog's (and Kafka's) data
// directories — to show what they hold (klog log dump), check that they
// are consistent (klog log dump --verify) and summarise a partition's
// segments (klog log segments), without a running broker.
//
// It only reads. Batches are read through store/log/record and every other
// file through store/log's decoders (store/log/decode.go), the ones the
// log opens its files with; the package adds the checks a log does not
// make on open (every index entry against the batches, the transaction
// index against the markers) and says precisely where a file is wrong.
//
// Memory is bounded by the batches, not the files: a segment is read one
// batch at a time (each at most its file's size, records decompressed
// within record.MaxDecompressedBytes); verifying a segment keeps 24 bytes
// per batch (and 16 per abort marker) to match index entries against.
// Index, snapshot and checkpoint files are read whole, within
// MaxIndexBytes.
//
// The structs carry JSON tags; they are klog's JSON output (klog log dump
// -f json, klog log segments -f json), versioned with it.
package dump

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// Kind is the kind of a partition or data directory file, told by its
// name.
type Kind string

// The kinds of files Kind tells apart.
const (
	KindUnknown           Kind = ""
	KindLog               Kind = "log"
	KindOffsetIndex       Kind = "index"
	KindTimeIndex         Kind = "timeindex"
	KindTxnIndex          Kind = "txnindex"
	KindSnapshot          Kind = "snapshot"
	KindLeaderEpochs      Kind = "leader-epoch-checkpoint"
	KindPartitionMetadata Kind = "partition-metadata"
	KindOffsetCheckpoint  Kind = "offset-checkpoint"
)

// KindOf tells a file's kind by its name: a segment's files and snapshots
// by extension, the checkpoints and partition.metadata by their names. Any
// other file named "*-checkpoint" (Kafka's cleaner-offset-checkpoint among
// them) is an offset checkpoint: topic, partition, offset.
func KindOf(path string) Kind {
	name := filepath.Base(path)
	switch name {
	case log.LeaderEpochCheckpointFile:
		return KindLeaderEpochs
	case log.PartitionMetadataFile:
		return KindPartitionMetadata
	}
	if strings.HasSuffix(name, "-checkpoint") {
		return KindOffsetCheckpoint
	}
	switch filepath.Ext(name) {
	case log.LogFileExt:
		return KindLog
	case log.IndexFileExt:
		return KindOffsetIndex
	case log.TimeIndexFileExt:
		return KindTimeIndex
	case log.TxnIndexFileExt:
		return KindTxnIndex
	case log.SnapshotFileExt:
		return KindSnapshot
	}
	return KindUnknown
}

// ErrUnknownKind reports a file whose name says no kind this package reads.
var ErrUnknownKind = errors.New("not a segment, index, snapshot or checkpoint file")

// MaxIndexBytes bounds the index, snapshot and checkpoint files read whole.
const MaxIndexBytes = 256 << 20

// Problem is one thing wrong in a file: in a batch (BaseOffset and
// Position set), an index entry (Entry set), or the file as a whole.
type Problem struct {
	File       string `json:"file"`
	BaseOffset *int64 `json:"base_offset,omitempty"`
	Position   *int64 `json:"position,omitempty"`
	Entry      *int   `json:"entry,omitempty"`
	Message    string `json:"message"`
}

func (p Problem) String() string { return p.File + ": " + p.Detail() }

// Detail is the problem without its file: where in the file and what.
func (p Problem) Detail() string {
	switch {
	case p.BaseOffset != nil && p.Position != nil:
		return fmt.Sprintf("batch at offset %d (position %d): %s", *p.BaseOffset, *p.Position, p.Message)
	case p.Position != nil:
		return fmt.Sprintf("position %d: %s", *p.Position, p.Message)
	case p.Entry != nil:
		return fmt.Sprintf("entry %d: %s", *p.Entry, p.Message)
	}
	return p.Message
}

func batchProblem(file string, base, pos int64, format string, args ...any) Problem {
	return Problem{File: file, BaseOffset: &base, Position: &pos, Message: fmt.Sprintf(format, args...)}
}

func positionProblem(file string, pos int64, format string, args ...any) Problem {
	return Problem{File: file, Position: &pos, Message: fmt.Sprintf(format, args...)}
}

func entryProblem(file string, entry int, format string, args ...any) Problem {
	return Problem{File: file, Entry: &entry, Message: fmt.Sprintf(format, args...)}
}

func fileProblem(file string, format string, args ...any) Problem {
	return Problem{File: file, Message: fmt.Sprintf(format, args...)}
}

// reason is err's text without the error class prefix of store/log
// ("store/log: corrupt message: "), which says nothing to a reader of a
// dump.
func reason(err error) string {
	s := err.Error()
	for _, class := range []error{record.ErrCorruptMessage, record.ErrInvalidRecord, log.ErrCorrupt} {
		s = strings.TrimPrefix(s, class.Error()+": ")
	}
	return s
}

// readWhole reads a small file whole, within MaxIndexBytes.
func readWhole(path string) ([]byte, error) {
	return log.ReadFileWithin(vfs.OS(), path, MaxIndexBytes)
}

// segmentBase is the base offset a segment file's name gives, and whether
// it gives one.
func segmentBase(path string) (int64, bool) {
	base, _, ok := log.ParseSegmentFileName(filepath.Base(path))
	return base, ok
}

// sibling is the file of the same segment as path with extension ext.
func sibling(path, ext string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ext
}

// PartitionOf is the partition a file belongs to, told by the name of its
// directory; ok is false when the directory does not name one.
func PartitionOf(path string) (log.TopicPartition, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return log.ParsePartitionDir(filepath.Base(filepath.Dir(abs)))
}
