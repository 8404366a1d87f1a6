package log

import (
	"errors"
	"fmt"
	"math"

	"github.com/klogdev/klog/store/log/record"
)

// batchInfo is what validation learns about one batch of an append.
type batchInfo struct {
	pos          int // start within the appended bytes
	size         int
	records      int32
	maxTimestamp int64
	// maxTsDelta is the offset delta of the first record holding
	// maxTimestamp (exact for uncompressed CreateTime batches; 0 for
	// LogAppendTime; the last delta for compressed batches, as Kafka).
	maxTsDelta int32
	fixMaxTs   bool // CreateTime batch whose header max timestamp was wrong

	// Producer fields, for producer state.
	producerID       int64 // -1 none
	producerEpoch    int16
	baseSequence     int32
	transactional    bool
	control          bool
	marker           int8 // transaction marker type: -1 none, 0 abort, 1 commit
	coordinatorEpoch int32
}

// validator checks appended batches against the log's rules; the batch
// view (store/log/record) checks their structure. It keeps no state
// between calls.
type validator struct {
	cfg  Config
	now  int64 // ms
	dec  *record.Decompressor
	name string // the log's directory name, topic-partition, for messages
}

// minDecompressBudget is the least decompression budget of a batch: the
// bound record.Records puts on reads.
const minDecompressBudget = record.MaxDecompressedBytes

// decompressBudget bounds what the records of one compressed batch may
// decompress to: max.message.bytes, so that every batch a client may
// send uncompressed may also come compressed, and at least 64 MiB, so
// that producers which fill a batch by its compressed size (the Java
// client's batch.size) may compress up to 64 times as well. A batch
// beyond it is refused (ErrInvalidRecord) as soon as decompression
// passes it, so a compression bomb costs at most the budget (twice it
// for zstd); Append holds the log's lock, so one log validates one batch
// at a time.
func (v *validator) decompressBudget() int {
	return max(minDecompressBudget, int(v.cfg.MaxMessageBytes))
}

// validate checks every batch of bs, whose headers ParseBatches checked,
// and appends one batchInfo per batch to infos. It never modifies the
// batches.
func (v *validator) validate(bs *record.Batches, infos []batchInfo) ([]batchInfo, error) {
	if len(bs.Bytes()) == 0 {
		return infos, fmt.Errorf("%w: no batches", ErrInvalidRecord)
	}
	for pos, batch := range bs.All() {
		if batch.Size() > int(v.cfg.MaxMessageBytes) {
			return infos, fmt.Errorf("%w: batch of %d bytes, max.message.bytes is %d", ErrMessageTooLarge, batch.Size(), v.cfg.MaxMessageBytes)
		}
		if err := batch.CheckCRC(); err != nil {
			return infos, err
		}
		info, err := v.validateBatch(batch)
		if err != nil {
			return infos, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		info.pos = pos
		infos = append(infos, info)
	}
	return infos, bs.Err()
}

func (v *validator) validateBatch(batch record.Batch) (batchInfo, error) {
	count := batch.RecordCount()
	if count <= 0 {
		return batchInfo{}, fmt.Errorf("%w: record count %d", ErrInvalidRecord, count)
	}
	lastDelta := batch.LastOffsetDelta()
	if lastDelta != count-1 {
		return batchInfo{}, fmt.Errorf("%w: last offset delta %d with %d records", ErrInvalidRecord, lastDelta, count)
	}
	attrs := batch.Attributes()
	codec := attrs.Compression()
	if !codec.Valid() {
		return batchInfo{}, fmt.Errorf("%w: compression codec %d", ErrInvalidRecord, codec)
	}
	info := batchInfo{size: batch.Size(), records: count, maxTimestamp: batch.MaxTimestamp(), maxTsDelta: lastDelta}
	maxTs, maxDelta, err := v.checkRecords(batch)
	if err != nil {
		return batchInfo{}, err
	}
	if !v.cfg.LogAppendTime {
		if codec == record.None {
			// Kafka keeps the last offset for a compressed batch.
			info.maxTsDelta = maxDelta
		}
		if maxTs != info.maxTimestamp {
			info.maxTimestamp, info.fixMaxTs = maxTs, true
		}
	}
	if v.cfg.LogAppendTime {
		info.maxTimestamp, info.maxTsDelta = v.now, 0
	}
	info.producerID = batch.ProducerID()
	info.producerEpoch = batch.ProducerEpoch()
	info.baseSequence = batch.BaseSequence()
	info.transactional = attrs.Transactional()
	info.control = attrs.Control()
	info.marker = -1
	if info.control && info.producerID >= 0 {
		m, ok, err := batch.TxnMarker()
		if err != nil {
			return batchInfo{}, err
		}
		if ok {
			info.marker, info.coordinatorEpoch = markerType(m.Commit), m.CoordinatorEpoch
		}
	}
	return info, nil
}

// markerType is a transaction marker's type as producer state keeps it:
// 0 abort, 1 commit.
func markerType(commit bool) int8 {
	if commit {
		return 1
	}
	return 0
}

// checkTimestamp applies message.timestamp.before/after.max.ms to a
// CreateTime timestamp; -1 (no timestamp) is accepted.
func (v *validator) checkTimestamp(ts int64) error {
	if v.cfg.LogAppendTime || ts == -1 {
		return nil
	}
	// now >= 0 and before >= 0 (sanitized), so now-before cannot overflow.
	if before := v.cfg.TimestampBeforeMaxMs; ts < v.now-before {
		return fmt.Errorf("%w: timestamp %d is more than %d ms before now (%d)", ErrInvalidTimestamp, ts, before, v.now)
	}
	if after := v.cfg.TimestampAfterMaxMs; after <= math.MaxInt64-v.now && ts > v.now+after {
		return fmt.Errorf("%w: timestamp %d is more than %d ms after now (%d)", ErrInvalidTimestamp, ts, after, v.now)
	}
	return nil
}

// checkRecords walks the records of a batch, in place without allocating
// when it is uncompressed, else decompressed within decompressBudget: the
// view checks that each parses and that they fill the (decompressed)
// records exactly, as many as the count says; offset deltas must run
// 0..count-1 and timestamps pass checkTimestamp. It returns the largest
// record timestamp and the offset delta of its first occurrence.
//
// A record without a key in a compacted log, or with a timestamp out of
// range, does not stop the walk: every record refused is listed in the
// *RecordErrors returned, with one error each (its key's first), as
// Kafka's LogValidator lists them.
func (v *validator) checkRecords(b record.Batch) (int64, int32, error) {
	baseTs := b.BaseTimestamp()
	maxTs, maxDelta := int64(-1), int32(0)
	var refused *RecordErrors
	refuse := func(i int32, err error, msg string) {
		switch {
		case refused == nil:
			refused = &RecordErrors{Err: err}
		case errors.Is(err, ErrInvalidTimestamp) && !errors.Is(refused.Err, ErrInvalidTimestamp):
			refused.Err = err // the batch is refused for its timestamps
		}
		refused.Records = append(refused.Records, RecordError{Index: i, Message: msg})
	}
	keyed := v.cfg.CleanupPolicy.Compact() && !b.Attributes().Control()
	it, err := b.RecordsWithin(v.dec, v.decompressBudget())
	if err != nil {
		return 0, 0, err
	}
	for it.Next() {
		r, i := it.Record(), it.Index()
		if r.OffsetDelta != i {
			return 0, 0, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, r.OffsetDelta)
		}
		if keyed && r.Key == nil {
			refuse(i, fmt.Errorf("%w: record %d has no key in a compacted log", ErrInvalidRecord, i),
				"Compacted topic cannot accept message without key in topic partition "+v.name)
			continue
		}
		ts := baseTs + r.TimestampDelta
		if baseTs == -1 {
			ts = -1
		}
		if err := v.checkTimestamp(ts); err != nil {
			// Kafka's words; the bounds are computed as Java's longs
			// are, wrapping.
			refuse(i, err, fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
				ts, b.BaseOffset()+int64(r.OffsetDelta), v.now-v.cfg.TimestampBeforeMaxMs, v.now+v.cfg.TimestampAfterMaxMs))
			continue
		}
		if ts > maxTs {
			maxTs, maxDelta = ts, i
		}
	}
	if err := it.Err(); err != nil {
		return 0, 0, err
	}
	if refused != nil {
		return 0, 0, refused
	}
	return maxTs, maxDelta, nil
}
