package record

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Control records are the records of a control batch. Their key is a
// kmsg.ControlRecordKey (version, type); for the types ending a
// transaction, abort and commit, the value is a kmsg.EndTxnMarker
// (version, coordinator epoch). Other types (KRaft's) are not produced by
// clients and carry nothing the log acts on.

// TxnMarker is a transaction marker: the control batch, with one control
// record, that commits or aborts a producer's transaction.
type TxnMarker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
}

// AppendBatch appends the control batch of m stamped with timestamp (ms):
// transactional and control attributes, no base sequence, one record with
// key version 0 and type abort or commit and value version 0 and the
// coordinator epoch.
func (m TxnMarker) AppendBatch(dst []byte, timestamp int64) []byte {
	key := kmsg.ControlRecordKey{Version: 0, Type: kmsg.ControlRecordKeyTypeAbort}
	if m.Commit {
		key.Type = kmsg.ControlRecordKeyTypeCommit
	}
	value := kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: m.CoordinatorEpoch}
	b := NewBuilder(timestamp)
	b.Transactional, b.Control = true, true
	b.ProducerID, b.ProducerEpoch = m.ProducerID, m.ProducerEpoch
	b.Append(Record{Key: key.AppendTo(nil), Value: value.AppendTo(nil)})
	return b.appendBatch(dst, b.records)
}

// ParseControlKey decodes the key of a control record; a key too short is
// ErrInvalidRecord.
func ParseControlKey(key []byte) (kmsg.ControlRecordKey, error) {
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(key); err != nil {
		return k, fmt.Errorf("%w: control record key of %d bytes", ErrInvalidRecord, fieldLen(key))
	}
	return k, nil
}

// EndsTxn reports whether a control record key is a transaction marker's:
// type abort or commit.
func EndsTxn(k kmsg.ControlRecordKey) bool {
	return k.Type == kmsg.ControlRecordKeyTypeAbort || k.Type == kmsg.ControlRecordKeyTypeCommit
}

// TxnMarker decodes the transaction marker of a whole control batch from
// its first record. ok is false, without error, when b is not a control
// batch or its first record is a control record of another type. A
// compressed control batch, a key or value too short, are
// ErrInvalidRecord; a batch without a readable first record is
// ErrCorruptMessage.
func (b Batch) TxnMarker() (m TxnMarker, ok bool, err error) {
	a := b.Attributes()
	if !a.Control() {
		return m, false, nil
	}
	if a.Compression() != None {
		return m, false, fmt.Errorf("%w: compressed control batch", ErrInvalidRecord)
	}
	it, err := b.Records(nil)
	if err != nil {
		return m, false, err
	}
	if !it.Next() {
		if err := it.Err(); err != nil {
			return m, false, err
		}
		return m, false, fmt.Errorf("%w: control batch without records", ErrCorruptMessage)
	}
	r := it.Record()
	key, err := ParseControlKey(r.Key)
	if err != nil {
		return m, false, err
	}
	if !EndsTxn(key) {
		return m, false, nil
	}
	var value kmsg.EndTxnMarker
	if err := value.ReadFrom(r.Value); err != nil {
		return m, false, fmt.Errorf("%w: transaction marker value of %d bytes", ErrInvalidRecord, fieldLen(r.Value))
	}
	return TxnMarker{
		ProducerID:       b.ProducerID(),
		ProducerEpoch:    b.ProducerEpoch(),
		Commit:           key.Type == kmsg.ControlRecordKeyTypeCommit,
		CoordinatorEpoch: value.CoordinatorEpoch,
	}, true, nil
}

// fieldLen is a field's encoded length, -1 for null.
func fieldLen(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}
