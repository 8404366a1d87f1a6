package log

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// Record batch v2 header layout (big endian), see the package doc.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offBaseTimestamp   = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offRecordCount     = 57
	batchHeaderSize    = 61

	// batchOverhead is the part of the header not counted by batchLength.
	batchOverhead = 12
	// scanHeaderSize is what recovery and lookups read of each header: up
	// to and including maxTimestamp.
	scanHeaderSize = offProducerID

	attrCompressionMask = 0x07
	attrLogAppendTime   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20

	// maxBatchSize bounds any batch klog will read back from disk, whatever
	// the config said when it was written.
	maxBatchSize = math.MaxInt32 - batchOverhead
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the decoded fixed part of a batch that the log needs.
type header struct {
	baseOffset      int64
	size            int // whole batch, batchLength + 12
	magic           int8
	attributes      int16
	lastOffsetDelta int32
	baseTimestamp   int64
	maxTimestamp    int64
}

func (h *header) lastOffset() int64 { return h.baseOffset + int64(h.lastOffsetDelta) }

// parseScanHeader decodes the first scanHeaderSize bytes of a batch.
func parseScanHeader(b []byte) (header, error) {
	if len(b) < scanHeaderSize {
		return header{}, fmt.Errorf("%w: batch header truncated (%d bytes)", ErrCorruptMessage, len(b))
	}
	h := header{
		baseOffset:      int64(binary.BigEndian.Uint64(b[offBaseOffset:])),
		magic:           int8(b[offMagic]),
		attributes:      int16(binary.BigEndian.Uint16(b[offAttributes:])),
		lastOffsetDelta: int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:])),
		baseTimestamp:   int64(binary.BigEndian.Uint64(b[offBaseTimestamp:])),
		maxTimestamp:    int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])),
	}
	length := int32(binary.BigEndian.Uint32(b[offBatchLength:]))
	if length < batchHeaderSize-batchOverhead || int64(length) > maxBatchSize {
		return h, fmt.Errorf("%w: batch length %d", ErrCorruptMessage, length)
	}
	h.size = int(length) + batchOverhead
	if h.magic != 2 {
		// A produce request may only carry magic 2 batches; anything else
		// is rejected as an invalid record, not as corruption.
		return h, fmt.Errorf("%w: magic %d (only record batch v2 is supported)", ErrInvalidRecord, h.magic)
	}
	if h.lastOffsetDelta < 0 {
		return h, fmt.Errorf("%w: negative last offset delta %d", ErrCorruptMessage, h.lastOffsetDelta)
	}
	return h, nil
}

// checkCRC verifies the CRC-32C of a complete batch.
func checkCRC(b []byte) error {
	want := binary.BigEndian.Uint32(b[offCRC:])
	if got := crc32.Checksum(b[offAttributes:], castagnoli); got != want {
		return fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptMessage, want, got)
	}
	return nil
}

func setCRC(b []byte) {
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
}

// batchInfo is what validation learns about one batch of an append.
type batchInfo struct {
	pos          int // start within the appended bytes
	size         int
	records      int32
	maxTimestamp int64
	// maxTsDelta is the offset delta of the first record holding
	// maxTimestamp (exact for uncompressed CreateTime batches; 0 for
	// LogAppendTime; the last delta for compressed batches).
	maxTsDelta int32
	fixMaxTs   bool // uncompressed CreateTime batch whose header max timestamp was wrong

	// Producer fields, for producer state.
	producerID       int64 // -1 none
	producerEpoch    int16
	baseSequence     int32
	transactional    bool
	control          bool
	marker           int8 // transaction marker type: -1 none, 0 abort, 1 commit
	coordinatorEpoch int32
}

// validator checks appended batches; it keeps no state between calls other
// than reusable scratch space.
type validator struct {
	cfg Config
	now int64 // ms
}

// validate checks every batch in b and appends one batchInfo per batch to
// infos. It never modifies b.
func (v *validator) validate(b []byte, infos []batchInfo) ([]batchInfo, error) {
	if len(b) == 0 {
		return infos, fmt.Errorf("%w: no batches", ErrInvalidRecord)
	}
	for pos := 0; pos < len(b); {
		rest := b[pos:]
		if len(rest) < batchHeaderSize {
			return infos, fmt.Errorf("%w: %d trailing bytes are not a batch", ErrCorruptMessage, len(rest))
		}
		h, err := parseScanHeader(rest)
		if err != nil {
			return infos, err
		}
		if h.size > len(rest) {
			return infos, fmt.Errorf("%w: batch of %d bytes, only %d present", ErrCorruptMessage, h.size, len(rest))
		}
		if h.size > int(v.cfg.MaxMessageBytes) {
			return infos, fmt.Errorf("%w: batch of %d bytes, max.message.bytes is %d", ErrMessageTooLarge, h.size, v.cfg.MaxMessageBytes)
		}
		batch := rest[:h.size]
		if err := checkCRC(batch); err != nil {
			return infos, err
		}
		info, err := v.validateBatch(batch, &h)
		if err != nil {
			return infos, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		info.pos = pos
		infos = append(infos, info)
		pos += h.size
	}
	return infos, nil
}

func (v *validator) validateBatch(batch []byte, h *header) (batchInfo, error) {
	count := int32(binary.BigEndian.Uint32(batch[offRecordCount:]))
	if count <= 0 {
		return batchInfo{}, fmt.Errorf("%w: record count %d", ErrInvalidRecord, count)
	}
	if h.lastOffsetDelta != count-1 {
		return batchInfo{}, fmt.Errorf("%w: last offset delta %d with %d records", ErrInvalidRecord, h.lastOffsetDelta, count)
	}
	codec := h.attributes & attrCompressionMask
	if codec > 4 {
		return batchInfo{}, fmt.Errorf("%w: compression codec %d", ErrInvalidRecord, codec)
	}
	info := batchInfo{size: h.size, records: count, maxTimestamp: h.maxTimestamp, maxTsDelta: h.lastOffsetDelta}
	if codec == 0 {
		maxTs, maxDelta, err := v.checkRecords(batch[batchHeaderSize:], count, h.baseTimestamp)
		if err != nil {
			return batchInfo{}, err
		}
		if !v.cfg.LogAppendTime {
			info.maxTsDelta = maxDelta
			if maxTs != h.maxTimestamp {
				info.maxTimestamp, info.fixMaxTs = maxTs, true
			}
		}
	} else if !v.cfg.LogAppendTime {
		// Records are not decompressed: the header's timestamps stand for
		// the batch.
		if err := v.checkTimestamp(h.baseTimestamp); err != nil {
			return batchInfo{}, err
		}
		if err := v.checkTimestamp(h.maxTimestamp); err != nil {
			return batchInfo{}, err
		}
	}
	if v.cfg.LogAppendTime {
		info.maxTimestamp, info.maxTsDelta = v.now, 0
	}
	info.producerID = int64(binary.BigEndian.Uint64(batch[offProducerID:]))
	info.producerEpoch = int16(binary.BigEndian.Uint16(batch[offProducerEpoch:]))
	info.baseSequence = int32(binary.BigEndian.Uint32(batch[offBaseSequence:]))
	info.transactional = h.attributes&attrTransactional != 0
	info.control = h.attributes&attrControl != 0
	info.marker = -1
	if info.control && info.producerID >= 0 {
		if codec != 0 {
			return batchInfo{}, fmt.Errorf("%w: compressed control batch", ErrInvalidRecord)
		}
		typ, coordinatorEpoch, err := parseMarker(batch[batchHeaderSize:])
		if err != nil {
			return batchInfo{}, err
		}
		info.marker, info.coordinatorEpoch = typ, coordinatorEpoch
	}
	return info, nil
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

// checkRecords walks the records of an uncompressed batch without
// allocating: each must parse, offset deltas must run 0..count-1, and the
// records must fill the batch exactly. It returns the largest record
// timestamp and the offset delta of its first occurrence.
func (v *validator) checkRecords(b []byte, count int32, baseTs int64) (int64, int32, error) {
	maxTs, maxDelta := int64(-1), int32(0)
	for i := range count {
		length, n := binary.Varint(b)
		if n <= 0 || length < 0 || length > int64(len(b)-n) {
			return 0, 0, fmt.Errorf("%w: record %d: bad length", ErrCorruptMessage, i)
		}
		rec := b[n : n+int(length)]
		b = b[n+int(length):]
		r := recordReader{b: rec}
		r.byte() // attributes
		tsDelta := r.varint()
		offDelta := r.varint()
		r.bytes(true)         // key
		r.bytes(true)         // value
		headers := r.varint() // header count
		if r.bad || headers < 0 || headers > int64(len(r.b)) {
			return 0, 0, fmt.Errorf("%w: record %d: malformed", ErrCorruptMessage, i)
		}
		for range headers {
			r.bytes(false)
			r.bytes(true)
		}
		if r.bad || len(r.b) != 0 {
			return 0, 0, fmt.Errorf("%w: record %d: malformed headers or trailing bytes", ErrCorruptMessage, i)
		}
		if offDelta != int64(i) {
			return 0, 0, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, offDelta)
		}
		ts := baseTs + tsDelta
		if baseTs == -1 {
			ts = -1
		}
		if err := v.checkTimestamp(ts); err != nil {
			return 0, 0, err
		}
		if ts > maxTs {
			maxTs, maxDelta = ts, i
		}
	}
	if len(b) != 0 {
		return 0, 0, fmt.Errorf("%w: %d bytes after the last record", ErrCorruptMessage, len(b))
	}
	return maxTs, maxDelta, nil
}

// recordReader decodes the fields of one record; any error sets bad and
// makes later reads no-ops.
type recordReader struct {
	b   []byte
	bad bool
}

func (r *recordReader) byte() {
	if r.bad || len(r.b) < 1 {
		r.bad = true
		return
	}
	r.b = r.b[1:]
}

func (r *recordReader) varint() int64 {
	if r.bad {
		return 0
	}
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *recordReader) bytes(nullable bool) {
	l := r.varint()
	if r.bad {
		return
	}
	if l == -1 && nullable {
		return
	}
	if l < 0 || l > int64(len(r.b)) {
		r.bad = true
		return
	}
	r.b = r.b[l:]
}

// firstRecordAtOrAfterFrom returns the offset delta and timestamp of the
// first record with offset delta >= from and timestamp >= ts among the
// uncompressed records of a CreateTime batch with base timestamp baseTs.
// Malformed records end the search.
func firstRecordAtOrAfterFrom(records []byte, baseTs, ts int64, from int32) (int32, int64, bool) {
	b := records
	for len(b) > 0 {
		length, n := binary.Varint(b)
		if n <= 0 || length < 0 || length > int64(len(b)-n) {
			return 0, 0, false
		}
		r := recordReader{b: b[n : n+int(length)]}
		b = b[n+int(length):]
		r.byte()
		tsDelta := r.varint()
		offDelta := r.varint()
		if r.bad {
			return 0, 0, false
		}
		if rts := baseTs + tsDelta; offDelta >= int64(from) && rts >= ts {
			return int32(offDelta), rts, true
		}
	}
	return 0, 0, false
}
