package nodeapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Paths of the partition views.
const (
	// PathPartitions is GET: every partition the node has a replica of
	// (Partitions). Query parameter: topic=T for one topic's.
	PathPartitions = "/v1/partitions"
	// PathPartition is GET /v1/partitions/{topic}/{partition}: one local
	// replica (Partition); 404 when the node has none.
	PathPartition = "/v1/partitions/{topic}/{partition}"
	// PathSegments is GET /v1/partitions/{topic}/{partition}/segments:
	// the segments of the local log (Segments).
	PathSegments = "/v1/partitions/{topic}/{partition}/segments"
	// PathIndex is GET
	// /v1/partitions/{topic}/{partition}/segments/{base}/index: a page of
	// one segment's in-memory index (Index). Query parameters:
	// kind=offset (default) or time, from=N (the first entry's number,
	// default 0), limit=N (default DefaultIndexLimit, at most
	// MaxIndexLimit).
	PathIndex = "/v1/partitions/{topic}/{partition}/segments/{base}/index"
)

// Bounds of an index page.
const (
	DefaultIndexLimit = 100
	MaxIndexLimit     = 1000
)

// Kinds of index.
const (
	IndexOffset = "offset"
	IndexTime   = "time"
)

// PartitionPath is the path of topic/partition's view.
func PartitionPath(topic string, partition int32) string {
	return "/v1/partitions/" + escapePath(topic) + "/" + strconv.Itoa(int(partition))
}

// SegmentsPath is the path of topic/partition's segments.
func SegmentsPath(topic string, partition int32) string {
	return PartitionPath(topic, partition) + "/segments"
}

// IndexPath is the path of the index of topic/partition's segment at base.
func IndexPath(topic string, partition int32, base int64) string {
	return SegmentsPath(topic, partition) + "/" + strconv.FormatInt(base, 10) + "/index"
}

// Partitions is GET /v1/partitions: one entry per local replica, by topic
// and partition, as many as the node has (klog.max.partitions bounds
// them).
type Partitions struct {
	NodeID     int32       `json:"node_id"`
	Partitions []Partition `json:"partitions"`
}

// Partition is one local replica: its leader state from the metadata, its
// offsets, and on the leader what it knows of each follower, all taken at
// once.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Role is leader or follower: this node's part.
	Role string `json:"role"`
	// Leader is the leader's node ID; -1 when there is none.
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
	Replicas    []int32 `json:"replicas"`
	ISR         []int32 `json:"isr"`

	LogStartOffset   int64 `json:"log_start_offset"`
	LastStableOffset int64 `json:"last_stable_offset"`
	HighWatermark    int64 `json:"high_watermark"`
	LogEndOffset     int64 `json:"log_end_offset"`
	// Followers are the leader's state of every other replica, in
	// replica order; absent on a follower.
	Followers []Follower `json:"followers,omitempty"`
}

// Follower is what a leader knows of one follower from its fetches.
type Follower struct {
	ID int32 `json:"id"`
	// LogEndOffset is the offset of the follower's last fetch, and Lag the
	// leader's log end offset minus it; both -1 before its first fetch
	// under this leader.
	LogEndOffset int64 `json:"log_end_offset"`
	Lag          int64 `json:"lag"`
	// LastCaughtUp is the last time the follower held everything the
	// leader had (absent when never); CaughtUp is whether that is within
	// replica.lag.time.max.ms or it holds the leader's log end now: a
	// follower in the ISR that is not caught up leaves it.
	LastCaughtUp *time.Time `json:"last_caught_up,omitempty"`
	LastFetch    *time.Time `json:"last_fetch,omitempty"`
	CaughtUp     bool       `json:"caught_up"`
	InISR        bool       `json:"in_isr"`
}

// MaxSegments bounds the segments of an answer.
const MaxSegments = 10000

// Segments is GET /v1/partitions/{topic}/{partition}/segments: the
// segments of the local log, oldest first, from the log's in-memory state;
// the first MaxSegments when there are more, Total counting them all.
// Batch and record counts are not kept by the node (klog log segments
// counts them from the files).
type Segments struct {
	NodeID    int32     `json:"node_id"`
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Total     int       `json:"total"`
	Segments  []Segment `json:"segments"`
}

// Segment is one segment of a log; its fields are named as klog log
// segments --json names them.
type Segment struct {
	BaseOffset int64 `json:"base_offset"`
	// LastOffset is the offset of its last batch's last record, -1 when
	// the segment is empty; NextOffset the offset after it.
	LastOffset int64 `json:"last_offset"`
	NextOffset int64 `json:"next_offset"`
	Size       int64 `json:"size"`
	// FirstTimestamp is the first batch's max timestamp (what segment.ms
	// rolls by), MaxTimestamp the largest (what retention.ms deletes
	// by): Unix milliseconds, -1 when empty.
	FirstTimestamp int64 `json:"first_timestamp"`
	MaxTimestamp   int64 `json:"max_timestamp"`
	Active         bool  `json:"active"`
	// IndexEntries, TimeIndexEntries and AbortedTxns count the entries
	// of its offset, time and transaction indexes.
	IndexEntries     int       `json:"index_entries"`
	TimeIndexEntries int       `json:"time_index_entries"`
	AbortedTxns      int       `json:"aborted_txns"`
	Created          time.Time `json:"created"`
}

// Index is GET /v1/partitions/{topic}/{partition}/segments/{base}/index:
// entries From to From+len-1 of Total of one segment's index. Offsets
// holds them for kind offset, Times for kind time.
type Index struct {
	NodeID     int32  `json:"node_id"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	BaseOffset int64  `json:"base_offset"`
	Kind       string `json:"kind"`
	From       int    `json:"from"`
	Total      int    `json:"total"`
	// Next is the from of the next page; absent on the last.
	Next    *int          `json:"next,omitempty"`
	Offsets []OffsetEntry `json:"offsets,omitempty"`
	Times   []TimeEntry   `json:"times,omitempty"`
}

// OffsetEntry is an offset index entry: the last offset of a batch and
// the position in the segment's file where the batch starts.
type OffsetEntry struct {
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
}

// TimeEntry is a time index entry: the largest timestamp so far in the
// segment (Unix milliseconds) and the last offset of the batch holding
// it.
type TimeEntry struct {
	Timestamp int64 `json:"timestamp"`
	Offset    int64 `json:"offset"`
}

// Partitions is GET /v1/partitions; topic "" for every topic.
func (c *Client) Partitions(ctx context.Context, topic string) (Partitions, error) {
	q := url.Values{}
	if topic != "" {
		q.Set("topic", topic)
	}
	var out Partitions
	return out, c.call(ctx, http.MethodGet, PathPartitions, q, &out)
}

// Partition is GET /v1/partitions/{topic}/{partition}.
func (c *Client) Partition(ctx context.Context, topic string, partition int32) (Partition, error) {
	var out Partition
	return out, c.call(ctx, http.MethodGet, PartitionPath(topic, partition), nil, &out)
}

// Segments is GET /v1/partitions/{topic}/{partition}/segments.
func (c *Client) Segments(ctx context.Context, topic string, partition int32) (Segments, error) {
	var out Segments
	return out, c.call(ctx, http.MethodGet, SegmentsPath(topic, partition), nil, &out)
}

// Index is GET /v1/partitions/{topic}/{partition}/segments/{base}/index:
// kind IndexOffset or IndexTime, limit 0 for DefaultIndexLimit.
func (c *Client) Index(ctx context.Context, topic string, partition int32, base int64, kind string, from, limit int) (Index, error) {
	q := url.Values{"kind": {kind}, "from": {strconv.Itoa(from)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out Index
	return out, c.call(ctx, http.MethodGet, IndexPath(topic, partition, base), q, &out)
}
