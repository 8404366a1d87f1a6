package nodeapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"
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
	// Records are its records, at most MaxBatchRecords (Truncated says
	// there were more); Error says why they could not be read (a codec
	// error), the header still shown.
	Records   []BatchRecord `json:"records"`
	Truncated bool          `json:"truncated,omitempty"`
	Error     string        `json:"error,omitempty"`
}

// BatchRecord is one record of a Batch in klog's JSON record schema
// (klog consume -f json): key and value strings, base64 with
// *_encoding when not UTF-8, null for null.
type BatchRecord struct {
	Offset        int64         `json:"offset"`
	Timestamp     int64         `json:"timestamp"`
	Key           *string       `json:"key"`
	KeyEncoding   string        `json:"key_encoding,omitempty"`
	Value         *string       `json:"value"`
	ValueEncoding string        `json:"value_encoding,omitempty"`
	Headers       []BatchHeader `json:"headers"`
}

// BatchHeader is a record header in klog's JSON record schema.
type BatchHeader struct {
	Key           string  `json:"key"`
	Value         *string `json:"value"`
	ValueEncoding string  `json:"value_encoding,omitempty"`
}

// EncodeBytes encodes b as klog's JSON record schema does: nil is null,
// valid UTF-8 a string, anything else base64 with encoding "base64".
func EncodeBytes(b []byte) (s *string, encoding string) {
	switch {
	case b == nil:
		return nil, ""
	case utf8.Valid(b):
		v := string(b)
		return &v, ""
	}
	v := base64.StdEncoding.EncodeToString(b)
	return &v, "base64"
}

// DecodeBytes is EncodeBytes backwards.
func DecodeBytes(s *string, encoding string) []byte {
	switch {
	case s == nil:
		return nil
	case encoding == "base64":
		if b, err := base64.StdEncoding.DecodeString(*s); err == nil {
			return b
		}
	}
	return []byte(*s)
}

// Batch is GET .../batch?offset=N.
func (c *Client) Batch(ctx context.Context, topic string, partition int32, offset int64) (Batch, error) {
	var out Batch
	return out, c.call(ctx, http.MethodGet, BatchPath(topic, partition), url.Values{"offset": {strconv.FormatInt(offset, 10)}}, &out)
}
