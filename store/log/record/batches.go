package record

import (
	"fmt"
	"iter"
)

// Kafka's framing of a produce request's records (ByteBufferLogInputStream):
// a frame needs the header up to the magic byte, and a batch length below
// the smallest v0 message's is corrupt.
const (
	frameHeaderSize = offMagic + 1
	minFrameLength  = 14
)

// Batches is the parsed view of the record batches appended together: a
// produce request's records for one partition, or any run of batches.
// ParseBatches reads their headers once; the produce checks and the log's
// append read the view instead of the bytes. It holds the batches that
// Parse accepts from the start, in order, and why the bytes after them are
// no batch; and, for the produce checks, the first two batches as Kafka
// frames them.
type Batches struct {
	raw []byte
	// parsed is the size of the batches Parse accepted from raw[0]; err
	// is why raw[parsed:] is no batch, nil when parsed == len(raw).
	parsed        int
	err           error
	transactional bool // one of the parsed batches is
	// frames are the sizes of the first two frames, the second starting
	// where the first ends: 0 for none, -1 for a batch length below 14.
	frames [2]int
}

// ParseBatches parses the headers of the batches in raw (see Parse), as
// far as they parse, and frames the first two as Kafka does. It checks
// neither CRCs nor records, and never fails: the view says what is wrong.
func ParseBatches(raw []byte) Batches {
	var v Batches
	v.Parse(raw)
	return v
}

// Parse is ParseBatches into v, which it resets: a view kept in place
// (a slice of views, one per partition) is parsed without a copy.
func (v *Batches) Parse(raw []byte) {
	*v = Batches{raw: raw}
	for v.parsed < len(raw) {
		b, err := Parse(raw[v.parsed:])
		if err != nil {
			v.err = err
			break
		}
		v.transactional = v.transactional || b.Attributes().Transactional()
		v.parsed += len(b)
	}
	v.frames[0] = frame(raw)
	if v.frames[0] > 0 {
		v.frames[1] = frame(raw[v.frames[0]:])
	}
}

// frame is the size of the batch at the start of b as Kafka frames it: 0
// when it is not all there, -1 when its length is below 14.
func frame(b []byte) int {
	if len(b) < frameHeaderSize {
		return 0
	}
	length := Batch(b).Length()
	if length < minFrameLength {
		return -1
	}
	if n := int64(length) + lengthOverhead; n <= int64(len(b)) {
		return int(n)
	}
	return 0
}

// ProducerID is the producer id of the first batch, -1 when none parsed.
func (v *Batches) ProducerID() int64 {
	if v.parsed == 0 {
		return -1
	}
	return Batch(v.raw).ProducerID()
}

// Bytes are the batches as given to ParseBatches.
func (v *Batches) Bytes() []byte { return v.raw }

// All yields each batch that parsed, from the start, with its position in
// Bytes.
func (v *Batches) All() iter.Seq2[int, Batch] {
	return func(yield func(int, Batch) bool) {
		for pos := 0; pos < v.parsed; {
			b := Batch(v.raw[pos:])
			b = b[:b.Size()]
			if !yield(pos, b) {
				return
			}
			pos += len(b)
		}
	}
}

// Err is why the bytes after the batches that parsed are no batch (Parse's
// error), nil when every byte belongs to one.
func (v *Batches) Err() error { return v.err }

// First is the first batch, or why it does not parse, as Parse(Bytes())
// returns them.
func (v *Batches) First() (Batch, error) {
	if v.parsed == 0 {
		if v.err != nil {
			return nil, v.err
		}
		return Parse(v.raw) // no bytes: Parse's error for them
	}
	b := Batch(v.raw)
	return b[:b.Size()], nil
}

// Transactional reports whether a batch that parsed has the transactional
// bit.
func (v *Batches) Transactional() bool { return v.transactional }

// FirstFrame checks the first batch as Kafka's ProduceRequest.validateRecords
// does, framing it as ByteBufferLogInputStream does: it must be all there
// (ErrInvalidRecord; a batch length below 14 is ErrCorruptMessage) and of
// magic 2 (ErrInvalidRecord), whatever else its header says. It returns
// the batch's codec, None when the batch is shorter than a header.
func (v *Batches) FirstFrame() (Compression, error) {
	switch size := v.frames[0]; {
	case size < 0:
		return None, fmt.Errorf("%w: batch length %d", ErrCorruptMessage, Batch(v.raw).Length())
	case size == 0:
		return None, fmt.Errorf("%w: no whole batch in %d bytes", ErrInvalidRecord, len(v.raw))
	case Batch(v.raw).Magic() != 2:
		return None, fmt.Errorf("%w: magic %d (only record batch v2 is supported)", ErrInvalidRecord, Batch(v.raw).Magic())
	case size < HeaderSize:
		return None, nil
	}
	return Batch(v.raw).Attributes().Compression(), nil
}

// NextFrame checks, as FirstFrame does, what follows the first batch as
// Kafka frames it: a second whole batch is ErrInvalidRecord (a produce
// partition carries one), a batch length below 14 ErrCorruptMessage. Bytes
// that are no whole batch pass; Parse refuses them (Err).
func (v *Batches) NextFrame() error {
	switch size := v.frames[1]; {
	case size < 0:
		return fmt.Errorf("%w: batch length %d after the first batch", ErrCorruptMessage, Batch(v.raw[v.frames[0]:]).Length())
	case size > 0:
		return fmt.Errorf("%w: a second batch of %d bytes", ErrInvalidRecord, size)
	}
	return nil
}
