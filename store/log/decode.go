package log

import (
	"math"
	"path"
	"strings"

	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// Read-only decoders of a partition's files, for offline tools (klog log
// dump and segments, in store/log/dump). They are the decoders the log
// itself opens its files with; each takes a whole file's bytes and checks
// only what the log checks on open, so a tool can show a file's entries
// and judge them itself. Batches in .log files are read with
// store/log/record.

// Extensions of the files of one segment, and of producer snapshots.
const (
	LogFileExt       = ".log"
	IndexFileExt     = ".index"
	TimeIndexFileExt = ".timeindex"
	TxnIndexFileExt  = ".txnindex"
	SnapshotFileExt  = snapshotExt
)

// OffsetIndexEntry is one .index entry: the last offset of a batch,
// relative to the segment's base, and the position of that batch in the
// .log file.
type OffsetIndexEntry struct {
	RelativeOffset uint32 `json:"relative_offset"`
	Position       uint32 `json:"position"`
}

// TimeIndexEntry is one .timeindex entry: the largest timestamp so far in
// the segment and the last offset (relative to the segment's base) of the
// batch holding it.
type TimeIndexEntry struct {
	Timestamp      int64  `json:"timestamp"`
	RelativeOffset uint32 `json:"relative_offset"`
}

// SnapshotEntry is one producer of a .snapshot file, as stored.
type SnapshotEntry struct {
	ProducerID            int64 `json:"producer_id"`
	ProducerEpoch         int16 `json:"producer_epoch"`
	LastSequence          int32 `json:"last_sequence"`
	LastOffset            int64 `json:"last_offset"`
	OffsetDelta           int32 `json:"offset_delta"`
	Timestamp             int64 `json:"timestamp"`
	CoordinatorEpoch      int32 `json:"coordinator_epoch"`
	CurrentTxnFirstOffset int64 `json:"current_txn_first_offset"`
}

// DecodeOffsetIndex returns the entries of an .index file, in file order
// and unchecked; trailing all-zero entries (a preallocated file) are
// dropped. A size that is not a whole number of entries is ErrCorrupt.
func DecodeOffsetIndex(b []byte) ([]OffsetIndexEntry, error) {
	es, err := decodeOffsetIndex(b)
	if err != nil {
		return nil, err
	}
	out := make([]OffsetIndexEntry, len(es))
	for i, e := range es {
		out[i] = OffsetIndexEntry{RelativeOffset: e.rel, Position: e.pos}
	}
	return out, nil
}

// DecodeTimeIndex returns the entries of a .timeindex file, as
// DecodeOffsetIndex does.
func DecodeTimeIndex(b []byte) ([]TimeIndexEntry, error) {
	es, err := decodeTimeIndex(b)
	if err != nil {
		return nil, err
	}
	out := make([]TimeIndexEntry, len(es))
	for i, e := range es {
		out[i] = TimeIndexEntry{Timestamp: e.ts, RelativeOffset: e.rel}
	}
	return out, nil
}

// DecodeTxnIndex returns the entries of a .txnindex file; every entry
// must have version 0 and firstOffset <= lastOffset. CheckTxnIndex checks
// them against the segment they belong to.
func DecodeTxnIndex(b []byte) ([]AbortedTxn, error) {
	return parseTxnIndex(b, math.MinInt64, math.MaxInt64)
}

// CheckTxnIndex decodes a .txnindex file as the log does when it opens
// the segment [base, next): every abort marker must lie inside it.
func CheckTxnIndex(b []byte, base, next int64) error {
	_, err := parseTxnIndex(b, base, next)
	return err
}

// DecodeSnapshot returns the producers of a .snapshot file, after checking
// its version, CRC and entry count.
func DecodeSnapshot(b []byte) ([]SnapshotEntry, error) {
	if err := checkSnapshot(b); err != nil {
		return nil, err
	}
	out := make([]SnapshotEntry, 0, (len(b)-snapshotHeaderSize)/snapshotEntrySize)
	for p := snapshotHeaderSize; p < len(b); p += snapshotEntrySize {
		out = append(out, snapshotEntryAt(b[p:p+snapshotEntrySize]))
	}
	return out, nil
}

// DecodeLeaderEpochs returns the entries of a leader-epoch-checkpoint file.
func DecodeLeaderEpochs(b []byte) ([]EpochEntry, error) { return parseEpochs(b) }

// DecodeOffsetCheckpoint returns the entries of a data directory's offset
// checkpoint (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
// replication-offset-checkpoint).
func DecodeOffsetCheckpoint(b []byte) (map[TopicPartition]int64, error) {
	return parseOffsetCheckpoint(b)
}

// DecodePartitionMetadata returns the topic ID of a partition.metadata file.
func DecodePartitionMetadata(b []byte) ([16]byte, error) { return parsePartitionMetadata(b) }

// LastSequence is the producer sequence of the batch's last record, -1
// for a batch without sequence numbers (wrapping past MaxInt32 to 0), as
// the log counts it.
func LastSequence(b record.Batch) int32 { return lastSequence(b.BaseSequence(), b.LastOffsetDelta()) }

// ReadFileWithin reads a whole file of at most limit bytes, as the log
// reads its checkpoints and snapshots; a missing file is fs.ErrNotExist.
func ReadFileWithin(fsys vfs.FS, name string, limit int64) ([]byte, error) {
	return readFile(fsys, name, limit)
}

// ParseSegmentFileName splits a segment or snapshot file name,
// "<20-digit offset><ext>", into its offset and extension.
func ParseSegmentFileName(name string) (offset int64, ext string, ok bool) {
	ext = path.Ext(name)
	offset, ok = parseSegmentName(strings.TrimSuffix(name, ext))
	return offset, ext, ok
}

// ParsePartitionDir parses a partition directory name, "<topic>-<partition>".
func ParsePartitionDir(name string) (TopicPartition, bool) { return parsePartitionDir(name) }
