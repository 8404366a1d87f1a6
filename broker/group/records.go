package group

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/coordinator"
)

// Record is one __consumer_offsets record; a nil Value is a tombstone.
//
// The coordinator writes only Key and Value (Store.Append and
// TxnStore.AppendTransactional ignore the other fields). Store.Replay fills
// the rest so that the transaction structure of the log is visible:
//
//   - a record of an ordinary batch: Key, Value; Transactional and Control
//     false (ProducerID is then ignored, whatever the batch carried);
//   - a record of a transactional batch (attributes bit 4 set, bit 5 clear):
//     Key, Value, Transactional true and ProducerID the batch's producer id.
//     Records of transactions that were later aborted are delivered too:
//     the coordinator drops them at their marker;
//   - a control batch (attributes bit 5): one Record per control record
//     whose type is COMMIT (1) or ABORT (0), with Control true, Commit true
//     for COMMIT, ProducerID the batch's producer id, and Key/Value the
//     control record's raw key and value (informational; may be nil).
//     Control records of other types are not delivered.
//
// Records are delivered in log order, from the log start offset to the high
// watermark; markers must come at their place in that order.
type Record = coordinator.Record

// Versions klog writes; replay reads every version kmsg knows.
const (
	offsetKeyVersion   int16 = 1
	offsetValueVersion int16 = 3
	groupKeyVersion    int16 = 2
	groupValueVersion  int16 = 3
)

// offsetKey returns the key of group's committed offset for topic/partition.
func offsetKey(group, topic string, partition int32) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetKeyVersion, Group: group, Topic: topic, Partition: partition}
	return k.AppendTo(nil)
}

// offsetRecord encodes a committed offset.
func offsetRecord(group, topic string, partition int32, o offset) Record {
	v := kmsg.OffsetCommitValue{
		Version:         offsetValueVersion,
		Offset:          o.Offset,
		LeaderEpoch:     o.LeaderEpoch,
		Metadata:        o.Metadata,
		CommitTimestamp: o.CommitTimestamp,
	}
	return Record{Key: offsetKey(group, topic, partition), Value: v.AppendTo(nil)}
}

// offsetTombstone deletes a committed offset.
func offsetTombstone(group, topic string, partition int32) Record {
	return Record{Key: offsetKey(group, topic, partition)}
}

// groupKey returns the key of group's metadata.
func groupKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupKeyVersion, Group: group}
	return k.AppendTo(nil)
}

// groupTombstone deletes a group's metadata.
func groupTombstone(group string) Record { return Record{Key: groupKey(group)} }

// decoded is one replayed record: exactly one of offset or group key is set.
type decoded struct {
	isOffset bool
	group    string
	topic    string
	part     int32
	offset   *kmsg.OffsetCommitValue // nil: tombstone
	meta     *kmsg.GroupMetadataValue
}

// decodeRecord decodes a __consumer_offsets record. Keys of a version klog
// does not know are reported with ok=false and no error, so newer records
// written by other coordinators are skipped rather than failing the load.
func decodeRecord(r Record) (d decoded, ok bool, err error) {
	if len(r.Key) < 2 {
		return d, false, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(r.Key))
	}
	switch kv := int16(binary.BigEndian.Uint16(r.Key)); kv {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(r.Key); err != nil {
			return d, false, fmt.Errorf("%w: offset key: %v", ErrBadRecord, err)
		}
		d = decoded{isOffset: true, group: k.Group, topic: k.Topic, part: k.Partition}
		if r.Value != nil {
			var v kmsg.OffsetCommitValue
			if err := v.ReadFrom(r.Value); err != nil {
				return d, false, fmt.Errorf("%w: offset value of %q %s/%d: %v", ErrBadRecord, k.Group, k.Topic, k.Partition, err)
			}
			d.offset = &v
		}
		return d, true, nil
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(r.Key); err != nil {
			return d, false, fmt.Errorf("%w: group key: %v", ErrBadRecord, err)
		}
		d = decoded{group: k.Group}
		if r.Value != nil {
			var v kmsg.GroupMetadataValue
			if err := v.ReadFrom(r.Value); err != nil {
				return d, false, fmt.Errorf("%w: group value of %q: %v", ErrBadRecord, k.Group, err)
			}
			d.meta = &v
		}
		return d, true, nil
	default:
		return d, false, nil
	}
}
