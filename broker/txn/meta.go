package txn

import (
	"maps"
	"math"
	"time"
)

// meta is the state of one transactional id, owned by its actor.
type meta struct {
	id             string
	producerID     int64
	prevProducerID int64 // the producer id before the last rotation, or -1
	nextProducerID int64 // the producer id a Prepare state rotates to on completion, or -1
	epoch          int16 // -1: no epoch handed out yet
	lastEpoch      int16 // the epoch before the last bump by a KIP-360 retry, or -1
	timeoutMillis  int32
	state          State
	start          int64 // unix millis the transaction started, -1 when none
	lastUpdate     int64 // unix millis of the last state change
	partitions     map[TopicPartition]struct{}
	// txnVersion is the transaction version the client used for the last
	// transition (Kafka's clientTransactionVersion): 2 once a transaction
	// is run under KIP-890 part 2 (partitions added by produce v12+ or
	// TxnOffsetCommit v5+, or ended by EndTxn v5), which bumps the epoch
	// at every end; 0 otherwise.
	txnVersion int16

	persisted   bool // a record of this id is in the log
	markers     bool // a marker writer runs for the PrepareCommit/PrepareAbort
	failedFence bool // an epoch fence was not persisted: do not bump again
}

func newMeta(id string, producerID int64, timeoutMillis int32, now time.Time) *meta {
	return &meta{
		id:             id,
		producerID:     producerID,
		prevProducerID: -1,
		nextProducerID: -1,
		epoch:          -1,
		lastEpoch:      -1,
		timeoutMillis:  timeoutMillis,
		state:          StateEmpty,
		start:          -1,
		lastUpdate:     now.UnixMilli(),
		partitions:     make(map[TopicPartition]struct{}),
	}
}

// clone returns a copy for a transition; it is applied once persisted.
func (m *meta) clone() *meta {
	n := *m
	n.partitions = maps.Clone(m.partitions)
	return &n
}

func (m *meta) sortedPartitions() []TopicPartition {
	out := make([]TopicPartition, 0, len(m.partitions))
	for tp := range m.partitions {
		out = append(out, tp)
	}
	sortTopicPartitions(out)
	return out
}

// epochExhausted reports an epoch that cannot be bumped again: the next
// InitProducerID rotates to a new producer id.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// idle reports a state with no transaction in flight.
func (m *meta) idle() bool {
	return m.state == StateEmpty || m.state == StateCompleteCommit || m.state == StateCompleteAbort
}

// timedOut reports an Ongoing transaction past its timeout at now.
func (m *meta) timedOut(now time.Time) bool {
	return m.state == StateOngoing && !m.markers && m.start >= 0 &&
		m.start+int64(m.timeoutMillis) < now.UnixMilli()
}

// expired reports an idle id unused for longer than exp at now.
func (m *meta) expired(now time.Time, exp time.Duration) bool {
	return m.persisted && m.idle() && m.lastUpdate+exp.Milliseconds() <= now.UnixMilli()
}

// toEmpty is the transition of InitProducerID on an idle id: a new epoch
// (or a new producer id when rotate), no partitions.
func (m *meta) toEmpty(producerID int64, epoch, lastEpoch int16, timeoutMillis int32, now time.Time) *meta {
	n := m.clone()
	if producerID != m.producerID {
		n.prevProducerID = m.producerID
	}
	n.producerID, n.epoch, n.lastEpoch = producerID, epoch, lastEpoch
	n.nextProducerID = -1
	n.txnVersion = 0
	n.timeoutMillis = timeoutMillis
	n.state = StateEmpty
	n.start = -1
	n.lastUpdate = now.UnixMilli()
	clear(n.partitions)
	return n
}

// toOngoing adds tps to the transaction, starting it if idle, at
// transaction version txnVersion.
func (m *meta) toOngoing(tps []TopicPartition, txnVersion int16, now time.Time) *meta {
	n := m.clone()
	n.txnVersion = txnVersion
	if m.idle() {
		n.start = now.UnixMilli()
		clear(n.partitions)
	}
	for _, tp := range tps {
		n.partitions[tp] = struct{}{}
	}
	n.state = StateOngoing
	n.lastUpdate = now.UnixMilli()
	return n
}

// toPrepare ends an Ongoing transaction: PrepareCommit or PrepareAbort at
// epoch (the current one, or a fenced epoch).
func (m *meta) toPrepare(commit bool, epoch int16, now time.Time) *meta {
	n := m.clone()
	n.state = StatePrepareAbort
	if commit {
		n.state = StatePrepareCommit
	}
	if epoch != m.epoch {
		// A fence by the coordinator. The transaction version is kept:
		// under version 2 the producer's abort at the old epoch is then
		// answered as a retry, with the new epoch, as Kafka 4.4 answers
		// it after a timeout, and the producer goes on.
		n.epoch, n.lastEpoch = epoch, -1
	}
	n.lastUpdate = now.UnixMilli()
	return n
}

// toPrepareBumped ends a transaction under transaction version 2, as
// Kafka's TransactionMetadata.prepareAbortOrCommit: the epoch is bumped
// (the markers are written at the new epoch, fencing the old one), and
// when the old epoch was the last one, the Complete state that follows
// rotates to nextProducerID at epoch 0. From an idle state it is the
// abort of an empty transaction, which starts now.
func (m *meta) toPrepareBumped(commit bool, nextProducerID int64, now time.Time) *meta {
	n := m.clone()
	n.state = StatePrepareAbort
	if commit {
		n.state = StatePrepareCommit
	}
	if m.idle() {
		n.start = now.UnixMilli()
		clear(n.partitions)
	}
	n.epoch, n.lastEpoch = m.epoch+1, m.epoch
	n.nextProducerID = nextProducerID
	n.txnVersion = 2
	n.lastUpdate = now.UnixMilli()
	return n
}

// toComplete follows a Prepare state once every marker is written.
func (m *meta) toComplete(now time.Time) *meta {
	n := m.clone()
	n.state = StateCompleteAbort
	if m.state == StatePrepareCommit {
		n.state = StateCompleteCommit
	}
	if m.nextProducerID >= 0 { // the epoch overflowed: the producer id rotates
		n.prevProducerID, n.producerID, n.epoch, n.lastEpoch = m.producerID, m.nextProducerID, 0, -1
		n.nextProducerID = -1
	}
	clear(n.partitions)
	n.lastUpdate = now.UnixMilli()
	return n
}

// fenceEpoch returns the epoch an abort by the coordinator writes: one
// above the current epoch, unless a previous fence failed to persist.
func (m *meta) fenceEpoch() int16 {
	if m.failedFence || m.epoch == math.MaxInt16 {
		return m.epoch
	}
	return m.epoch + 1
}
