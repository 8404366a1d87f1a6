package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// MaxDecompressedBytes is the bound Records puts on the records one
// batch may decompress to.
const MaxDecompressedBytes = 64 << 20

// errDecompressorClosed is returned by a zstd decompression after Close.
var errDecompressorClosed = errors.New("decompressor closed")

// Decompressor decodes the records section of compressed batches within a
// bound on the decompressed size: a decompression stops as soon as its
// output passes the bound, so refusing a compression bomb allocates less
// than twice the bound. It is safe for concurrent use; zstd decoders are
// created on first use and kept for reuse. The zero value is ready; Close
// frees the zstd decoders.
type Decompressor struct {
	mu struct {
		sync.Mutex
		closed bool
		// zstd[n] are idle decoders whose window is at most 1<<n bytes.
		zstd [32][]*zstd.Decoder
	}
	gzip sync.Pool // of *gzip.Reader
	lz4  sync.Pool // of *lz4.Reader
}

// xerialMagic starts snappy data framed the way the Java client writes it:
// the 8-byte magic, two 4-byte version fields, then blocks of a 4-byte
// big-endian length followed by one snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

// Decompress returns the uncompressed records of a batch compressed with
// c: gzip, snappy (raw or xerial-framed), lz4 (frame format) or zstd, at
// most MaxDecompressedBytes of them.
func (d *Decompressor) Decompress(c Compression, src []byte) ([]byte, error) {
	return d.DecompressWithin(c, src, MaxDecompressedBytes)
}

// DecompressWithin is Decompress with a bound of limit bytes (at least 1,
// at most math.MaxInt32). Data that does not decode is ErrCorruptMessage;
// data that decodes to more than limit bytes is ErrInvalidRecord, found
// without decoding much past limit.
func (d *Decompressor) DecompressWithin(c Compression, src []byte, limit int) ([]byte, error) {
	limit = min(max(limit, 1), math.MaxInt32)
	var out []byte
	var err error
	switch c {
	case Gzip:
		out, err = d.decodeGzip(src, limit)
	case Snappy:
		out, err = decodeSnappy(src, limit)
	case LZ4:
		r, _ := d.lz4.Get().(*lz4.Reader)
		if r == nil {
			r = lz4.NewReader(nil)
		}
		r.Reset(bytes.NewReader(src))
		out, err = readLimited(r, limit, 4*len(src))
		r.Reset(nil) // drop src
		d.lz4.Put(r)
	case Zstd:
		out, err = d.decodeZstd(src, limit)
	default:
		return nil, fmt.Errorf("%w: compression codec %d", ErrInvalidRecord, c)
	}
	switch {
	case errors.Is(err, errDecompressorClosed):
		return nil, err
	case errors.Is(err, errTooLarge):
		return nil, fmt.Errorf("%w: %v records decompress to more than %d bytes", ErrInvalidRecord, c, limit)
	case err != nil:
		return nil, fmt.Errorf("%w: %v: %v", ErrCorruptMessage, c, err)
	}
	return out, nil
}

// decodeGzip reads src through a reused gzip reader.
func (d *Decompressor) decodeGzip(src []byte, limit int) ([]byte, error) {
	r, _ := d.gzip.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = r.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return nil, err // a reader whose header failed is not reused
	}
	defer d.gzip.Put(r)
	return readLimited(r, limit, gzipSize(src))
}

// maxIdleZstd bounds the idle zstd decoders kept per bound.
const maxIdleZstd = 4

// decodeZstd streams src through a decoder into readLimited, which stops
// it as soon as the output passes limit. The buffer starts at the size
// the first frame states (refused at once beyond limit), else four times
// the input.
func (d *Decompressor) decodeZstd(src []byte, limit int) ([]byte, error) {
	hint := 4 * len(src)
	var h zstd.Header
	if h.Decode(src) == nil && h.HasFCS {
		if h.FrameContentSize > uint64(limit) {
			return nil, errTooLarge
		}
		hint = int(h.FrameContentSize)
	}
	n := bits.Len(uint(limit - 1))
	dec, err := d.getZstd(n)
	if err != nil {
		return nil, err
	}
	defer d.putZstd(n, dec)
	// A *bytes.Reader (not a bytes.Buffer, which the decoder would
	// decode whole first) is read as a stream.
	if err := dec.Reset(bytes.NewReader(src)); err != nil {
		return nil, err
	}
	out, err := readLimited(dec, limit, hint)
	// A window beyond the limit (the decoder's bound on it) needs more
	// memory than allowed: a resource rule, not corruption.
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		err = errTooLarge
	}
	return out, err
}

// getZstd returns an idle streaming decoder of at most 1<<n bytes of
// window, or a new one. With concurrency 1 it decodes in the caller's
// goroutine and starts none.
func (d *Decompressor) getZstd(n int) (*zstd.Decoder, error) {
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		return nil, errDecompressorClosed
	}
	if idle := d.mu.zstd[n]; len(idle) > 0 {
		dec := idle[len(idle)-1]
		d.mu.zstd[n] = idle[:len(idle)-1]
		d.mu.Unlock()
		return dec, nil
	}
	d.mu.Unlock()
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<n))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return dec, nil
}

// putZstd keeps dec for reuse, dropping its input.
func (d *Decompressor) putZstd(n int, dec *zstd.Decoder) {
	_ = dec.Reset(nil) // always nil: it only drops the input
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed || len(d.mu.zstd[n]) == maxIdleZstd {
		dec.Close()
		return
	}
	d.mu.zstd[n] = append(d.mu.zstd[n], dec)
}

// Close frees the idle zstd decoders; later zstd decompressions fail.
func (d *Decompressor) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.closed = true
	for i, idle := range d.mu.zstd {
		for _, dec := range idle {
			dec.Close()
		}
		d.mu.zstd[i] = nil
	}
}

// readLimited reads r to its end, failing with errTooLarge as soon as it
// has given more than limit bytes. The buffer starts at hint bytes (a
// guess of the size, trusted only up to limit) and doubles, so reading
// allocates less than twice what was read (or limit).
func readLimited(r io.Reader, limit, hint int) ([]byte, error) {
	out := make([]byte, 0, min(max(hint, 512), limit)+1)
	for {
		if len(out) == cap(out) {
			out = slices.Grow(out, min(cap(out), limit+1-len(out)))
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > limit {
			return nil, errTooLarge
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// gzipSize is the size the gzip data src says it decompresses to (its
// last member's ISIZE field), 0 if src is too short to say.
func gzipSize(src []byte) int {
	if len(src) < 18 { // 10-byte header, 8-byte trailer
		return 0
	}
	return int(binary.LittleEndian.Uint32(src[len(src)-4:]))
}

func decodeSnappy(src []byte, limit int) ([]byte, error) {
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
		return decodeSnappyBlock(nil, src, limit)
	}
	// Each block states its decoded length: add them up first, so that
	// the output is allocated once and a bomb is refused before any.
	total := 0
	for b := src[xerialHeaderLen:]; len(b) > 0; {
		block, rest, err := nextXerialBlock(b)
		if err != nil {
			return nil, err
		}
		n, err := s2.DecodedLen(block)
		if err != nil {
			return nil, err
		}
		if n > limit-total {
			return nil, errTooLarge
		}
		total += n
		b = rest
	}
	out := make([]byte, 0, total)
	for b := src[xerialHeaderLen:]; len(b) > 0; {
		block, rest, _ := nextXerialBlock(b)
		var err error
		if out, err = decodeSnappyBlock(out, block, limit); err != nil {
			return nil, err
		}
		b = rest
	}
	return out, nil
}

// nextXerialBlock splits the first block off the xerial blocks b.
func nextXerialBlock(b []byte) (block, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("truncated xerial block length")
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, errors.New("truncated xerial block")
	}
	return b[4 : 4+n], b[4+n:], nil
}

// decodeSnappyBlock appends one decoded snappy block to dst, refusing
// (before decoding) to grow dst beyond limit bytes.
func decodeSnappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if n > limit-len(dst) {
		return nil, errTooLarge
	}
	out := slices.Grow(dst, n)[:len(dst)+n]
	if _, err := s2.Decode(out[len(dst):], block); err != nil {
		return nil, err
	}
	return out, nil
}

// Compressors are kept for reuse: a gzip or zstd writer's state is
// hundreds of kilobytes, too much to allocate per batch (the log cleaner
// recompresses every batch it filters).
var (
	gzipWriters sync.Pool // of *gzip.Writer
	lz4Writers  sync.Pool // of *lz4.Writer
	// zstdEncoder serves EncodeAll calls from any goroutine, one at a time.
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	})
)

// compress returns src compressed with c; snappy is xerial-framed unless
// rawSnappy.
func compress(c Compression, rawSnappy bool, src []byte) ([]byte, error) {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch c {
	case Gzip:
		gw, _ := gzipWriters.Get().(*gzip.Writer)
		if gw == nil {
			gw = gzip.NewWriter(&buf)
		} else {
			gw.Reset(&buf)
		}
		defer gzipWriters.Put(gw)
		w = gw
	case Snappy:
		if rawSnappy {
			return s2.EncodeSnappy(nil, src), nil
		}
		return xerial.Encode(nil, src), nil
	case LZ4:
		lw, _ := lz4Writers.Get().(*lz4.Writer)
		if lw == nil {
			lw = lz4.NewWriter(&buf)
		} else {
			lw.Reset(&buf)
		}
		defer lz4Writers.Put(lw)
		w = lw
	case Zstd:
		enc, err := zstdEncoder()
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
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
