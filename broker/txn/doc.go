// Package txn is klog's transaction coordinator: it maps transactional ids
// to producer ids and epochs, fences zombie producers, tracks the partitions
// of each ongoing transaction, and ends transactions in two phases with
// commit or abort markers written to every partition of the transaction.
//
// # Actors
//
// Each transactional id is one single-threaded actor of the coordinator
// runtime (broker/coordinator): a goroutine that owns the id's state and
// drains a bounded channel of events (requests, the
// periodic timeout check, the completion of its markers). A transaction's
// markers are written by a second goroutine owned by the actor, so requests
// for the id keep being answered (CONCURRENT_TRANSACTIONS) while markers are
// pending; when they are written, the actor persists the Complete state.
// Every AbortTimedOutInterval the coordinator makes each actor abort an
// Ongoing transaction older than its timeout (the epoch is bumped, so the
// producer is fenced) and expire an id unused for
// TransactionalIDExpiration.
//
// # States
//
// Kafka's state machine: Empty -> Ongoing (AddPartitionsToTxn,
// AddOffsetsToTxn) -> PrepareCommit | PrepareAbort (EndTxn, timeout,
// InitProducerID fencing an Ongoing transaction) -> CompleteCommit |
// CompleteAbort (markers written) -> Ongoing (next transaction) or Empty
// (InitProducerID bumps the epoch). PrepareEpochFence is the transient
// abort with a bumped epoch; it is never written. Dead is an expired id,
// written as a tombstone.
//
// # Markers
//
// The coordinator's markers are written through Markers, in-process; a
// partition that refuses one as fenced (a newer producer or coordinator
// epoch) is not retried, and the transaction completes once every other
// partition has its marker. Markers a client sends in WriteTxnMarkers are
// decided by ClientMarker, so no client ends a transaction behind its
// coordinator or fences it with a coordinator epoch from the future.
//
// Each transactional id keeps, in memory only, the outcome of its last or
// current end's markers (MarkerOutcome, in TxnSnapshot.Markers): per
// partition pending, written or failed (fenced, given up), with attempts,
// the last error and when it was written. The next end replaces it; a
// coordinator that loads the id again knows only the markers it writes.
//
// # Persistence
//
// Every change is appended to the compacted internal topic
// __transaction_state through Store (acks=all) before it takes effect and
// before the request is answered, in Kafka's schemas (big endian):
//
//	key   = int16 version 0 | transactional id (int16 length + bytes)
//	value = int16 version 1 | producer id int64 | producer epoch int16 |
//	        timeout ms int32 | state int8 |
//	        partitions (compact array, null when Empty) of
//	          [topic (compact string), partition ids (compact int32 array), tags] |
//	        last update ms int64 | start ms int64 (-1 when none) |
//	        tagged fields: 0 previous producer id int64 (-1 omitted),
//	          1 next producer id int64 (-1 omitted; a Prepare state of
//	          transaction version 2 whose epoch is exhausted rotates to it),
//	          2 client transaction version int16 (0 omitted; 2 for a
//	          transaction run under KIP-890 part 2)
//	no value: tombstone (the id expired)
//
// Value version 0 (the same fields, non-flexible) is read on replay.
// LoadPartition replays a partition: the latest value of a key wins and a
// tombstone deletes it; transactions found in PrepareCommit or PrepareAbort
// have their markers written again and are completed, Ongoing ones keep
// their timeout.
//
// # Transaction version 2
//
// KIP-890 part 2, as Kafka 4.4's TransactionCoordinator runs it: a
// produce v12+ or TxnOffsetCommit v5+ adds its partition itself
// (AddPartition, retrying CONCURRENT_TRANSACTIONS for 100 ms while the
// previous transaction's markers are written), and EndTxn v5 bumps the
// epoch in the Prepare state, so the markers fence the ended transaction's
// epoch; the answer carries the new epoch (a new producer id at epoch 0
// when the epoch is exhausted). The client's version is recorded with each
// transition, so a retried EndTxn v5 (at the epoch before the bump) is
// recognised, even after a restart, and clients of either version share an
// id. A fence by the coordinator (timeout, InitProducerID) bumps the epoch
// once and keeps the version: the abort a producer of version 2 then sends
// at its old epoch is answered as a retry, with the new epoch (a commit is
// INVALID_TXN_STATE), so it goes on after a timeout, as on Kafka 4.4.
//
// # Not implemented
//
//   - The next producer epoch tagged field (3) is written as -1.
//
// This package imports nothing from broker/ above it; Kafka error codes are
// the wire answers it builds with kerr, and Code maps its errors to them.
package txn
