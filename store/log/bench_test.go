package log

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// benchBatch is 16 records of 1 KiB: a ~16 KiB batch.
func benchBatch(clk *testkit.Clock) []byte {
	return logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(16, 1024)...)
}

func benchAppend(b *testing.B, fsys vfs.FS, dir string) {
	clk := newClock()
	cfg := DefaultConfig()
	cfg.SegmentBytes = 64 << 20
	l, err := Open(fsys, dir, cfg, Options{Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := benchBatch(clk)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
		if l.EndOffset()%(1<<16) == 0 {
			// Keep the in-memory file system bounded.
			if _, err := l.ApplyRetention(clk.Now()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	b.Run("os", func(b *testing.B) { benchAppend(b, vfs.OS(), b.TempDir()) })
	// Through the open-file cap every Manager uses, with room for the
	// active segment's files.
	b.Run("os-capped", func(b *testing.B) { benchAppend(b, vfs.LimitOpen(vfs.OS(), 8), b.TempDir()) })
	b.Run("mem", func(b *testing.B) {
		benchAppend(b, vfs.NewMem(), "/bench")
	})
}

func BenchmarkRead(b *testing.B) {
	for _, fs := range []struct {
		name string
		fs   func(b *testing.B) (vfs.FS, string)
	}{
		{"os", func(b *testing.B) (vfs.FS, string) { return vfs.OS(), b.TempDir() }},
		{"os-capped", func(b *testing.B) (vfs.FS, string) { return vfs.LimitOpen(vfs.OS(), 8), b.TempDir() }},
		{"mem", func(b *testing.B) (vfs.FS, string) { return vfs.NewMem(), "/bench" }},
	} {
		b.Run(fs.name, func(b *testing.B) {
			fsys, dir := fs.fs(b)
			clk := newClock()
			cfg := DefaultConfig()
			cfg.SegmentBytes = 16 << 20
			l, err := Open(fsys, dir, cfg, Options{Now: clk.Now})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			batch := benchBatch(clk)
			for range 2048 { // 32 MiB over 2 segments
				if _, err := l.Append(batch, 0); err != nil {
					b.Fatal(err)
				}
			}
			const fetch = 1 << 20
			b.SetBytes(fetch)
			b.ReportAllocs()
			buf := make([]byte, 0, fetch+len(batch))
			end := l.EndOffset()
			off := int64(0)
			b.ResetTimer()
			for b.Loop() {
				out, err := l.Read(buf[:0], off, fetch, end, true)
				if err != nil {
					b.Fatal(err)
				}
				if len(out) == 0 {
					off = 0
					continue
				}
				off += int64(len(out)/len(batch)) * 16
				if off >= end {
					off = 0
				}
			}
		})
	}
}

// BenchmarkAppendIdempotent appends batches of one idempotent producer:
// the steady state must not allocate.
func BenchmarkAppendIdempotent(b *testing.B) {
	benchAppendIdempotent(b, 16, func(l *Log, batch []byte) error {
		_, err := l.Append(batch, 0)
		return err
	})
}

// benchAppendIdempotent appends batches of n records of one idempotent
// producer with appendBatch, each with the next sequence.
func benchAppendIdempotent(b *testing.B, n int, appendBatch func(l *Log, batch []byte) error) {
	clk := newClock()
	cfg := DefaultConfig()
	cfg.SegmentBytes = 64 << 20
	l, err := Open(vfs.NewMem(), "/bench", cfg, Options{Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := logtest.ProducerBatch(clk.UnixMilli(), 1, 0, 0, n, false)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	seq := int32(0)
	for b.Loop() {
		record.Batch(batch).SetBaseSequence(seq)
		logtest.Reseal(batch)
		if err := appendBatch(l, batch); err != nil {
			b.Fatal(err)
		}
		seq = incrementSequence(seq, int32(n))
		if l.EndOffset()%(1<<16) == 0 {
			if _, err := l.ApplyRetention(clk.Now()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkValidate checks one uncompressed batch as Append does, without
// the write: the record walk must not allocate.
func BenchmarkValidate(b *testing.B) {
	clk := newClock()
	for _, c := range []struct {
		name        string
		records, kb int
	}{{"16x10B", 16, 0}, {"16x1KiB", 16, 1}} {
		b.Run(c.name, func(b *testing.B) {
			size := max(c.kb<<10, 10)
			batch := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(c.records, size)...)
			cfg := DefaultConfig()
			v := validator{cfg: cfg.sanitized(), now: clk.UnixMilli()}
			infos := make([]batchInfo, 0, 1)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				bs := record.ParseBatches(batch)
				if infos, err = v.validate(&bs, infos[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidateCompressed checks one compressed batch of 16 records
// of 1 KiB of random words (which compress 2 to 3.3 times) as Append
// does: the cost of decompressing and walking the records, per codec.
// MB/s are of the records uncompressed.
func BenchmarkValidateCompressed(b *testing.B) {
	clk := newClock()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"klog ", "record ", "batch ", "offset ", "partition ", "leader ", "epoch ", "fetch "}
	recs := logtest.Values(16, 0)
	for i := range recs {
		var v []byte
		for len(v) < 1024 {
			v = append(v, words[rng.IntN(len(words))]...)
			v = append(v, byte('a'+rng.IntN(26)), byte('a'+rng.IntN(26)))
		}
		recs[i].Value = v[:1024]
	}
	plain := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, recs...)
	for _, c := range codecCases {
		b.Run(c.name, func(b *testing.B) {
			batch := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli(), Compression: int8(c.codec), RawSnappy: c.raw}, recs...)
			cfg := DefaultConfig()
			var dec record.Decompressor
			defer dec.Close()
			v := validator{cfg: cfg.sanitized(), now: clk.UnixMilli(), dec: &dec}
			infos := make([]batchInfo, 0, 1)
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				bs := record.ParseBatches(batch)
				if infos, err = v.validate(&bs, infos[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(plain))/float64(len(batch)), "ratio")
			b.ReportMetric(float64(len(plain))/float64(len(batch)), "ratio")
		})
	}
}

// BenchmarkProducerMemory measures what the state of idempotent producers
// costs, the hostile case of issue 9: 600,000 producer ids, each seen once
// with a one-record batch. It reports heap bytes per producer while the log
// is live, after it is reopened from its snapshot, the bytes allocated by
// that reopen, and the snapshot's size per producer. Run it with
// -benchtime=1x; the figures do not depend on b.N.
func BenchmarkProducerMemory(b *testing.B) {
	const producers = 600_000
	const perAppend = 1000
	clk := newClock()
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1 << 30
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for b.Loop() {
		dir := b.TempDir()
		l, err := Open(vfs.OS(), dir, cfg, Options{Now: clk.Now})
		if err != nil {
			b.Fatal(err)
		}
		empty := heap()
		for pid := int64(0); pid < producers; pid += perAppend {
			bs := make([][]byte, perAppend)
			for i := range bs {
				bs[i] = logtest.ProducerBatch(clk.UnixMilli(), pid+int64(i), 0, 0, 1, false)
			}
			if _, err := l.Append(logtest.Concat(bs...), 0); err != nil {
				b.Fatal(err)
			}
		}
		live := heap() - empty
		if n := len(l.Producers()); n != producers {
			b.Fatalf("%d producers", n)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		snap, err := vfs.OS().Stat(snapshotPath(dir, producers))
		if err != nil {
			b.Fatal(err)
		}
		before := heap()
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		// A clean restart: the recovery point is the log end.
		l, err = Open(vfs.OS(), dir, cfg, Options{Now: clk.Now, RecoveryPoint: producers})
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&ms1)
		loaded := heap() - before
		if n := len(l.Producers()); n != producers {
			b.Fatalf("%d producers after reopen", n)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(live)/producers, "live-B/producer")
		b.ReportMetric(float64(loaded)/producers, "loaded-B/producer")
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/producers, "load-alloc-B/producer")
		b.ReportMetric(float64(snap.Size())/producers, "snapshot-B/producer")
	}
}

// BenchmarkReadManyLogs reads 1,000 logs of 16 KiB each into one buffer,
// as a fetch of 1,000 partitions does: the buffer must grow in amortized
// steps, not once per log.
func BenchmarkReadManyLogs(b *testing.B) {
	clk := newClock()
	fsys := vfs.NewMem()
	cfg := DefaultConfig()
	batch := benchBatch(clk)
	logs := make([]*Log, 1000)
	for i := range logs {
		l, err := Open(fsys, fmt.Sprintf("/bench/p-%d", i), cfg, Options{Now: clk.Now})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
		logs[i] = l
	}
	b.SetBytes(int64(len(logs) * len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		var buf []byte
		for _, l := range logs {
			var err error
			if buf, err = l.Read(buf, 0, 1<<20, l.EndOffset(), true); err != nil {
				b.Fatal(err)
			}
		}
		if len(buf) != len(logs)*len(batch) {
			b.Fatalf("read %d bytes", len(buf))
		}
	}
}

// BenchmarkIndexLookup reads the batch holding a random offset of a
// 64 MiB segment of 1 KiB batches: the offset index lookup, the scan from
// the indexed position to the batch, and the read of its header and data.
func BenchmarkIndexLookup(b *testing.B) {
	clk := newClock()
	cfg := DefaultConfig()
	cfg.SegmentBytes = 64 << 20
	l, err := Open(vfs.NewMem(), "/bench", cfg, Options{Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(1, 1000)...)
	for range 60_000 {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	end := l.EndOffset()
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 0, 2*len(batch))
	b.ReportAllocs()
	for b.Loop() {
		out, err := l.Read(buf[:0], r.Int64N(end), 1, end, true)
		if err != nil || len(out) != len(batch) {
			b.Fatalf("read %d bytes: %v", len(out), err)
		}
	}
}

// BenchmarkAppendProduce appends a produce partition's batch as the
// produce path does: one small idempotent batch, parsed once into the
// view the produce checks read (BenchmarkProduceHeaders in
// store/log/record), and appended from that view.
func BenchmarkAppendProduce(b *testing.B) {
	var bs record.Batches
	benchAppendIdempotent(b, 1, func(l *Log, batch []byte) error {
		bs.Parse(batch)
		_, err := l.AppendBatches(&bs, 0)
		return err
	})
}
