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
		bs := record.ParseBatches(b)
		infos, err := v.validate(&bs, nil)
		if err != nil {
			return
		}
		total := 0
		for _, in := range infos {
			one := b[in.pos : in.pos+in.size]
			oneView := record.ParseBatches(one)
			if _, err := v.validate(&oneView, nil); err != nil {
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

// FuzzAppendReplicated: any bytes from a leader never panic the follower's
// append; a refused request changes nothing, an accepted one reads back
// byte for byte from the old log end and survives a reopen.
func FuzzAppendReplicated(f *testing.F) {
	fuzzSeeds(f)
	// Two batches far past the log end and from each other (a compacted
	// leader's gaps): the follower rolls between them.
	far := func(base int64) []byte {
		b := logtest.BatchWith(logtest.Options{BaseTimestamp: 1_700_000_000_000}, logtest.Values(2, 1)...)
		record.Batch(b).SetBaseOffset(base)
		record.Batch(b).SetPartitionLeaderEpoch(3)
		record.Batch(b).Seal()
		return b
	}
	f.Add(logtest.Concat(far(0x3020303030303030), far(0x3030303030303030)))
	f.Fuzz(func(t *testing.T, b []byte) {
		clk := newClock()
		fsys := vfs.NewMem()
		l, err := Open(fsys, "/p", DefaultConfig(), Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		first := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(2, 3)...)
		if _, err := l.AppendReplicated(first); err != nil {
			t.Fatal(err)
		}
		end, size, epochs := l.EndOffset(), l.Size(), len(l.LeaderEpochs())
		in := append([]byte(nil), b...)
		if _, err := l.AppendReplicated(in); err != nil {
			if l.EndOffset() != end || l.Size() != size || len(l.LeaderEpochs()) != epochs {
				t.Fatalf("refused (%v) but the log changed", err)
			}
			_ = l.Close()
			return
		}
		if !bytes.Equal(in, b) {
			t.Fatal("the input was modified")
		}
		// A read stops at a segment's end: read on until the log end.
		var out []byte
		for off := end; off < l.EndOffset(); {
			n := len(out)
			out, err = l.Read(out, off, len(b), l.EndOffset(), true)
			if err != nil || len(out) == n {
				t.Fatalf("read at %d: %v, %d bytes", off, err, len(out)-n)
			}
			bs := logtest.Split(out[n:])
			off = record.Batch(bs[len(bs)-1]).LastOffset() + 1
		}
		if !bytes.Equal(out, b) {
			t.Fatal("read back differs")
		}
		end = l.EndOffset()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err = Open(fsys, "/p", DefaultConfig(), Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if l.EndOffset() != end {
			t.Fatalf("end %d after reopen, %d before", l.EndOffset(), end)
		}
	})
}
