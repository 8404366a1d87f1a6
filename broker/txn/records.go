package txn

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/coordinator"
)

// Record is one __transaction_state record; a nil Value is a tombstone.
// Only Key and Value are written; Replay's markers are skipped.
type Record = coordinator.Record

// Versions klog writes; replay reads every version kmsg knows.
const (
	keyVersion   int16 = 0
	valueVersion int16 = 1 // flexible, as Kafka writes with transaction.version >= 1
)

// State is the state of a transactional id, with Kafka's ids and names.
type State int8

// The states of a transactional id. PrepareEpochFence is never written to
// the log; Dead is written as a tombstone.
const (
	StateEmpty             State = 0
	StateOngoing           State = 1
	StatePrepareCommit     State = 2
	StatePrepareAbort      State = 3
	StateCompleteCommit    State = 4
	StateCompleteAbort     State = 5
	StateDead              State = 6
	StatePrepareEpochFence State = 7
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// parseState returns the state named name (Kafka's names).
func parseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}

// txnKey returns the key of transactionalID's record.
func txnKey(id string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: id}
	return k.AppendTo(nil)
}

// metaRecord encodes m as Kafka's TransactionLogValue.
func metaRecord(m *meta) Record {
	v := kmsg.NewTxnMetadataValue()
	v.Version = valueVersion
	v.ProducerID = m.producerID
	v.ProducerEpoch = m.epoch
	v.TimeoutMillis = m.timeoutMillis
	v.State = kmsg.TransactionState(m.state)
	v.LastUpdateTimestamp = m.lastUpdate
	v.StartTimestamp = m.start
	v.PreviousProducerID = m.prevProducerID
	v.NextProducerID = m.nextProducerID
	v.ClientTransactionVersion = m.txnVersion
	if m.state != StateEmpty {
		v.Topics = []kmsg.TxnMetadataValueTopic{} // Empty writes null
		for _, tp := range m.sortedPartitions() {
			if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != tp.Topic {
				v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
			}
			t := &v.Topics[len(v.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
	}
	return Record{Key: txnKey(m.id), Value: v.AppendTo(nil)}
}

// tombstone deletes transactionalID's record (the id expired).
func tombstone(id string) Record { return Record{Key: txnKey(id)} }

// decodeRecord decodes a __transaction_state record into the transactional
// id and its metadata (nil for a tombstone). Keys of a version klog does not
// know are reported with ok=false and no error, so they are skipped.
func decodeRecord(r Record) (id string, m *meta, ok bool, err error) {
	if len(r.Key) < 2 {
		return "", nil, false, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(r.Key))
	}
	if kv := int16(binary.BigEndian.Uint16(r.Key)); kv != 0 {
		return "", nil, false, nil
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(r.Key); err != nil {
		return "", nil, false, fmt.Errorf("%w: key: %v", ErrBadRecord, err)
	}
	if r.Value == nil {
		return k.TransactionalID, nil, true, nil
	}
	if len(r.Value) < 2 {
		return "", nil, false, fmt.Errorf("%w: value of %q: %d bytes", ErrBadRecord, k.TransactionalID, len(r.Value))
	}
	if vv := int16(binary.BigEndian.Uint16(r.Value)); vv < 0 || vv > 1 {
		return "", nil, false, fmt.Errorf("%w: value of %q: unknown version %d", ErrBadRecord, k.TransactionalID, vv)
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(r.Value); err != nil {
		return "", nil, false, fmt.Errorf("%w: value of %q: %v", ErrBadRecord, k.TransactionalID, err)
	}
	st := State(v.State)
	if st < StateEmpty || st > StatePrepareEpochFence || st == StatePrepareEpochFence {
		return "", nil, false, fmt.Errorf("%w: value of %q: state %d", ErrBadRecord, k.TransactionalID, v.State)
	}
	m = &meta{
		id:             k.TransactionalID,
		producerID:     v.ProducerID,
		prevProducerID: -1,
		nextProducerID: -1,
		epoch:          v.ProducerEpoch,
		lastEpoch:      -1,
		timeoutMillis:  v.TimeoutMillis,
		state:          st,
		start:          v.StartTimestamp,
		lastUpdate:     v.LastUpdateTimestamp,
		partitions:     make(map[TopicPartition]struct{}),
		persisted:      true,
	}
	if v.Version >= 1 {
		m.prevProducerID = v.PreviousProducerID
		m.nextProducerID = v.NextProducerID
		m.txnVersion = v.ClientTransactionVersion
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			m.partitions[TopicPartition{t.Topic, p}] = struct{}{}
		}
	}
	return k.TransactionalID, m, true, nil
}

// sortTopicPartitions sorts by topic, then partition.
func sortTopicPartitions(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

func sortListed(s []kmsg.ListTransactionsResponseTransactionState) {
	sort.Slice(s, func(i, j int) bool { return s[i].TransactionalID < s[j].TransactionalID })
}
