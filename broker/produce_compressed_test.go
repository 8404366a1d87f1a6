package broker_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/record"
)

// TestProduceValidatesCompressedBatches: a compressed batch whose data
// does not decompress answers CORRUPT_MESSAGE, one whose count lies
// INVALID_RECORD (as Kafka's LogValidator), and neither moves the log
// end; batches a real client compresses with each codec are accepted.
func TestProduceValidatesCompressedBatches(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "c"); err != nil {
		t.Fatal(err)
	}
	endOffset := func() int64 {
		t.Helper()
		offs, err := adm.ListEndOffsets(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := offs.Lookup("c", 0)
		return o.Offset
	}
	codecs := []struct {
		codec  record.Compression
		client kgo.CompressionCodec
	}{
		{record.Gzip, kgo.GzipCompression()},
		{record.Snappy, kgo.SnappyCompression()},
		{record.LZ4, kgo.Lz4Compression()},
		{record.Zstd, kgo.ZstdCompression()},
	}
	var end int64
	for _, c := range codecs {
		bb := record.NewBuilder(time.Now().UnixMilli())
		bb.Compression = c.codec
		bb.Append(record.Record{Value: []byte("v")})
		garbage := bb.AppendRaw(nil, bytes.Repeat([]byte("garbage!"), 64))
		if p := produceRaw(ctx, t, cl, "c", 0, garbage); p.ErrorCode != kerr.CorruptMessage.Code {
			t.Errorf("%v garbage: %v, want CORRUPT_MESSAGE", c.codec, kerr.ErrorForCode(p.ErrorCode))
		}
		lie, err := bb.Build()
		if err != nil {
			t.Fatal(err)
		}
		lie.SetRecordCount(1_000_000)
		lie.SetLastOffsetDelta(1_000_000 - 1)
		lie.Seal()
		if p := produceRaw(ctx, t, cl, "c", 0, lie); p.ErrorCode != kerr.InvalidRecord.Code {
			t.Errorf("%v count 1,000,000 holding 1: %v, want INVALID_RECORD", c.codec, kerr.ErrorForCode(p.ErrorCode))
		}
		if got := endOffset(); got != end {
			t.Fatalf("%v: log end %d after refused batches, want %d", c.codec, got, end)
		}

		// A real client's batches of this codec still go in.
		p := n.Client(kgo.DefaultProduceTopic("c"), kgo.ProducerBatchCompression(c.client), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		var rs []*kgo.Record
		for i := range 100 {
			rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%v record %d %s", c.codec, i, bytes.Repeat([]byte("x"), 1000))})
		}
		if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("%v produce: %v", c.codec, err)
		}
		p.Close()
		end += 100
		if got := endOffset(); got != end {
			t.Fatalf("%v: log end %d after a client's batches, want %d", c.codec, got, end)
		}
	}
}
