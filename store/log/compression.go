package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxDecompressedBytes bounds the memory one decompression may take. Only
// OffsetForTimestamp decompresses; a larger batch is answered at batch
// level instead.
const maxDecompressedBytes = 64 << 20

// errTooLarge reports a batch whose records decompress beyond the bound.
var errTooLarge = errors.New("decompressed records exceed the limit")

// decompressor decodes the records section of compressed batches. It is
// safe for concurrent use; the zstd decoder is created on first use.
type decompressor struct {
	zstdOnce sync.Once
	zstd     *zstd.Decoder
	zstdErr  error
}

// xerialMagic starts snappy data framed the way the Java client writes it:
// the 8-byte magic, two 4-byte version fields, then blocks of a 4-byte
// big-endian length followed by one snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

// decompress returns the uncompressed records of a batch compressed with
// codec (1 gzip, 2 snappy, 3 lz4, 4 zstd).
func (d *decompressor) decompress(codec int16, src []byte) ([]byte, error) {
	switch codec {
	case 1:
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readLimited(r)
	case 2:
		return decodeSnappy(src)
	case 3:
		return readLimited(lz4.NewReader(bytes.NewReader(src)))
	case 4:
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
	return nil, fmt.Errorf("%w: compression codec %d", ErrInvalidRecord, codec)
}

func (d *decompressor) close() {
	// Do waits for a concurrent first use to finish (or prevents one), so
	// the field is safe to read afterwards.
	d.zstdOnce.Do(func() { d.zstdErr = ErrClosed })
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
	out := growLen(dst, n)
	if _, err := s2.Decode(out[len(dst):], block); err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	return out, nil
}
