package log

import (
	"bytes"
	"testing"

	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

func fuzzSeeds(f *testing.F) {
	ts := int64(1_700_000_000_000)
	f.Add(logtest.BatchWith(logtest.Options{BaseTimestamp: ts}, logtest.Values(3, 10)...))
	f.Add(logtest.BatchWith(logtest.Options{BaseTimestamp: ts}, logtest.Record{Key: []byte("k"), Value: nil, Headers: []logtest.Header{{Key: "h", Value: []byte("v")}}}))
	f.Add(logtest.BatchWith(logtest.Options{BaseTimestamp: ts, Compression: 1}, logtest.Values(2, 30)...))
	f.Add(logtest.Concat(logtest.BatchWith(logtest.Options{BaseTimestamp: ts}, logtest.Values(1, 1)...), logtest.BatchWith(logtest.Options{BaseTimestamp: ts + 5}, logtest.Values(2, 2)...)))
	f.Add([]byte{})
	f.Add(make([]byte, 61))
}

// FuzzValidate: validation never panics, and whatever it accepts is
// appended, read back byte for byte, and still carries valid CRCs.
func FuzzValidate(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		clk := newClock()
		cfg := DefaultConfig()
		v := validator{cfg: cfg.sanitized(), now: clk.UnixMilli()}
		infos, err := v.validate(b, nil)
		if err != nil {
			return
		}
		total := 0
		for _, in := range infos {
			one := b[in.pos : in.pos+in.size]
			if _, err := v.validate(one, nil); err != nil {
				t.Fatalf("accepted batch fails alone: %v", err)
			}
			total += in.size
		}
		if total != len(b) {
			t.Fatalf("batches cover %d of %d bytes", total, len(b))
		}
		l, err := Open(vfs.NewMem(), "/p", cfg, Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		in := append([]byte(nil), b...)
		r, err := l.Append(in, 1)
		if err != nil {
			t.Fatalf("validated batch not appended: %v", err)
		}
		out, err := l.Read(nil, 0, len(in), l.EndOffset(), true)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("read back differs: %v", err)
		}
		for _, bt := range logtest.Split(out) {
			if err := record.Batch(bt).CheckCRC(); err != nil {
				t.Fatalf("stored batch: %v", err)
			}
		}
		if r.LastOffset+1 != l.EndOffset() {
			t.Fatalf("result %+v, end %d", r, l.EndOffset())
		}
	})
}

// FuzzRecover: any bytes as a segment file open without panicking into a
// log that holds only whole, CRC-valid batches and accepts appends.
func FuzzRecover(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		fsys := vfs.NewMem()
		_ = fsys.MkdirAll("/p")
		seg, _ := fsys.Create("/p/" + segmentName(0, ".log"))
		_, _ = seg.Write(b)
		_ = seg.Sync()
		_ = seg.Close()
		clk := newClock()
		l, err := Open(fsys, "/p", DefaultConfig(), Options{Now: clk.Now})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer l.Close()
		all, err := l.Read(nil, 0, 1<<30, l.EndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		for _, bt := range logtest.Split(all) {
			if err := record.Batch(bt).CheckCRC(); err != nil {
				t.Fatalf("recovered batch: %v", err)
			}
		}
		if _, err := l.Append(logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(1, 1)...), 0); err != nil {
			t.Fatalf("append after recovery: %v", err)
		}
	})
}
