package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxDecompressedBytes bounds the memory one decompression may take.
const maxDecompressedBytes = 64 << 20

// errDecompressorClosed is returned by a zstd decompression after Close.
var errDecompressorClosed = errors.New("decompressor closed")

// Decompressor decodes the records section of compressed batches, at most
// 64 MiB of records per batch. It is safe for concurrent use; the zstd
// decoder is created on first use. The zero value is ready; Close frees
// the zstd decoder.
type Decompressor struct {
	zstdOnce sync.Once
	zstd     *zstd.Decoder
	zstdErr  error
}

// xerialMagic starts snappy data framed the way the Java client writes it:
// the 8-byte magic, two 4-byte version fields, then blocks of a 4-byte
// big-endian length followed by one snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

// Decompress returns the uncompressed records of a batch compressed with
// c: gzip, snappy (raw or xerial-framed), lz4 (frame format) or zstd.
func (d *Decompressor) Decompress(c Compression, src []byte) ([]byte, error) {
	switch c {
	case Gzip:
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readLimited(r)
	case Snappy:
		return decodeSnappy(src)
	case LZ4:
		return readLimited(lz4.NewReader(bytes.NewReader(src)))
	case Zstd:
		d.zstdOnce.Do(func() {
			d.zstd, d.zstdErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressedBytes))
		})
		if d.zstdErr != nil {
			return nil, d.zstdErr
		}
		out, err := d.zstd.DecodeAll(src, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: compression codec %d", ErrInvalidRecord, c)
}

// Close frees the zstd decoder; later zstd decompressions fail.
func (d *Decompressor) Close() {
	// Do waits for a concurrent first use to finish (or prevents one), so
	// the field is safe to read afterwards.
	d.zstdOnce.Do(func() { d.zstdErr = errDecompressorClosed })
	if d.zstd != nil {
		d.zstd.Close()
	}
}

func readLimited(r io.Reader) ([]byte, error) {
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressedBytes+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxDecompressedBytes {
		return nil, errTooLarge
	}
	return out, nil
}

func decodeSnappy(src []byte) ([]byte, error) {
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
		return decodeSnappyBlock(nil, src)
	}
	var out []byte
	for b := src[xerialHeaderLen:]; len(b) > 0; {
		if len(b) < 4 {
			return nil, errors.New("snappy: truncated xerial block length")
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return nil, errors.New("snappy: truncated xerial block")
		}
		var err error
		if out, err = decodeSnappyBlock(out, b[4:4+n]); err != nil {
			return nil, err
		}
		b = b[4+n:]
	}
	return out, nil
}

// decodeSnappyBlock appends one decoded snappy block to dst.
func decodeSnappyBlock(dst, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if len(dst)+n > maxDecompressedBytes {
		return nil, errTooLarge
	}
	out := slices.Grow(dst, n)[:len(dst)+n]
	if _, err := s2.Decode(out[len(dst):], block); err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	return out, nil
}

// compress returns src compressed with c; snappy is xerial-framed unless
// rawSnappy.
func compress(c Compression, rawSnappy bool, src []byte) ([]byte, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch c {
	case Gzip:
		w = gzip.NewWriter(&buf)
	case Snappy:
		if rawSnappy {
			return s2.EncodeSnappy(nil, src), nil
		}
		return xerial.Encode(nil, src), nil
	case LZ4:
		w = lz4.NewWriter(&buf)
	case Zstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer enc.Close()
		return enc.EncodeAll(src, nil), nil
	default:
		return nil, fmt.Errorf("%w: compression codec %d", ErrInvalidRecord, c)
	}
	if _, err := w.Write(src); err != nil {
		return nil, fmt.Errorf("%v: %w", c, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("%v: %w", c, err)
	}
	return buf.Bytes(), nil
}
