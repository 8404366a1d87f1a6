package log

import (
	"slices"
	"testing"
	"time"
)

// TestIndexPagesMatchTheFiles: the in-memory indexes read page by page are
// the entries the log writes to its .index and .timeindex files.
func TestIndexPagesMatchTheFiles(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 1024
	e.cfg.IndexIntervalBytes = 1
	l := e.open(0)
	defer l.Close()
	for len(l.Segments()) < 3 {
		mustAppend(t, l, e.batch(2, 40), 0)
		e.clk.Advance(time.Millisecond)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	seg := l.Segments()[1]
	readFile := func(ext string) []byte {
		f, err := e.fs.Open(l.segmentAt(seg.BaseOffset).path(ext))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		size, _ := f.Size()
		b := make([]byte, size)
		if n, err := f.ReadAt(b, 0); n != len(b) {
			t.Fatal(err)
		}
		return b
	}
	wantOffsets, err := DecodeOffsetIndex(readFile(IndexFileExt))
	if err != nil {
		t.Fatal(err)
	}
	wantTimes, err := DecodeTimeIndex(readFile(TimeIndexFileExt))
	if err != nil {
		t.Fatal(err)
	}
	if len(wantOffsets) < 4 || len(wantTimes) < 4 || len(wantOffsets) != seg.IndexEntries || len(wantTimes) != seg.TimeIndexEntries {
		t.Fatalf("segment %+v: %d offset and %d time entries on disk", seg, len(wantOffsets), len(wantTimes))
	}
	offsets, ok := l.OffsetIndex(seg.BaseOffset, 0, 1000)
	if !ok || !slices.Equal(offsets.Entries, wantOffsets) || offsets.Total != len(wantOffsets) {
		t.Fatalf("offset index %+v, on disk %+v", offsets, wantOffsets)
	}
	times, ok := l.TimeIndex(seg.BaseOffset, 0, 1000)
	if !ok || !slices.Equal(times.Entries, wantTimes) || times.Total != len(wantTimes) {
		t.Fatalf("time index %+v, on disk %+v", times, wantTimes)
	}
	if p, _ := l.OffsetIndex(seg.BaseOffset, 1, 2); !slices.Equal(p.Entries, wantOffsets[1:3]) || p.From != 1 || p.Total != len(wantOffsets) {
		t.Fatalf("page from 1 of 2: %+v", p)
	}
	if p, _ := l.TimeIndex(seg.BaseOffset, len(wantTimes)-1, 5); !slices.Equal(p.Entries, wantTimes[len(wantTimes)-1:]) {
		t.Fatalf("last page: %+v", p)
	}
	if p, ok := l.OffsetIndex(seg.BaseOffset, len(wantOffsets)+3, 5); !ok || len(p.Entries) != 0 || p.Total != len(wantOffsets) {
		t.Fatalf("page past the end: %+v %v", p, ok)
	}
	if _, ok := l.OffsetIndex(seg.BaseOffset+1, 0, 5); ok {
		t.Fatal("an offset index for a base no segment has")
	}
	if _, ok := l.TimeIndex(-1, 0, 5); ok {
		t.Fatal("a time index for base -1")
	}
}

// TestIndexPagesWhileAppending: reading the active segment's indexes
// while appends add entries sees each page whole (go test -race).
func TestIndexPagesWhileAppending(t *testing.T) {
	e := newEnv(t)
	e.cfg.IndexIntervalBytes = 1
	l := e.open(0)
	defer l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			if _, err := l.Append(e.batch(1, 10), 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for last := -1; ; {
		p, ok := l.OffsetIndex(0, 0, 1000)
		tp, tok := l.TimeIndex(0, 0, 1000)
		if !ok || !tok || p.Total < last || len(p.Entries) != min(p.Total, 1000) || len(tp.Entries) != tp.Total {
			t.Fatalf("page %+v %v, time page %+v %v, after a total of %d", p, ok, tp, tok, last)
		}
		last = p.Total
		select {
		case <-done:
			if p, _ := l.OffsetIndex(0, 0, 1000); p.Total < 150 {
				t.Fatalf("%d entries for 200 batches", p.Total)
			}
			return
		default:
		}
	}
}
