package log

import (
	"fmt"
	"math"
	"path"

	"github.com/klogdev/klog/store/log/record"
)

// AppendResult describes a successful Append.
type AppendResult struct {
	FirstOffset   int64
	LastOffset    int64
	LogAppendTime int64 // ms; -1 when the topic uses CreateTime
	MaxTimestamp  int64
	Records       int
	Bytes         int
	// Duplicate is set when the batch repeated one of the producer's
	// last five: nothing was appended, and the offsets (and max
	// timestamp) are those of the original.
	Duplicate bool
}

// Append validates batches (one or more v2 record batches, as carried by a
// produce request), assigns offsets by patching each base offset and
// partition leader epoch in place, and writes them with one write call.
// Nothing is appended when any batch is invalid. A leaderEpoch greater than
// the last known one starts a new leader-epoch-checkpoint entry; -1 leaves
// the epoch cache alone.
func (l *Log) Append(batches []byte, leaderEpoch int32) (AppendResult, error) {
	var bs record.Batches
	bs.Parse(batches)
	return l.AppendBatches(&bs, leaderEpoch)
}

// AppendBatches is Append of batches whose headers are parsed already: the
// log reads the view, not the headers again.
func (l *Log) AppendBatches(bs *record.Batches, leaderEpoch int32) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.appendLocked(bs, leaderEpoch, markerCheck{maxCoordinatorEpoch: math.MaxInt32})
}

// markerCheck is how a marker appended by appendMarker is checked: a
// producer's recorded coordinator epoch above maxCoordinatorEpoch does not
// fence it, and txnVersion is Marker.TransactionVersion.
type markerCheck struct {
	maxCoordinatorEpoch int32
	txnVersion          int8
}

// appendLocked is Append, with markers checked per mc. l.mu must be held.
func (l *Log) appendLocked(bs *record.Batches, leaderEpoch int32, mc markerCheck) (AppendResult, error) {
	if err := l.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	cfg := l.mu.cfg
	now := l.now()
	v := validator{cfg: cfg, now: max(now.UnixMilli(), 0), dec: &l.dec, name: path.Base(l.dir)}
	infos, err := v.validate(bs, l.mu.infos[:0])
	l.mu.infos = infos[:0]
	if err != nil {
		return AppendResult{}, err
	}
	batches := bs.Bytes()
	total := len(batches)
	if total > math.MaxInt32 {
		return AppendResult{}, fmt.Errorf("%w: append of %d bytes", ErrMessageTooLarge, total)
	}
	if dup, isDup, err := l.checkProducersLocked(infos, l.end.Load(), mc); err != nil || isDup {
		return dup, err
	}
	var records int64
	for i := range infos {
		records += int64(infos[i].records)
	}
	if err := l.maybeRollLocked(now, int64(total), records, cfg); err != nil {
		return AppendResult{}, err
	}
	seg := l.active()
	first := seg.next
	res := AppendResult{FirstOffset: first, LogAppendTime: -1, Bytes: total, Records: int(records)}
	if cfg.LogAppendTime {
		res.LogAppendTime = v.now
	}
	res.LastOffset, res.MaxTimestamp = patchBatches(batches, infos, first, leaderEpoch, cfg.LogAppendTime, v.now)
	if leaderEpoch >= 0 {
		if err := l.assignEpochLocked(leaderEpoch, first); err != nil {
			return AppendResult{}, err
		}
	}
	pos := seg.size.Load()
	if _, err := seg.log.Write(batches); err != nil {
		// The file may hold part of the write; the sticky error keeps it
		// from ever being acknowledged or extended, and recovery cuts it.
		return AppendResult{}, l.failLocked("write", fmt.Errorf("append to segment %d: %w", seg.base, err))
	}
	seg.indexBatchesLocked(pos, infos, first, int64(cfg.IndexIntervalBytes))
	seg.dirty = true
	seg.size.Store(pos + int64(total))
	l.end.Store(seg.next)
	l.commitProducersLocked(seg)
	l.mu.unflushedMsgs += records
	if l.mu.unflushedMsgs >= cfg.FlushMessages {
		if err := l.flushLocked(); err != nil {
			return AppendResult{}, err
		}
	}
	return res, nil
}

// patchBatches assigns the validated batches infos of batches the offsets
// from first and patches their headers in place: the base offset, the
// partition leader epoch (unless leaderEpoch is -1) and, with
// logAppendTime, the timestamp type and a max timestamp of now; a batch
// whose max timestamp the validator corrected gets the correct one. All of
// it lies before or outside the CRC except the timestamp changes, which
// reseal the batch. It returns the last offset assigned and the largest
// max timestamp of the batches as validated (-1 when there is none).
func patchBatches(batches []byte, infos []batchInfo, first int64, leaderEpoch int32, logAppendTime bool, now int64) (last, maxTimestamp int64) {
	off, maxTimestamp := first, int64(-1)
	for i := range infos {
		b := record.Batch(batches[infos[i].pos : infos[i].pos+infos[i].size])
		b.SetBaseOffset(off)
		if leaderEpoch >= 0 {
			b.SetPartitionLeaderEpoch(leaderEpoch)
		}
		if logAppendTime {
			b.SetAttributes(b.Attributes().WithTimestampType(record.LogAppendTime))
			b.SetMaxTimestamp(now)
			b.Seal()
		} else if infos[i].fixMaxTs {
			b.SetMaxTimestamp(infos[i].maxTimestamp)
			b.Seal()
		}
		if infos[i].maxTimestamp > maxTimestamp {
			maxTimestamp = infos[i].maxTimestamp
		}
		off += int64(infos[i].records)
	}
	return off - 1, maxTimestamp
}
