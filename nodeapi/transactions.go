package nodeapi

import (
	"context"
	"net/http"
	"time"
)

// Paths of the producer and transaction endpoints.
const (
	// PathProducers is GET /v1/partitions/{topic}/{partition}/producers:
	// the producer state of the node's replica of the partition, leader
	// or follower (Producers); 404 when the node has none.
	PathProducers = "/v1/partitions/{topic}/{partition}/producers"
	// PathTransactions is GET: the transactional ids the node's
	// transaction coordinator owns (Transactions).
	PathTransactions = "/v1/transactions"
)

// MaxListed bounds the producers and the transactions of one answer; Count
// says how many there are.
const MaxListed = 1000

// ProducersPath is the path of the producers of topic/partition.
func ProducersPath(topic string, partition int32) string {
	return PartitionPath(topic, partition) + "/producers"
}

// Producers is GET /v1/partitions/{topic}/{partition}/producers.
type Producers struct {
	NodeID    int32  `json:"node_id"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Producers are the first MaxListed by producer id; Count is all of
	// them.
	Producers []Producer `json:"producers"`
	Count     int        `json:"count"`
}

// Producer is one producer id in a partition's producer state.
type Producer struct {
	ProducerID    int64 `json:"producer_id"`
	ProducerEpoch int16 `json:"producer_epoch"`
	// LastSequence and LastOffset are those of the producer's last batch
	// retained; -1 when none is.
	LastSequence int32 `json:"last_sequence"`
	LastOffset   int64 `json:"last_offset"`
	// LastTimestamp is the max timestamp of its last batch or marker.
	LastTimestamp *time.Time `json:"last_timestamp,omitempty"`
	// CoordinatorEpoch is -1 until a transaction marker was written.
	CoordinatorEpoch int32 `json:"coordinator_epoch"`
	// CurrentTxnStartOffset is the first offset of the producer's open
	// transaction: the last stable offset stays at or below it. -1 when
	// none is open.
	CurrentTxnStartOffset int64 `json:"current_txn_start_offset"`
	// Principal is who last appended with the producer id to the node,
	// or got it from the node ("User:alice"); empty when the node has
	// not seen it since it started.
	Principal string `json:"principal,omitempty"`
}

// Transactions is GET /v1/transactions.
type Transactions struct {
	NodeID int32 `json:"node_id"`
	// Transactions are the first MaxListed by transactional id; Count
	// is all of them.
	Transactions []Transaction `json:"transactions"`
	Count        int           `json:"count"`
}

// Transaction is the state of one transactional id.
type Transaction struct {
	TransactionalID string `json:"transactional_id"`
	// CoordinatorPartition is its __transaction_state partition.
	CoordinatorPartition int32 `json:"coordinator_partition"`
	ProducerID           int64 `json:"producer_id"`
	ProducerEpoch        int16 `json:"producer_epoch"`
	// Principal is who got the producer id (InitProducerId) from the
	// coordinator; empty when it has not seen it since it started.
	Principal string `json:"principal,omitempty"`
	State     string `json:"state"`
	TimeoutMs int64  `json:"timeout_ms"`
	// StartTime is when the current or last transaction began; absent
	// before the first.
	StartTime  *time.Time `json:"start_time,omitempty"`
	LastUpdate time.Time  `json:"last_update"`
	// Partitions are those the transaction in flight wrote to; none once
	// it completed.
	Partitions []TransactionPartition `json:"partitions"`
	// MarkersPending says the ending transaction's markers are being
	// written.
	MarkersPending bool `json:"markers_pending,omitempty"`
	// Markers is the outcome of the markers of the last or current end
	// of a transaction, one per partition of that transaction (so
	// bounded as Partitions is, by the cluster's partitions), sorted by
	// topic and partition. The coordinator keeps it in memory only:
	// absent before the first end it ran for the id, so after a restart
	// or a move of the coordinator too.
	Markers []TransactionMarker `json:"markers,omitempty"`
}

// The types and states of a TransactionMarker.
const (
	MarkerCommit = "commit"
	MarkerAbort  = "abort"
	// MarkerPending: not written yet; the coordinator keeps trying
	// (Error is the last attempt's, when one failed).
	MarkerPending = "pending"
	// MarkerWritten: the partition's leader appended it.
	MarkerWritten = "written"
	// MarkerFailed: given up, the partition refused it as fenced (a
	// newer producer or coordinator epoch); the transaction completes
	// without it.
	MarkerFailed = "failed"
)

// TransactionMarker is the marker of one partition of a transaction's
// end.
type TransactionMarker struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Type is MarkerCommit or MarkerAbort.
	Type string `json:"type"`
	// State is MarkerPending, MarkerWritten or MarkerFailed.
	State string `json:"state"`
	// Error is the last failed attempt's error, kept once written.
	Error string `json:"error,omitempty"`
	// Attempts counts the writes tried to the partition's leader.
	Attempts int `json:"attempts"`
	// WrittenAt is when the leader acknowledged it; absent until then.
	WrittenAt *time.Time `json:"written_at,omitempty"`
}

// TransactionPartition is one partition of a transaction.
type TransactionPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Producers is GET /v1/partitions/{topic}/{partition}/producers.
func (c *Client) Producers(ctx context.Context, topic string, partition int32) (Producers, error) {
	var out Producers
	return out, c.call(ctx, http.MethodGet, ProducersPath(topic, partition), nil, &out)
}

// Transactions is GET /v1/transactions.
func (c *Client) Transactions(ctx context.Context) (Transactions, error) {
	var out Transactions
	return out, c.call(ctx, http.MethodGet, PathTransactions, nil, &out)
}
