package log

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/klogdev/klog/store/log/record"
)

// txnEntrySize is the size of one .txnindex entry: version int16,
// producerId int64, firstOffset int64, lastOffset int64, lastStableOffset
// int64.
const txnEntrySize = 34

// AbortedTxn is one entry of a segment's transaction index: an aborted
// transaction, from its first batch to its abort marker.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64 // offset of the abort marker
	LastStableOffset int64 // last stable offset when the marker was written
}

func appendAbortedTxns(dst []byte, es []AbortedTxn) []byte {
	for _, e := range es {
		dst = binary.BigEndian.AppendUint16(dst, 0)
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.FirstOffset))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastStableOffset))
	}
	return dst
}

// parseTxnIndex decodes a .txnindex file of the segment [base, next).
func parseTxnIndex(b []byte, base, next int64) ([]AbortedTxn, error) {
	if len(b)%txnEntrySize != 0 {
		return nil, fmt.Errorf("%w: transaction index size %d", ErrCorrupt, len(b))
	}
	var es []AbortedTxn
	for i := 0; i < len(b); i += txnEntrySize {
		if v := int16(binary.BigEndian.Uint16(b[i:])); v != 0 {
			return nil, fmt.Errorf("%w: transaction index entry %d has version %d", ErrCorrupt, i/txnEntrySize, v)
		}
		e := AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(b[i+2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(b[i+10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(b[i+18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(b[i+26:])),
		}
		if e.FirstOffset > e.LastOffset || e.LastOffset < base || e.LastOffset >= next {
			return nil, fmt.Errorf("%w: transaction index entry %d [%d, %d] outside segment [%d, %d)", ErrCorrupt, i/txnEntrySize, e.FirstOffset, e.LastOffset, base, next)
		}
		es = append(es, e)
	}
	return es, nil
}

// AbortedTransactions lists the aborted transactions overlapping [from,
// upTo) — LastOffset >= from and FirstOffset < upTo — from the transaction
// indexes of the segments holding from and after, stopping at the first
// entry whose last stable offset reaches upTo (no later abort can overlap
// the range). A read_committed fetch sends them so that clients drop
// aborted batches. It takes no Log lock.
func (l *Log) AbortedTransactions(from, upTo int64) []AbortedTxn {
	var out []AbortedTxn
	segs := l.segments()
	for i := segmentFor(segs, from); i < len(segs); i++ {
		s := segs[i]
		s.imu.RLock()
		done := false
		for _, e := range s.imu.aborted {
			if e.LastOffset >= from && e.FirstOffset < upTo {
				out = append(out, e)
			}
			if e.LastStableOffset >= upTo {
				done = true
				break
			}
		}
		s.imu.RUnlock()
		if done {
			break
		}
	}
	return out
}

// Marker is the end of one producer's transaction.
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Timestamp        int64 // ms; 0 means now
	// TransactionVersion is the transaction version of the transaction
	// the marker ends (WriteTxnMarkers v2, KIP-1228). From 2 (KIP-890
	// part 2, where the coordinator bumps the epoch to end a
	// transaction) the marker's epoch must be above the producer's, as
	// Kafka's ProducerAppendInfo.checkProducerEpoch requires; equal is
	// accepted only as a retry of a marker already written (no
	// transaction open). Below 2 it must not be below it.
	TransactionVersion int8
}

// AppendMarker writes a transaction marker for one producer: a control
// batch (transactional and control attributes) holding one record whose key
// is version 0 and type (0 abort, 1 commit) and whose value is version 0
// and the coordinator epoch. It ends the producer's open transaction; an
// abort adds an entry to the active segment's transaction index. A marker
// for a producer without an open transaction is written all the same and
// records nothing. It returns the marker's offset.
func (l *Log) AppendMarker(m Marker, leaderEpoch int32) (int64, error) {
	return l.appendMarker(m, leaderEpoch, math.MaxInt32)
}

// AppendCoordinatorMarker is AppendMarker for the marker of a coordinator
// that knows no coordinator epoch above maxCoordinatorEpoch was ever held
// (klog's node: the highest leader epoch of __transaction_state). A
// producer's recorded coordinator epoch above it came from no coordinator,
// a client forged it, and does not fence this marker, which records its
// own epoch instead; a recorded epoch up to it still fences it
// (ErrTransactionCoordinatorFenced), as in Kafka. Without it one forged
// marker would fence every later transaction of the producer for good.
func (l *Log) AppendCoordinatorMarker(m Marker, leaderEpoch, maxCoordinatorEpoch int32) (int64, error) {
	return l.appendMarker(m, leaderEpoch, maxCoordinatorEpoch)
}

func (l *Log) appendMarker(m Marker, leaderEpoch, maxCoordinatorEpoch int32) (int64, error) {
	if m.ProducerID < 0 {
		return 0, fmt.Errorf("%w: transaction marker without producer id", ErrInvalidRecord)
	}
	ts := m.Timestamp
	if ts == 0 {
		ts = l.now().UnixMilli()
	}
	tm := record.TxnMarker{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Commit: m.Commit, CoordinatorEpoch: m.CoordinatorEpoch}
	bs := record.ParseBatches(tm.AppendBatch(nil, ts))
	l.mu.Lock()
	res, err := l.appendLocked(&bs, leaderEpoch, markerCheck{maxCoordinatorEpoch, m.TransactionVersion})
	l.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("append marker for producer %d: %w", m.ProducerID, err)
	}
	return res.FirstOffset, nil
}
