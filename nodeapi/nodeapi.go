// Package nodeapi is the contract of a klog node's admin HTTP API: the
// JSON shapes of its endpoints and a client for them. The node serves it
// (broker/adminapi); klog's commands and the TUI read it through Client.
// It imports nothing of broker/ or store/, so that the TUI, which must not,
// can use it.
//
// Every endpoint is under /v1/. A change that is not an addition takes a
// new version. Errors are a JSON object {"error": "..."} with an HTTP
// status: 400 for a bad request, 404 for an unknown topic or partition
// (or one the node has no replica of, or a segment its log lacks), 405
// for a wrong method, 409 for a request the topic's configs do not
// allow (a compaction of a topic that is not compacted), 503 while the
// node stops, 504 when the passes of a clock advance outlast their bound.
//
// Byte strings (record keys) follow klog's JSON record schema: a string
// when valid UTF-8, else standard base64 with "key_encoding": "base64".
package nodeapi

import (
	"time"

	"github.com/klogdev/klog/recordjson"
)

// Paths of the endpoints.
const (
	// PathNode is GET: the node answering (Node).
	PathNode = "/v1/node"
	// PathCleaner is GET: the cleaner's state of every local replica of a
	// compacted topic (Cleaner).
	PathCleaner = "/v1/cleaner"
	// PathCompact is POST /v1/topics/{topic}/compact: clean the node's
	// replicas of the topic now (Compaction). Query parameters:
	// partition=N (default: every partition), dry_run=true (report what
	// cleaning would remove, write nothing).
	PathCompact = "/v1/topics/{topic}/compact"
)

// CompactPath is the path of a compaction of topic.
func CompactPath(topic string) string { return "/v1/topics/" + escapePath(topic) + "/compact" }

// Node is GET /v1/node.
type Node struct {
	NodeID int32 `json:"node_id"`
	// Kafka is the node's advertised Kafka listener, host:port.
	Kafka string `json:"kafka"`
	// Admin is the address this API is served on.
	Admin   string `json:"admin"`
	Version string `json:"version"`
}

// Cleaner is GET /v1/cleaner.
type Cleaner struct {
	NodeID     int32              `json:"node_id"`
	Partitions []CleanerPartition `json:"partitions"`
}

// CleanerPartition is the log cleaner's state of one local replica.
type CleanerPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// DirtyRatio is dirty_bytes / (clean_bytes + dirty_bytes); the
	// background cleaner takes the log once it exceeds
	// MinCleanableDirtyRatio (min.cleanable.dirty.ratio).
	DirtyRatio             float64 `json:"dirty_ratio"`
	MinCleanableDirtyRatio float64 `json:"min_cleanable_dirty_ratio"`
	// FirstDirtyOffset is the cleaner checkpoint: every offset below it
	// is clean. FirstUncleanableOffset ends the dirty section (the active
	// segment, the last stable offset, min.compaction.lag.ms).
	FirstDirtyOffset       int64 `json:"first_dirty_offset"`
	FirstUncleanableOffset int64 `json:"first_uncleanable_offset"`
	CleanBytes             int64 `json:"clean_bytes"`
	DirtyBytes             int64 `json:"dirty_bytes"`
	// LastRun is when the last pass began (absent before the first).
	LastRun            *time.Time `json:"last_run,omitempty"`
	LastDurationMs     float64    `json:"last_duration_ms"`
	LastBytesRemoved   int64      `json:"last_bytes_removed"`
	LastRecordsRemoved int64      `json:"last_records_removed"`
	// BytesRemoved, RecordsRemoved and Runs count every pass since the
	// node opened the log.
	BytesRemoved   int64 `json:"bytes_removed"`
	RecordsRemoved int64 `json:"records_removed"`
	Runs           int64 `json:"runs"`
}

// Compaction is POST /v1/topics/{topic}/compact.
type Compaction struct {
	NodeID int32  `json:"node_id"`
	Topic  string `json:"topic"`
	DryRun bool   `json:"dry_run"`
	// Partitions are the node's replicas of the topic; none when it has
	// none.
	Partitions []CompactedPartition `json:"partitions"`
}

// CompactedPartition is what cleaning did, or with a dry run would do, to
// one replica.
type CompactedPartition struct {
	Partition int32 `json:"partition"`
	// Cleaned is false when nothing was cleaned (no dirty section below
	// the first uncleanable offset), and for a dry run.
	Cleaned bool `json:"cleaned"`
	// FirstDirtyOffset to EndOffset is the section whose keys cleaning
	// indexed; everything below EndOffset is clean afterwards.
	// FirstUncleanableOffset is where cleaning had to stop.
	FirstDirtyOffset       int64 `json:"first_dirty_offset"`
	EndOffset              int64 `json:"end_offset"`
	FirstUncleanableOffset int64 `json:"first_uncleanable_offset"`
	SegmentsBefore         int   `json:"segments_before"`
	SegmentsAfter          int   `json:"segments_after"`
	BytesRemoved           int64 `json:"bytes_removed"`
	RecordsRemoved         int64 `json:"records_removed"`
	TombstonesRemoved      int64 `json:"tombstones_removed"`
	MarkersRemoved         int64 `json:"markers_removed"`
	// Plan details a dry run.
	Plan *CompactionPlan `json:"plan,omitempty"`
	// Cleaner is the cleaner's state afterwards.
	Cleaner CleanerPartition `json:"cleaner"`
}

// CompactionPlan details what a dry run would remove. Its lists are
// bounded (the keys losing the most records, the first pending
// tombstones); the counts cover everything.
type CompactionPlan struct {
	Keys []KeyRemoval `json:"keys"`
	// KeysAffected counts the keys that would lose records; KeysCapped
	// says the count stopped at its bound.
	KeysAffected   int   `json:"keys_affected"`
	KeysCapped     bool  `json:"keys_capped,omitempty"`
	AbortedRecords int64 `json:"aborted_records"`
	KeylessRecords int64 `json:"keyless_records"`
	// Tombstones are tombstones cleaning keeps until they expire: a pass
	// after Expires removes them (delete.retention.ms).
	Tombstones        []PendingTombstone `json:"tombstones"`
	TombstonesPending int64              `json:"tombstones_pending"`
}

// KeyRemoval is how many records of one key cleaning removes.
type KeyRemoval struct {
	Bytes
	Records int64 `json:"records"`
}

// PendingTombstone is a tombstone kept until Expires.
type PendingTombstone struct {
	Bytes
	Offset  int64     `json:"offset"`
	Expires time.Time `json:"expires"`
}

// Bytes is a record key in klog's JSON record schema.
type Bytes struct {
	Key         string `json:"key"`
	KeyEncoding string `json:"key_encoding,omitempty"`
}

// KeyOf encodes key as klog's JSON record schema does.
func KeyOf(key []byte) Bytes {
	s, enc := recordjson.EncodeBytes(key)
	if s == nil {
		return Bytes{}
	}
	return Bytes{Key: *s, KeyEncoding: enc}
}

// Raw decodes the key back to its bytes; a key that does not decode is
// returned as it is written.
func (b Bytes) Raw() []byte {
	raw, err := recordjson.DecodeBytes("key", &b.Key, b.KeyEncoding)
	if err != nil {
		return []byte(b.Key)
	}
	return raw
}

// Error is the body of an error answer.
type Error struct {
	Error string `json:"error"`
}
