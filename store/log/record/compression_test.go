package record

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// codecCases are the codecs and framings a client may send.
var codecCases = []struct {
	name  string
	codec Compression
	raw   bool // raw snappy rather than xerial framing
}{
	{"gzip", Gzip, false},
	{"snappy-xerial", Snappy, false},
	{"snappy-raw", Snappy, true},
	{"lz4", LZ4, false},
	{"zstd", Zstd, false},
}

// TestDecompressWithin: data that decodes to at most the limit comes back
// whole; one byte more is ErrInvalidRecord; data that is not the codec's
// is ErrCorruptMessage.
func TestDecompressWithin(t *testing.T) {
	const limit = 64 << 10
	var d Decompressor
	defer d.Close()
	data := bytes.Repeat([]byte("klog record "), limit/12+1)[:limit]
	for _, c := range codecCases {
		t.Run(c.name, func(t *testing.T) {
			src, err := compress(c.codec, c.raw, data)
			if err != nil {
				t.Fatal(err)
			}
			out, err := d.DecompressWithin(c.codec, src, limit)
			if err != nil || !bytes.Equal(out, data) {
				t.Fatalf("at the limit: %d bytes, %v", len(out), err)
			}
			if _, err := d.DecompressWithin(c.codec, src, limit-1); !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("one byte over the limit: %v", err)
			}
			garbage := bytes.Repeat([]byte("garbage!"), 64)
			if c.codec == Snappy && !c.raw {
				garbage = append(append([]byte(nil), src[:xerialHeaderLen]...), garbage...)
			}
			if _, err := d.DecompressWithin(c.codec, garbage, limit); !errors.Is(err, ErrCorruptMessage) {
				t.Fatalf("garbage: %v", err)
			}
			// A truncated stream does not decode either.
			if _, err := d.DecompressWithin(c.codec, src[:len(src)/2], limit); !errors.Is(err, ErrCorruptMessage) {
				t.Fatalf("truncated: %v", err)
			}
		})
	}
}

// TestDecompressBombStopsAtLimit: 64 MiB of zeros against a 1 MiB limit is
// refused, and the decompression allocates twice the limit and the
// decoders' buffers, not the 64 MiB the data inflates to.
func TestDecompressBombStopsAtLimit(t *testing.T) {
	const limit, bomb = 1 << 20, 64 << 20
	var d Decompressor
	defer d.Close()
	zeros := make([]byte, bomb)
	// EncodeAll states the content size and a window as large, which the
	// decoder refuses up front; a stream with a small window and no size
	// is decoded until it passes the limit.
	enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(limit/4), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	enc.Reset(&stream)
	if _, err := enc.Write(zeros); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	cases := append(codecCases, struct {
		name  string
		codec Compression
		raw   bool
	}{"zstd-stream", Zstd, false})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := compress(c.codec, c.raw, zeros)
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "zstd-stream" {
				src = stream.Bytes()
			}
			if _, err := d.DecompressWithin(c.codec, src[:0], limit); c.codec == Zstd && err != nil {
				t.Fatal(err) // creates the zstd decoder outside the measure
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = d.DecompressWithin(c.codec, src, limit)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("%d compressed bytes of %d zeros: %v", len(src), bomb, err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d compressed bytes refused after allocating %d bytes (%v)", len(src), alloc, err)
			// Twice the limit for the output, and the decoders' own
			// buffers (lz4 blocks of 4 MiB, a zstd window), which a
			// sync.Pool may not have kept.
			if alloc > 2*limit+16<<20 {
				t.Fatalf("allocated %d bytes to refuse a bomb at %d", alloc, limit)
			}
		})
	}
}
