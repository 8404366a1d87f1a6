package log

import (
	"fmt"

	"github.com/klogdev/klog/store/log/record"
)

// AppendReplicated appends batches fetched from the partition's leader as
// they are: offsets, partition leader epochs, timestamps and CRCs stay the
// leader's bytes, as Kafka's UnifiedLog.appendAsFollower keeps them. Each
// batch's header and CRC are checked, and its base offset must be at or
// above the log end offset and above the previous batch's last offset;
// anything else refuses the whole request (ErrCorruptMessage,
// ErrInvalidRecord, ErrUnexpectedAppendOffset) and appends nothing.
//
// As on a follower in Kafka, a batch may start past the log end (the
// leader's log is compacted and has gaps), max.message.bytes is not
// applied, records are not validated and producer state is updated
// without checks (no sequence, epoch or duplicate refusal). The leader
// epoch cache learns every epoch above its latest from the batches,
// transaction markers end transactions and fill the .txnindex, and
// indexes and rolls follow the leader's rules batch by batch, so that a
// follower fed the leader's batches ends with the leader's files. An
// empty batches appends nothing.
func (l *Log) AppendReplicated(batches []byte) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	end := l.end.Load()
	res := AppendResult{FirstOffset: end, LastOffset: end - 1, LogAppendTime: -1, MaxTimestamp: -1}
	if len(batches) == 0 {
		return res, nil
	}
	cfg := l.mu.cfg
	infos, err := l.checkReplicatedLocked(batches, end, cfg, l.mu.infos[:0])
	l.mu.infos = infos[:0]
	if err != nil {
		return AppendResult{}, err
	}
	now := l.now()
	res.FirstOffset = record.Batch(batches).BaseOffset()
	res.Bytes = len(batches)
	last := &infos[len(infos)-1]
	lastOffset := record.Batch(batches[last.pos:]).LastOffset()
	res.LastOffset = lastOffset
	for i := range infos {
		res.Records += int(infos[i].records)
		res.MaxTimestamp = max(res.MaxTimestamp, infos[i].maxTimestamp)
	}
	// One write when the whole request fits the active segment; else batch
	// by batch, each rolling as the leader would have before it.
	seg := l.active()
	if l.rollReasonLocked(seg, now, int64(len(batches)), lastOffset, len(infos), cfg) == "" {
		return res, l.writeReplicatedLocked(batches, infos, cfg)
	}
	for i := range infos {
		in := infos[i : i+1]
		b := batches[in[0].pos : in[0].pos+in[0].size]
		in[0].pos = 0
		base, last := record.Batch(b).BaseOffset(), record.Batch(b).LastOffset()
		if seg := l.active(); !seg.empty() {
			if reason := l.rollReasonLocked(seg, now, int64(len(b)), last, 1, cfg); reason != "" {
				if err := l.rollAtLocked(now, reason, base); err != nil {
					return AppendResult{}, err
				}
			}
		} else if last-seg.base > maxRelOffset {
			if err := l.replaceEmptyActiveLocked(now, base); err != nil {
				return AppendResult{}, err
			}
		}
		if err := l.writeReplicatedLocked(b, in, cfg); err != nil {
			return AppendResult{}, err
		}
	}
	return res, nil
}

// checkReplicatedLocked checks the batches of AppendReplicated, the first
// of which must start at or after end, and appends one batchInfo per
// batch to infos. records is the batch's offset span (last offset delta +
// 1, which a compacted batch may have without as many records).
func (l *Log) checkReplicatedLocked(batches []byte, end int64, cfg Config, infos []batchInfo) ([]batchInfo, error) {
	next := end
	for pos := 0; pos < len(batches); {
		b, err := record.Parse(batches[pos:])
		if err != nil {
			return infos, fmt.Errorf("replicated batch at byte %d: %w", pos, err)
		}
		if err := b.CheckCRC(); err != nil {
			return infos, fmt.Errorf("replicated batch at offset %d: %w", b.BaseOffset(), err)
		}
		if b.BaseOffset() < next {
			what := "the log end offset"
			if pos > 0 {
				what = "the end of the batch before it"
			}
			return infos, fmt.Errorf("%w: replicated batch at offset %d starts below %s %d", ErrUnexpectedAppendOffset, b.BaseOffset(), what, next)
		}
		if b.LastOffset() < b.BaseOffset() {
			return infos, fmt.Errorf("%w: replicated batch at offset %d has last offset %d", ErrUnexpectedAppendOffset, b.BaseOffset(), b.LastOffset())
		}
		info, err := l.replicatedInfo(b, cfg)
		if err != nil {
			return infos, fmt.Errorf("replicated batch at offset %d: %w", b.BaseOffset(), err)
		}
		info.pos = pos
		infos = append(infos, info)
		next = b.LastOffset() + 1
		pos += b.Size()
	}
	return infos, nil
}

// replicatedInfo is what the log needs of a replicated batch. The offset
// delta of its max timestamp is found as the leader's Append found it, so
// that MaxTimestamp agrees: 0 under LogAppendTime, the last delta of a
// compressed batch, the first record holding the max of an uncompressed
// one.
func (l *Log) replicatedInfo(b record.Batch, cfg Config) (batchInfo, error) {
	attrs := b.Attributes()
	lastDelta := b.LastOffsetDelta()
	info := batchInfo{
		size: b.Size(), records: lastDelta + 1, maxTimestamp: b.MaxTimestamp(), maxTsDelta: lastDelta,
		producerID: b.ProducerID(), producerEpoch: b.ProducerEpoch(), baseSequence: b.BaseSequence(),
		transactional: attrs.Transactional(), control: attrs.Control(), marker: -1,
	}
	switch {
	case cfg.LogAppendTime:
		info.maxTsDelta = 0
	case attrs.Compression() == record.None:
		it, err := b.Records(&l.dec)
		if err != nil {
			return batchInfo{}, err
		}
		baseTs, maxTs := b.BaseTimestamp(), int64(-1)
		info.maxTsDelta = 0
		for it.Next() {
			r := it.Record()
			if ts := baseTs + r.TimestampDelta; baseTs != -1 && ts > maxTs {
				maxTs, info.maxTsDelta = ts, it.Index()
			}
		}
		if err := it.Err(); err != nil {
			return batchInfo{}, err
		}
	}
	if info.control && info.producerID >= 0 && attrs.Compression() == record.None {
		m, ok, err := b.TxnMarker()
		if err != nil {
			return batchInfo{}, err
		}
		if ok {
			info.marker, info.coordinatorEpoch = markerType(m.Commit), m.CoordinatorEpoch
		}
	}
	return info, nil
}

// writeReplicatedLocked writes batches (described by infos) to the active
// segment and applies them to the epoch cache, the indexes and producer
// state.
func (l *Log) writeReplicatedLocked(batches []byte, infos []batchInfo, cfg Config) error {
	for i := range infos {
		b := record.Batch(batches[infos[i].pos:])
		if e := b.PartitionLeaderEpoch(); e >= 0 {
			if err := l.assignEpochLocked(e, b.BaseOffset()); err != nil {
				return err
			}
		}
	}
	seg := l.active()
	pos := seg.size.Load()
	if _, err := seg.log.Write(batches); err != nil {
		return l.failLocked("write", fmt.Errorf("append to segment %d: %w", seg.base, err))
	}
	interval := int64(cfg.IndexIntervalBytes)
	var records int64
	ps := &l.mu.producers
	for i := range infos {
		in := &infos[i]
		b := record.Batch(batches[in.pos:])
		seg.appendIndexesLocked(pos+int64(in.pos), in, b.BaseOffset(), interval)
		records += int64(b.RecordCount())
		if in.producerID < 0 || (in.control && in.marker < 0) {
			continue
		}
		pb := producerBatch{
			producerID: in.producerID, epoch: in.producerEpoch, firstSeq: in.baseSequence,
			lastSeq: lastSequence(in.baseSequence, b.LastOffsetDelta()), firstOffset: b.BaseOffset(),
			lastOffset: b.LastOffset(), maxTimestamp: in.maxTimestamp, transactional: in.transactional,
			marker: in.marker, coordinatorEpoch: in.coordinatorEpoch,
		}
		if a, ok := ps.replayBatch(&pb); ok {
			seg.addAbortedLocked(a)
		}
	}
	seg.dirty = true
	seg.size.Store(pos + int64(len(batches)))
	l.end.Store(seg.next)
	l.fuo.Store(ps.firstUnstableOffset())
	l.mu.unflushedMsgs += records
	if l.mu.unflushedMsgs >= cfg.FlushMessages {
		return l.flushLocked()
	}
	return nil
}
