package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/store/log/record"
)

// badBatch is one batch the node must refuse.
type badBatch struct {
	name  string
	batch []byte
}

// badBatches are the garbage of finding 10: undecodable payloads of each
// codec, counts that lie, and compression bombs (64 KiB of zstd that
// inflate to 2 GiB of zeros, 0.9 MB of gzip to 900 MiB).
func badBatches() ([]badBatch, error) {
	var out []badBatch
	newBuilder := func(c record.Compression) *record.Builder {
		bb := record.NewBuilder(time.Now().UnixMilli())
		bb.Compression = c
		bb.Append(record.Record{Value: []byte("v")})
		return bb
	}
	for _, c := range []record.Compression{record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		out = append(out, badBatch{"garbage-" + c.String(), newBuilder(c).AppendRaw(nil, bytes.Repeat([]byte("garbage!"), 64))})
	}
	for _, lie := range []struct {
		c     record.Compression
		count int32
	}{{record.None, 1_000_000}, {record.Zstd, 1_000_000}, {record.Gzip, math.MaxInt32}, {record.None, math.MaxInt32}} {
		b, err := newBuilder(lie.c).Build()
		if err != nil {
			return nil, err
		}
		b.SetRecordCount(lie.count)
		b.SetLastOffsetDelta(lie.count - 1)
		b.Seal()
		out = append(out, badBatch{fmt.Sprintf("count-%d-%s", lie.count, lie.c), b})
	}
	var zbomb bytes.Buffer
	// A stream with a small window and no content size, so that only
	// decoding finds out how large it is.
	enc, err := zstd.NewWriter(&zbomb, zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		return nil, err
	}
	if err := writeZeros(enc, 2048); err != nil {
		return nil, err
	}
	out = append(out, badBatch{fmt.Sprintf("zstd-bomb-%dKiB-2GiB", zbomb.Len()>>10), newBuilder(record.Zstd).AppendRaw(nil, zbomb.Bytes())})
	var gbomb bytes.Buffer
	gz, err := gzip.NewWriterLevel(&gbomb, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if err := writeZeros(gz, 900); err != nil {
		return nil, err
	}
	out = append(out, badBatch{fmt.Sprintf("gzip-bomb-%dKiB-900MiB", gbomb.Len()>>10), newBuilder(record.Gzip).AppendRaw(nil, gbomb.Bytes())})
	return out, nil
}

// writeZeros compresses mib MiB of zeros into w and closes it.
func writeZeros(w io.WriteCloser, mib int) error {
	zeros := make([]byte, 1<<20)
	for range mib {
		if _, err := w.Write(zeros); err != nil {
			return err
		}
	}
	return w.Close()
}

// garbage (finding 10): each bad batch is refused with CORRUPT_MESSAGE or
// INVALID_RECORD, the log end does not move, and a consumer reads past
// the attempts.
func garbage(ctx context.Context, p *run, strict bool) {
	const topic = "garbage"
	if err := createTopic(ctx, p.n, topic, 1, nil); err != nil {
		p.failf("%v", err)
		return
	}
	if err := produceValues(ctx, p.n, topic, 0, 1<<20, []byte("before")); err != nil {
		p.failf("%v", err)
		return
	}
	bad, err := badBatches()
	if err != nil {
		p.failf("build bad batches: %v", err)
		return
	}
	end0, err := endOffset(ctx, p.n, topic, 0)
	if err != nil {
		p.failf("%v", err)
		return
	}
	r, err := dialRaw(p.n)
	if err != nil {
		p.failf("%v", err)
		return
	}
	defer r.Close()
	for _, b := range bad {
		resp, _, err := r.Do(produceReq(topic, 0, -1, b.batch), 20*time.Second)
		if err != nil {
			p.bound(strict, "%s: %v", b.name, err)
			if r, err = dialRaw(p.n); err != nil {
				p.failf("%v", err)
				return
			}
			continue
		}
		code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
		p.code(b.name, code)
		if code != kerr.CorruptMessage.Code && code != kerr.InvalidRecord.Code {
			p.bound(strict, "%s answered %s, want CORRUPT_MESSAGE or INVALID_RECORD", b.name, codeName(code))
		}
	}
	end1, err := endOffset(ctx, p.n, topic, 0)
	if err != nil {
		p.failf("%v", err)
		return
	}
	if end1 != end0 {
		p.bound(strict, "log end moved from %d to %d by refused batches", end0, end1)
	}
	if err := produceValues(ctx, p.n, topic, 0, 1<<20, []byte("after")); err != nil {
		p.failf("%v", err)
		return
	}
	seen, err := consumeValues(ctx, p.n, topic, 2)
	if err != nil || seen[0] != "before" || seen[len(seen)-1] != "after" {
		p.bound(strict, "consumer did not read on past the garbage: %v %q", err, seen)
	}
	p.notef("log end %d before, %d after the garbage", end0, end1)
}
