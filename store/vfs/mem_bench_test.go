package vfs

import (
	"fmt"
	"testing"
)

// benchSegmentBytes is where the append benchmark starts a new file, as the
// log rolls segments: without it the file would grow with b.N.
const benchSegmentBytes = 64 << 20

// BenchmarkMemAppendSync appends 16 KiB (a produced batch) and syncs after
// each append, as a log flushing every batch does.
func BenchmarkMemAppendSync(b *testing.B) {
	m := NewMem()
	batch := make([]byte, 16<<10)
	var f File
	var written int64
	next := 0
	roll := func() {
		if f != nil {
			_ = f.Close()
			_ = m.Remove(fmt.Sprintf("/f%d", next-1))
		}
		var err error
		if f, err = m.Create(fmt.Sprintf("/f%d", next)); err != nil {
			b.Fatal(err)
		}
		next++
		written = 0
	}
	roll()
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if written >= benchSegmentBytes {
			roll()
		}
		if _, err := f.Write(batch); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		written += int64(len(batch))
	}
}

// BenchmarkMemReadAt reads 16 KiB at offsets that step through a 64 MiB
// file by an odd stride, so reads start anywhere and some cross the
// boundaries of the file's storage.
func BenchmarkMemReadAt(b *testing.B) {
	m := NewMem()
	f, err := m.Create("/f")
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for range benchSegmentBytes / len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]byte, 16<<10)
	const stride = 1<<20 + 4099
	var off int64
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.ReadAt(buf, off); err != nil {
			b.Fatal(err)
		}
		off = (off + stride) % (benchSegmentBytes - int64(len(buf)))
	}
}
