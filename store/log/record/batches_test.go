package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// batchesCase is what the view of raw should say.
type batchesCase struct {
	name          string
	raw           []byte
	sizes         []int // of the batches that parse
	err           error // Err
	firstErr      error // First
	frameErr      error // FirstFrame
	codec         Compression
	nextErr       error // NextFrame
	transactional bool
}

// TestParseBatches: the view holds the batches Parse accepts and why the
// rest is none, and frames the first two batches as Kafka does.
func TestParseBatches(t *testing.T) {
	one := mustBuild(t, NewBuilder(testTs), Record{Value: []byte("v")})
	txnBuilder := NewBuilder(testTs)
	txnBuilder.ProducerID, txnBuilder.ProducerEpoch, txnBuilder.BaseSequence, txnBuilder.Transactional = 7, 0, 0, true
	txn := mustBuild(t, txnBuilder, Record{Value: []byte("t")})
	zstdBuilder := NewBuilder(testTs)
	zstdBuilder.Compression = Zstd
	zstd := mustBuild(t, zstdBuilder, Record{Value: []byte("z")})
	join := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	withLength := func(b []byte, n int32) []byte {
		b = bytes.Clone(b)
		binary.BigEndian.PutUint32(b[offBatchLength:], uint32(n))
		return b
	}
	magic1 := bytes.Clone(one)
	Batch(magic1).SetMagic(1)
	// A frame Kafka takes whole that is shorter than a header.
	short := withLength(one[:frameHeaderSize+9], frameHeaderSize+9-lengthOverhead)

	var reused Batches // Parse resets a view that held the case before
	for _, c := range []batchesCase{
		{name: "empty", firstErr: ErrCorruptMessage, frameErr: ErrInvalidRecord},
		{name: "one", raw: one, sizes: []int{len(one)}},
		{name: "trailing bytes", raw: join(one, []byte{1, 2, 3}), sizes: []int{len(one)}, err: ErrCorruptMessage},
		{name: "two batches", raw: join(one, txn), sizes: []int{len(one), len(txn)}, nextErr: ErrInvalidRecord, transactional: true},
		{name: "truncated", raw: one[:len(one)-1], err: ErrCorruptMessage, firstErr: ErrCorruptMessage, frameErr: ErrInvalidRecord},
		{name: "magic 1", raw: magic1, err: ErrInvalidRecord, firstErr: ErrInvalidRecord, frameErr: ErrInvalidRecord},
		{name: "length below 14", raw: withLength(one, minFrameLength-1), err: ErrCorruptMessage, firstErr: ErrCorruptMessage, frameErr: ErrCorruptMessage},
		{name: "frame shorter than a header", raw: short, err: ErrCorruptMessage, firstErr: ErrCorruptMessage},
		{name: "second length below 14", raw: join(one, withLength(one[:frameHeaderSize], minFrameLength-1)), sizes: []int{len(one)}, err: ErrCorruptMessage, nextErr: ErrCorruptMessage},
		{name: "zstd", raw: zstd, sizes: []int{len(zstd)}, codec: Zstd},
		{name: "transactional", raw: txn, sizes: []int{len(txn)}, transactional: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fresh := ParseBatches(c.raw)
			c.check(t, &fresh)
			reused.Parse(c.raw)
			c.check(t, &reused)
		})
	}
}

func (c batchesCase) check(t *testing.T, v *Batches) {
	t.Helper()
	var sizes []int
	next := 0
	for pos, b := range v.All() {
		if pos != next {
			t.Fatalf("batch at %d, want %d", pos, next)
		}
		sizes = append(sizes, len(b))
		next += len(b)
	}
	if !slices.Equal(sizes, c.sizes) {
		t.Fatalf("batch sizes %v, want %v", sizes, c.sizes)
	}
	checkClass(t, "Err", v.Err(), c.err)
	first, err := v.First()
	checkClass(t, "First", err, c.firstErr)
	if want, werr := Parse(c.raw); !bytes.Equal(first, want) || (err == nil) != (werr == nil) {
		t.Fatalf("First %d bytes, %v; Parse %d bytes, %v", len(first), err, len(want), werr)
	}
	codec, err := v.FirstFrame()
	checkClass(t, "FirstFrame", err, c.frameErr)
	if codec != c.codec {
		t.Fatalf("FirstFrame codec %v, want %v", codec, c.codec)
	}
	checkClass(t, "NextFrame", v.NextFrame(), c.nextErr)
	if v.Transactional() != c.transactional {
		t.Fatalf("Transactional %v, want %v", v.Transactional(), c.transactional)
	}
	if !bytes.Equal(v.Bytes(), c.raw) {
		t.Fatal("Bytes differ from the parsed bytes")
	}
}

// checkClass fails unless err is of class want (nil for none).
func checkClass(t *testing.T, what string, err, want error) {
	t.Helper()
	if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// TestParseBatchesDoesNotAllocate: parsing the view of valid batches, and
// walking it, are free of allocations on the produce path.
func TestParseBatchesDoesNotAllocate(t *testing.T) {
	one := mustBuild(t, NewBuilder(testTs), Record{Value: []byte("v")})
	raw := bytes.Join([][]byte{one, one}, nil)
	var v Batches
	allocs := testing.AllocsPerRun(100, func() {
		v.Parse(raw)
		for range v.All() {
		}
		if _, err := v.FirstFrame(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}

// BenchmarkProduceHeaders is the header work of one produce partition of
// one small batch: "once" parses it into the view and reads the view as
// the produce checks and the log's validation do; "per-check" parses the
// header at each of those steps (the transactional scan, the framing, the
// transactional verification, the log's walk), as klog did before the view.
func BenchmarkProduceHeaders(b *testing.B) {
	bb := NewBuilder(testTs)
	bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = 1, 0, 0
	raw := mustBuild(b, bb, Record{Value: []byte("value")})
	b.Run("once", func(b *testing.B) {
		var v Batches
		for b.Loop() {
			v.Parse(raw)
			if v.Transactional() {
				b.Fatal("transactional")
			}
			if _, err := v.FirstFrame(); err != nil {
				b.Fatal(err)
			}
			if err := v.NextFrame(); err != nil {
				b.Fatal(err)
			}
			if _, err := v.First(); err != nil {
				b.Fatal(err)
			}
			for _, batch := range v.All() {
				if batch.RecordCount() != 1 {
					b.Fatal("count")
				}
			}
			if v.Err() != nil {
				b.Fatal(v.Err())
			}
		}
	})
	b.Run("per-check", func(b *testing.B) {
		walk := func() bool {
			transactional := false
			for rest := raw; len(rest) > 0; {
				batch, err := Parse(rest)
				if err != nil {
					break
				}
				transactional = transactional || batch.Attributes().Transactional()
				rest = rest[len(batch):]
			}
			return transactional
		}
		for b.Loop() {
			if walk() {
				b.Fatal("transactional")
			}
			if h, err := ParseHeader(raw); err != nil || h.Size() != len(raw) {
				b.Fatal(err)
			}
			if _, err := Parse(raw); err != nil {
				b.Fatal(err)
			}
			walk()
		}
	})
}
