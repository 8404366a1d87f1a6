package log

import (
	"errors"
	"fmt"

	"github.com/klogdev/klog/store/log/record"
)

// ErrCorruptMessage means a batch failed a structural check: truncated,
// impossible length, malformed records or a CRC mismatch. Kafka:
// CORRUPT_MESSAGE. It is the value the batch view, store/log/record,
// returns.
var ErrCorruptMessage = record.ErrCorruptMessage

// ErrInvalidRecord means a batch breaks a rule: magic other than 2, no
// records, record count, offset deltas and records disagree, an unknown
// compression codec, or records that decompress beyond the budget. Kafka: INVALID_RECORD. It is the value the batch
// view, store/log/record, returns.
var ErrInvalidRecord = record.ErrInvalidRecord

// ErrMessageTooLarge means a batch is larger than max.message.bytes. Kafka:
// MESSAGE_TOO_LARGE.
var ErrMessageTooLarge = errors.New("store/log: message too large")

// ErrInvalidTimestamp means a CreateTime timestamp lies outside
// message.timestamp.before.max.ms / after.max.ms of now. Kafka:
// INVALID_TIMESTAMP.
var ErrInvalidTimestamp = errors.New("store/log: invalid timestamp")

// RecordError is one record of a batch refused: its index in the batch
// and Kafka's message for it (ProduceResponse's record errors).
type RecordError struct {
	Index   int32
	Message string
}

// RecordErrors refuses a batch for some of its records: keys missing in a
// compacted log (ErrInvalidRecord) or timestamps out of range
// (ErrInvalidTimestamp). Err is a timestamp's error if any record has
// one, else the first record's; Records lists every record refused, in
// order, with Kafka's message.
type RecordErrors struct {
	Err     error
	Records []RecordError
}

func (e *RecordErrors) Error() string {
	if len(e.Records) == 1 {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (and %d more records)", e.Err, len(e.Records)-1)
}

func (e *RecordErrors) Unwrap() error { return e.Err }

// ErrOffsetOutOfRange means an offset lies below the log start offset or
// above the log end offset. Kafka: OFFSET_OUT_OF_RANGE.
var ErrOffsetOutOfRange = errors.New("store/log: offset out of range")

// ErrClosed is returned by operations on a closed Log or Manager.
var ErrClosed = errors.New("store/log: closed")

// ErrCorrupt is the class of on-disk corruption that recovery could not
// repair (for example an unreadable checkpoint file). Corruption found in a
// segment tail is repaired by truncation instead.
var ErrCorrupt = errors.New("store/log: corrupt data on disk")

// IOError is the sticky error of a Log: after a write or fsync failed, the
// log refuses every further write with an IOError wrapping the first failure.
// An fsync is never retried: after a failed fsync the kernel may have
// dropped the dirty pages, so nothing written since the last good fsync can
// be trusted. Reopening the log (which recovers from disk) is the way out.
type IOError struct {
	Op  string // what failed first: "write", "sync", "truncate", ...
	Err error
}

func (e *IOError) Error() string {
	return fmt.Sprintf("store/log: log failed on %s, refusing writes: %v", e.Op, e.Err)
}

func (e *IOError) Unwrap() error { return e.Err }

// ErrOutOfOrderSequence means an idempotent batch's first sequence does
// not follow the producer's last one (a gap, or a replay older than the
// retained window), or a new producer epoch does not start at sequence 0.
// Kafka: OUT_OF_ORDER_SEQUENCE_NUMBER.
var ErrOutOfOrderSequence = errors.New("store/log: out of order sequence number")

// ErrInvalidProducerEpoch means a batch or transaction marker carries a
// producer epoch older than the one the log has seen for that producer.
// Kafka: INVALID_PRODUCER_EPOCH.
var ErrInvalidProducerEpoch = errors.New("store/log: invalid producer epoch")

// ErrInvalidTxnState means a non-transactional batch arrived from a
// producer whose transaction is still open. Kafka: INVALID_TXN_STATE.
var ErrInvalidTxnState = errors.New("store/log: invalid transaction state")

// ErrTransactionCoordinatorFenced means a transaction marker carries a
// coordinator epoch older than the last one seen for that producer. Kafka:
// TRANSACTION_COORDINATOR_FENCED.
var ErrTransactionCoordinatorFenced = errors.New("store/log: transaction coordinator fenced")

// ErrUnexpectedAppendOffset means batches replicated from a leader do not
// continue the log: the first starts below the log end offset, or a batch
// does not start after the one before it. Kafka:
// UnexpectedAppendOffsetException and OffsetsOutOfOrderException, which
// make a follower's fetcher mark the partition failed.
var ErrUnexpectedAppendOffset = errors.New("store/log: unexpected append offset")

// ErrInconsistentTopicID means a partition's log belongs to another topic
// of the same name: its partition.metadata names another topic ID than
// the one asked for. Kafka: INCONSISTENT_TOPIC_ID.
var ErrInconsistentTopicID = errors.New("store/log: log's topic id differs")
