package dump

import (
	"encoding/base64"
	"sort"

	"github.com/klogdev/klog/store/log"
)

// FileError reports a file that does not decode.
type FileError struct {
	Path   string
	Reason string
}

func (e *FileError) Error() string { return e.Path + ": " + e.Reason }

// readDecoded reads a file whole and decodes it; a file that does not
// decode is a *FileError.
func readDecoded[T any](path string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	b, err := readWhole(path)
	if err != nil {
		return zero, err
	}
	v, err := decode(b)
	if err != nil {
		return zero, &FileError{Path: path, Reason: reason(err)}
	}
	return v, nil
}

// IndexEntry is an .index entry with its offset made absolute: the last
// offset of the batch at Position.
type IndexEntry struct {
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
}

// TimeEntry is a .timeindex entry with its offset made absolute.
type TimeEntry struct {
	Timestamp int64 `json:"timestamp"`
	Offset    int64 `json:"offset"`
}

// AbortedTxn is a .txnindex entry: an aborted transaction and its abort
// marker.
type AbortedTxn struct {
	ProducerID       int64 `json:"producer_id"`
	FirstOffset      int64 `json:"first_offset"`
	LastOffset       int64 `json:"last_offset"`
	LastStableOffset int64 `json:"last_stable_offset"`
}

// EpochEntry is a leader-epoch-checkpoint entry.
type EpochEntry struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"start_offset"`
}

// CheckpointEntry is an offset checkpoint entry.
type CheckpointEntry struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// ReadOffsetIndex returns the entries of an .index file.
func ReadOffsetIndex(path string) ([]IndexEntry, error) {
	es, err := readDecoded(path, log.DecodeOffsetIndex)
	if err != nil {
		return nil, err
	}
	base, _ := segmentBase(path)
	out := make([]IndexEntry, len(es))
	for i, e := range es {
		out[i] = IndexEntry{Offset: base + int64(e.RelativeOffset), Position: int64(e.Position)}
	}
	return out, nil
}

// ReadTimeIndex returns the entries of a .timeindex file.
func ReadTimeIndex(path string) ([]TimeEntry, error) {
	es, err := readDecoded(path, log.DecodeTimeIndex)
	if err != nil {
		return nil, err
	}
	base, _ := segmentBase(path)
	out := make([]TimeEntry, len(es))
	for i, e := range es {
		out[i] = TimeEntry{Timestamp: e.Timestamp, Offset: base + int64(e.RelativeOffset)}
	}
	return out, nil
}

// ReadTxnIndex returns the entries of a .txnindex file.
func ReadTxnIndex(path string) ([]AbortedTxn, error) {
	es, err := readDecoded(path, log.DecodeTxnIndex)
	if err != nil {
		return nil, err
	}
	out := make([]AbortedTxn, len(es))
	for i, e := range es {
		out[i] = AbortedTxn(e)
	}
	return out, nil
}

// ReadSnapshot returns the producers of a .snapshot file, as stored.
func ReadSnapshot(path string) ([]log.SnapshotEntry, error) {
	return readDecoded(path, log.DecodeSnapshot)
}

// ReadLeaderEpochs returns the entries of a leader-epoch-checkpoint file.
func ReadLeaderEpochs(path string) ([]EpochEntry, error) {
	es, err := readDecoded(path, log.DecodeLeaderEpochs)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, len(es))
	for i, e := range es {
		out[i] = EpochEntry(e)
	}
	return out, nil
}

// ReadOffsetCheckpoint returns the entries of an offset checkpoint file,
// by topic and partition.
func ReadOffsetCheckpoint(path string) ([]CheckpointEntry, error) {
	m, err := readDecoded(path, log.DecodeOffsetCheckpoint)
	if err != nil {
		return nil, err
	}
	out := make([]CheckpointEntry, 0, len(m))
	for tp, o := range m {
		out = append(out, CheckpointEntry{Topic: tp.Topic, Partition: tp.Partition, Offset: o})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// ReadPartitionMetadata returns the topic ID of a partition.metadata file,
// as the file writes it (base64url without padding).
func ReadPartitionMetadata(path string) (string, error) {
	id, err := readDecoded(path, log.DecodePartitionMetadata)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(id[:]), nil
}
