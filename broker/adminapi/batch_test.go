package adminapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/recordjson"
)

// TestBatch: GET .../batch?offset=N answers the batch holding N, header
// and records (a compressed batch decoded, binary values in base64, a
// header, a tombstone), and 400/404 for what it cannot.
func TestBatch(t *testing.T) {
	n := brokertest.Start(t)
	ctx := testkit.Context(t)
	cl := n.Client(kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.ManualFlushing())
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "b"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	produce := func(rs ...*kgo.Record) {
		t.Helper()
		done := make(chan error, len(rs))
		for _, r := range rs {
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) { done <- err })
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for range rs {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(&kgo.Record{Topic: "b", Value: []byte("first")})
	recs := []*kgo.Record{
		{Topic: "b", Key: []byte("k1"), Value: []byte(strings.Repeat("hello", 100)), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}}},
		{Topic: "b", Key: []byte("k2"), Value: []byte{0xff, 0x00}},
		{Topic: "b", Key: []byte("k3")},
	}
	produce(recs...) // one batch of three: nothing is sent before the flush
	c := nodeapi.NewClient(n.AdminAddr(), 0)
	b, err := c.Batch(ctx, "b", 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b.Error != "" || !b.CRCValid || b.Codec != "zstd" || b.Control || b.Transactional || b.TimestampType != "create" ||
		b.Count != 3 || b.BaseOffset != 1 || b.LastOffset != 3 || len(b.Records) != 3 {
		t.Fatalf("batch holding offset 2: %+v", b)
	}
	for _, r := range b.Records {
		switch mustDecode(t, r.Key, r.KeyEncoding)[1] {
		case '1':
			if *r.Value != strings.Repeat("hello", 100) || len(r.Headers) != 1 || r.Headers[0].Key != "trace" || *r.Headers[0].Value != "abc" {
				t.Errorf("k1: %+v", r)
			}
		case '2':
			if r.ValueEncoding != "base64" || string(mustDecode(t, r.Value, r.ValueEncoding)) != "\xff\x00" {
				t.Errorf("k2: %+v", r)
			}
		case '3':
			if r.Value != nil {
				t.Errorf("k3 is a tombstone: %+v", r)
			}
		}
	}
	first, err := c.Batch(ctx, "b", 0, 0)
	if err != nil || first.BaseOffset != 0 || first.LastOffset != 0 || len(first.Records) != 1 || *first.Records[0].Value != "first" || *first.Records[0].Offset != 0 {
		t.Fatalf("batch at 0: %+v %v", first, err)
	}
	base := "http://" + n.AdminAddr()
	checkError(t, "GET", base+"/v1/partitions/b/0/batch?offset=4", http.StatusNotFound, "b/0: no batch holds offset 4 (log 0 to 4)")
	checkError(t, "GET", base+"/v1/partitions/b/0/batch?offset=x", http.StatusBadRequest, `offset "x": want an offset, 0 or more`)
	checkError(t, "GET", base+"/v1/partitions/b/0/batch", http.StatusBadRequest, `offset "": want an offset, 0 or more`)
	checkError(t, "GET", base+"/v1/partitions/b/9/batch?offset=0", http.StatusNotFound, "no local replica of b/9")
}

func mustDecode(t *testing.T, s *string, encoding string) []byte {
	t.Helper()
	b, err := recordjson.DecodeBytes("", s, encoding)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
