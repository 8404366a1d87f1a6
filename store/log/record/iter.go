package record

import (
	"encoding/binary"
	"fmt"
)

// Record is one record of a batch. An iterated record's slices alias the
// batch (or its decompressed records) and stay valid as long as those do.
type Record struct {
	Attributes     int8 // unused by Kafka; kept as written
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte // nil is a null key
	Value          []byte // nil is a null value (a tombstone)
	Headers        Headers
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte // nil is a null value
}

// Headers is the encoded header section of a record: a count varint, then
// per header the key (varint length, bytes) and the value (varint length,
// -1 for null, bytes). Iterated records carry it as stored, so reading a
// record never decodes (or allocates for) its headers, and a rebuilt
// record keeps them byte for byte. Empty Headers mean none.
type Headers []byte

// MakeHeaders encodes hs.
func MakeHeaders(hs ...Header) Headers {
	b := binary.AppendVarint(nil, int64(len(hs)))
	for _, h := range hs {
		b = appendBytes(b, []byte(h.Key))
		b = appendBytes(b, h.Value)
	}
	return b
}

// Decode returns the headers, nil when there are none. Headers of an
// iterated record are well formed; for other bytes decoding stops at the
// first malformed header.
func (h Headers) Decode() []Header {
	r := reader{b: h}
	n := r.varint()
	if r.bad || n <= 0 || n > int64(len(r.b)) {
		return nil
	}
	out := make([]Header, 0, n)
	for range n {
		k := r.bytes(false)
		v := r.bytes(true)
		if r.bad {
			break
		}
		out = append(out, Header{Key: string(k), Value: v})
	}
	return out
}

// Iter walks the records of a batch; see Batch.Records. The walk checks
// the structure as it goes: every record must parse and fill its length
// exactly, and the records must fill the records section exactly.
//
//	it, err := b.Records(nil)
//	for it.Next() {
//		r := it.Record()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type Iter struct {
	b    []byte // records not yet read
	left int32  // records still to read
	i    int32  // index of the next record
	err  error
	rec  Record
}

// Records returns an iterator over the batch's RecordCount records. An
// uncompressed batch is walked in place without allocating. A compressed
// one is decompressed first with d, within MaxDecompressedBytes (see
// RecordsWithin); d may be nil only when the caller knows the batch is
// uncompressed, and a compressed batch then gives ErrInvalidRecord.
func (b Batch) Records(d *Decompressor) (Iter, error) {
	return b.RecordsWithin(d, MaxDecompressedBytes)
}

// RecordsWithin is Records with compressed records bounded to limit
// bytes: data that does not decompress is ErrCorruptMessage, records
// larger than limit ErrInvalidRecord (see Decompressor.DecompressWithin).
func (b Batch) RecordsWithin(d *Decompressor, limit int) (Iter, error) {
	data := b.RecordBytes()
	if c := b.Attributes().Compression(); c != None {
		if d == nil {
			return Iter{}, fmt.Errorf("%w: %v records read without a decompressor", ErrInvalidRecord, c)
		}
		var err error
		if data, err = d.DecompressWithin(c, data, limit); err != nil {
			return Iter{}, err
		}
	}
	n := b.RecordCount()
	if n < 0 {
		return Iter{}, fmt.Errorf("%w: record count %d", ErrCorruptMessage, n)
	}
	return Iter{b: data, left: n}, nil
}

// Next reads the next record; it returns false after the last one or at
// the first fault (see Err).
func (it *Iter) Next() bool {
	if it.err != nil {
		return false
	}
	if it.left == 0 {
		if len(it.b) != 0 {
			// As Kafka: more data than the count says is a count lie.
			it.err = fmt.Errorf("%w: %d bytes after the last of %d records", ErrInvalidRecord, len(it.b), it.i)
		}
		return false
	}
	i := it.i
	r := reader{b: it.b}
	length := r.varint()
	if r.bad || length < 0 || length > int64(len(r.b)) {
		if len(it.b) == 0 {
			// The records ended where one should start: the count lies.
			it.err = fmt.Errorf("%w: batch claims %d records, holds %d", ErrInvalidRecord, i+it.left, i)
		} else {
			it.err = fmt.Errorf("%w: record %d: bad length", ErrCorruptMessage, i)
		}
		return false
	}
	it.b = r.b[length:]
	r.b = r.b[:length:length]
	attrs := r.byte()
	tsDelta := r.varint()
	offDelta := r.varint()
	key := r.take(r.varint(), true)
	value := r.take(r.varint(), true)
	headers := r.b
	count := r.varint()
	if r.bad || count < 0 || count > int64(len(r.b)) {
		it.err = fmt.Errorf("%w: record %d: malformed", ErrCorruptMessage, i)
		return false
	}
	for range count {
		r.take(r.varint(), false)
		r.take(r.varint(), true)
	}
	if r.bad || len(r.b) != 0 {
		it.err = fmt.Errorf("%w: record %d: malformed headers or trailing bytes", ErrCorruptMessage, i)
		return false
	}
	if int64(int32(offDelta)) != offDelta {
		it.err = fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, offDelta)
		return false
	}
	// Field by field: assigning a whole Record would copy it through a
	// temporary, which costs more than the rest of the walk.
	rec := &it.rec
	rec.Attributes, rec.TimestampDelta, rec.OffsetDelta = int8(attrs), tsDelta, int32(offDelta)
	rec.Key, rec.Value, rec.Headers = key, value, headers
	it.i++
	it.left--
	return true
}

// Record is the record Next read; it is overwritten by the next call.
func (it *Iter) Record() *Record { return &it.rec }

// Index is the position in the batch of the record Next read (0 first).
func (it *Iter) Index() int32 { return it.i - 1 }

// Err is the fault that ended the walk, nil when it ended after the last
// record. Faults are ErrCorruptMessage, except (ErrInvalidRecord, as Kafka
// has it) an offset delta outside int32 and a record count that disagrees
// with the records: they end before the count is reached, or go on after
// it.
func (it *Iter) Err() error { return it.err }

// reader decodes the fields of one record. A fault sets bad and empties
// b, so later reads return zero values and the fast paths need no check.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) fail() { r.b, r.bad = nil, true }

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// varint reads a zig-zag varint of at most 10 bytes, as binary.Varint
// does; it is small enough to be inlined into the record walk.
func (r *reader) varint() int64 {
	var ux uint64
	for i, c := range r.b {
		if i == binary.MaxVarintLen64 || i == binary.MaxVarintLen64-1 && c > 1 {
			break // overflows 64 bits
		}
		ux |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.b = r.b[i+1:]
			return int64(ux>>1) ^ -int64(ux&1)
		}
	}
	r.fail()
	return 0
}

// bytes reads a length-prefixed field; a nullable one may have length -1,
// returned as nil.
func (r *reader) bytes(nullable bool) []byte { return r.take(r.varint(), nullable) }

// take reads a field of length l (bytes, split so that both halves inline
// into the record walk).
func (r *reader) take(l int64, nullable bool) []byte {
	if uint64(l) <= uint64(len(r.b)) {
		v := r.b[:l:l]
		r.b = r.b[l:]
		return v
	}
	if l != -1 || !nullable {
		r.fail()
	}
	return nil
}
