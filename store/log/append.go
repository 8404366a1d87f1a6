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
	// Patch offsets, epochs and timestamps (all before or outside the CRC
	// except the timestamp fixes, which recompute it).
	off := first
	res := AppendResult{FirstOffset: first, LogAppendTime: -1, MaxTimestamp: -1, Bytes: total, Records: int(records)}
	if cfg.LogAppendTime {
		res.LogAppendTime = v.now
	}
	for i := range infos {
		b := record.Batch(batches[infos[i].pos : infos[i].pos+infos[i].size])
		b.SetBaseOffset(off)
		if leaderEpoch >= 0 {
			b.SetPartitionLeaderEpoch(leaderEpoch)
		}
		if cfg.LogAppendTime {
			b.SetAttributes(b.Attributes().WithTimestampType(record.LogAppendTime))
			b.SetMaxTimestamp(v.now)
			b.Seal()
		} else if infos[i].fixMaxTs {
			b.SetMaxTimestamp(infos[i].maxTimestamp)
			b.Seal()
		}
		if infos[i].maxTimestamp > res.MaxTimestamp {
			res.MaxTimestamp = infos[i].maxTimestamp
		}
		off += int64(infos[i].records)
	}
	res.LastOffset = off - 1
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
	interval := int64(cfg.IndexIntervalBytes)
	off = first
	for i := range infos {
		seg.appendIndexesLocked(pos+int64(infos[i].pos), &infos[i], off, interval)
		off += int64(infos[i].records)
	}
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
