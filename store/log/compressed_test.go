package log

import (
	"bytes"
	"errors"
	"io"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
)

// codecCase is a codec and framing a client may send.
type codecCase struct {
	name  string
	codec record.Compression
	raw   bool // raw snappy rather than xerial framing
	// zeros compresses n zero bytes the codec's way, for compression
	// bombs.
	zeros func(t testing.TB, n int) []byte
}

var codecCases = []codecCase{
	{"gzip", record.Gzip, false, func(t testing.TB, n int) []byte {
		return repeatFrame(t, n, func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, gzip.BestSpeed) })
	}},
	{"snappy-xerial", record.Snappy, false, func(_ testing.TB, n int) []byte {
		// One framing header, then the blocks of a chunk over and over.
		chunk := xerial.Encode(nil, make([]byte, zeroChunk))
		header, blocks := chunk[:len(xerial.Encode(nil, nil))], chunk[len(xerial.Encode(nil, nil)):]
		return append(header, bytes.Repeat(blocks, n/zeroChunk)...)
	}},
	{"snappy-raw", record.Snappy, true, func(_ testing.TB, n int) []byte { return s2.EncodeSnappy(nil, make([]byte, n)) }},
	{"lz4", record.LZ4, false, func(t testing.TB, n int) []byte {
		return repeatFrame(t, n, func(w io.Writer) (io.WriteCloser, error) { return lz4.NewWriter(w), nil })
	}},
	{"zstd", record.Zstd, false, func(t testing.TB, n int) []byte {
		return repeatFrame(t, n, func(w io.Writer) (io.WriteCloser, error) {
			return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		})
	}},
}

// zeroChunk is the zeros one frame of a bomb holds.
const zeroChunk = 8 << 20

// repeatFrame compresses zeroChunk zeros into one frame and repeats it
// (the decoders read concatenated frames) to make n zeros: a bomb built
// in no time.
func repeatFrame(t testing.TB, n int, newWriter func(io.Writer) (io.WriteCloser, error)) []byte {
	t.Helper()
	var frame bytes.Buffer
	w, err := newWriter(&frame)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, zeroChunk)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(frame.Bytes(), n/zeroChunk)
}

// compressed builds a batch of recs as the codec's client sends it, at
// the clock's time.
func (e *env) compressed(c codecCase, recs ...logtest.Record) []byte {
	return logtest.BatchWith(logtest.Options{BaseTimestamp: e.clk.UnixMilli(), Compression: int8(c.codec), RawSnappy: c.raw}, recs...)
}

// withRecords builds a batch of one record whose records section, said
// to be compressed with c, is body.
func (e *env) withRecords(c codecCase, body []byte) []byte {
	bb := record.NewBuilder(e.clk.UnixMilli())
	bb.Compression = c.codec
	bb.Append(record.Record{Value: []byte("v")})
	return bb.AppendRaw(nil, body)
}

// patched returns a copy of b changed by f and resealed.
func patched(b []byte, f func(record.Batch)) []byte {
	b = bytes.Clone(b)
	f(record.Batch(b))
	record.Batch(b).Seal()
	return b
}

// withDeltas builds a compressed batch of records at the given offset
// deltas whose header agrees with their count (last delta count-1).
func (e *env) withDeltas(c codecCase, deltas ...int32) []byte {
	bb := record.NewBuilder(e.clk.UnixMilli())
	bb.Compression, bb.RawSnappy = c.codec, c.raw
	for _, d := range deltas {
		bb.Append(record.Record{OffsetDelta: d, Value: []byte("v")})
	}
	b, err := bb.Build()
	if err != nil {
		e.t.Fatal(err)
	}
	return patched(b, func(b record.Batch) { b.SetLastOffsetDelta(int32(len(deltas) - 1)) })
}

// TestAppendCompressedValidation: compressed batches are decompressed and
// their records checked as uncompressed ones are (Kafka's LogValidator,
// validateMessagesAndAssignOffsetsCompressed): data that does not decode
// is ErrCorruptMessage (CORRUPT_MESSAGE); a count or offset deltas that
// disagree with the records are ErrInvalidRecord (INVALID_RECORD); and
// nothing of the append is written. Valid batches of every codec still
// append.
func TestAppendCompressedValidation(t *testing.T) {
	eachCodec(t, func(t *testing.T, c codecCase, e *env, l *Log) {
		valid := e.compressed(c, logtest.Values(16, 100)...)
		if r := mustAppend(t, l, valid, 0); r.FirstOffset != 0 || r.LastOffset != 15 || r.Records != 16 {
			t.Fatalf("valid batch: %+v", r)
		}
		one := e.compressed(c, logtest.Values(1, 10)...)
		two := e.compressed(c, logtest.Values(2, 10)...)
		garbage := bytes.Repeat([]byte("garbage!"), 64)
		if c.codec == record.Snappy && !c.raw {
			garbage = xerial.Encode(nil, nil) // the framing header alone...
			garbage = append(garbage, 0, 0, 0, 64)
			garbage = append(garbage, bytes.Repeat([]byte("garbage!"), 8)...) // ...then a garbage block
		}
		future := logtest.Values(2, 10)
		future[1].TimestampDelta = 2 * time.Hour.Milliseconds()
		for _, tc := range []struct {
			name string
			b    []byte
			want error
		}{
			{"garbage", e.withRecords(c, garbage), ErrCorruptMessage},
			{"truncated", e.withRecords(c, record.Batch(valid).RecordBytes()[:len(valid)/3]), ErrCorruptMessage},
			{"count 1,000,000 holding 1", patched(one, func(b record.Batch) {
				b.SetRecordCount(1_000_000)
				b.SetLastOffsetDelta(1_000_000 - 1)
			}), ErrInvalidRecord},
			{"count 2^31-1 holding 1", patched(one, func(b record.Batch) {
				b.SetRecordCount(math.MaxInt32)
				b.SetLastOffsetDelta(math.MaxInt32 - 1)
			}), ErrInvalidRecord},
			{"count 1 holding 2", patched(two, func(b record.Batch) {
				b.SetRecordCount(1)
				b.SetLastOffsetDelta(0)
			}), ErrInvalidRecord},
			{"offset delta gap", e.withDeltas(c, 0, 2), ErrInvalidRecord},
			{"offset delta repeated", e.withDeltas(c, 0, 0), ErrInvalidRecord},
			{"record timestamp beyond after.max.ms", patched(e.compressed(c, future...), func(b record.Batch) {
				b.SetMaxTimestamp(b.BaseTimestamp()) // the header hides it
			}), ErrInvalidTimestamp},
			{"valid then garbage", logtest.Concat(valid, e.withRecords(c, garbage)), ErrCorruptMessage},
		} {
			if _, err := l.Append(tc.b, 0); !errors.Is(err, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
			}
			if l.EndOffset() != 16 {
				t.Fatalf("%s: log end moved to %d", tc.name, l.EndOffset())
			}
		}
		// The valid batch reads back as it was appended.
		got, err := l.Read(nil, 0, 1<<20, l.EndOffset(), true)
		if err != nil || !bytes.Equal(record.Batch(got).RecordBytes(), record.Batch(valid).RecordBytes()) {
			t.Fatalf("read back: %d bytes, %v", len(got), err)
		}
	})
}

// eachCodec runs f on a new log for each codec.
func eachCodec(t *testing.T, f func(t *testing.T, c codecCase, e *env, l *Log)) {
	for _, c := range codecCases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			l := e.open(0)
			defer l.Close()
			f(t, c, e, l)
		})
	}
}

// TestAppendCompressedMaxTimestamp: as for uncompressed batches (and as
// Kafka sets it on compressed ones), the header's max timestamp is taken
// from the records.
func TestAppendCompressedMaxTimestamp(t *testing.T) {
	eachCodec(t, func(t *testing.T, c codecCase, e *env, l *Log) {
		recs := logtest.Values(3, 10)
		recs[1].TimestampDelta = 500
		b := patched(e.compressed(c, recs...), func(b record.Batch) { b.SetMaxTimestamp(b.BaseTimestamp()) })
		want := e.clk.UnixMilli() + 500
		if r := mustAppend(t, l, b, 0); r.MaxTimestamp != want {
			t.Fatalf("max timestamp %d, want %d", r.MaxTimestamp, want)
		}
		got, err := l.Read(nil, 0, 1<<20, l.EndOffset(), true)
		if err != nil || record.Batch(got).MaxTimestamp() != want {
			t.Fatalf("stored max timestamp %d (%v), want %d", record.Batch(got).MaxTimestamp(), err, want)
		}
	})
}

// TestAppendCompressionBomb: a batch whose records decompress beyond the
// budget (64 MiB here) is ErrInvalidRecord, found without inflating it:
// the append allocates at most five times the budget (the output doubling
// up to it, the decoder's own buffers), not the 512 MiB to 2 GiB
// of the bomb. The gzip and zstd bombs are the sizes of issue 9's (900
// MiB, 2 GiB of zeros); raw snappy states its size up front, so one byte
// over the budget is refused before anything is decoded.
func TestAppendCompressionBomb(t *testing.T) {
	sizes := map[string]int{"gzip": 900 << 20, "zstd": 2 << 30, "snappy-raw": minDecompressBudget + 1}
	for _, c := range codecCases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.MaxMessageBytes = 32 << 20 // room for the lz4 and snappy bombs; the budget stays 64 MiB
			l := e.open(0)
			defer l.Close()
			n := sizes[c.name]
			if n == 0 {
				n = 8 * minDecompressBudget
			}
			b := e.withRecords(c, c.zeros(t, n))
			if c.codec == record.Zstd {
				l.dec.Decompress(record.Zstd, nil) // creates the decoder outside the measure
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := l.Append(b, 0)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("bomb of %d bytes in %d: %v", n, len(b), err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes in %d refused after allocating %d bytes", n, len(b), alloc)
			if alloc > 5*minDecompressBudget {
				t.Fatalf("allocated %d bytes to refuse a bomb at a budget of %d", alloc, minDecompressBudget)
			}
			if l.EndOffset() != 0 {
				t.Fatalf("log end moved to %d", l.EndOffset())
			}
		})
	}
}
