package nodeapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/klogdev/klog/recordjson"
)

// PathBatch is GET /v1/partitions/{topic}/{partition}/batch?offset=N: the
// batch of the local log that holds offset N (the one an offset index
// entry, a batch's last offset, points at), its header and records
// (Batch); 404 when no batch holds it.
const PathBatch = "/v1/partitions/{topic}/{partition}/batch"

// MaxBatchRecords bounds the records of a Batch answer.
const MaxBatchRecords = 1000

// BatchPath is the path of topic/partition's batch view.
func BatchPath(topic string, partition int32) string {
	return PartitionPath(topic, partition) + "/batch"
}

// Batch is GET .../batch: one record batch as the log holds it.
type Batch struct {
	NodeID     int32  `json:"node_id"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	BaseOffset int64  `json:"base_offset"`
	LastOffset int64  `json:"last_offset"`
	// Size is the batch's bytes in the log; Count its record count.
	Size  int   `json:"size"`
	Count int32 `json:"count"`
	// CRCValid says the batch's CRC-32C matches its bytes.
	CRCValid             bool   `json:"crc_valid"`
	PartitionLeaderEpoch int32  `json:"partition_leader_epoch"`
	Codec                string `json:"codec"`
	// TimestampType is create or log_append.
	TimestampType string `json:"timestamp_type"`
	Transactional bool   `json:"transactional"`
	Control       bool   `json:"control"`
	// DeleteHorizon is set by the cleaner on a batch whose tombstones or
	// marker go after BaseTimestamp.
	DeleteHorizon bool  `json:"delete_horizon"`
	BaseTimestamp int64 `json:"base_timestamp"`
	MaxTimestamp  int64 `json:"max_timestamp"`
	ProducerID    int64 `json:"producer_id"`
	ProducerEpoch int16 `json:"producer_epoch"`
	BaseSequence  int32 `json:"base_sequence"`
	// Records are its records in klog's JSON record schema (package
	// recordjson; offset and timestamp set, topic and partition not), at
	// most MaxBatchRecords (Truncated says there were more); Error says
	// why they could not be read (a codec error), the header still shown.
	Records   []recordjson.Record `json:"records"`
	Truncated bool                `json:"truncated,omitempty"`
	Error     string              `json:"error,omitempty"`
}

// Batch is GET .../batch?offset=N.
func (c *Client) Batch(ctx context.Context, topic string, partition int32, offset int64) (Batch, error) {
	var out Batch
	return out, c.call(ctx, http.MethodGet, BatchPath(topic, partition), url.Values{"offset": {strconv.FormatInt(offset, 10)}}, &out)
}
