package vfs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestMemFileModel runs random writes, truncations, syncs and clones on a
// memory file spanning several chunks and checks every read, the current
// state (what Clone keeps) and the synced state (what CrashClone keeps)
// against plain byte slices.
func TestMemFileModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 14))
	m := NewMem()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/d/f")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	var cur, synced []byte
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(255) + 1)
		}
		return b
	}
	const maxSize = 4*chunkSize + 1000
	check := func(fsys *MemFS, want []byte, step int, what string) {
		t.Helper()
		g, err := fsys.Open("/d/f")
		if err != nil {
			t.Fatalf("step %d %s: %v", step, what, err)
		}
		defer g.Close()
		got := make([]byte, len(want)+1)
		n, err := g.ReadAt(got, 0)
		if err != io.EOF || !bytes.Equal(got[:n], want) {
			t.Fatalf("step %d %s: read %d bytes (%v), want %d; equal %v", step, what, n, err, len(want), bytes.Equal(got[:n], want))
		}
		// What a file grows by reads as zeros.
		if err := g.Truncate(int64(len(want) + 5000)); err != nil {
			t.Fatal(err)
		}
		tail := make([]byte, 5000)
		if _, err := g.ReadAt(tail, int64(len(want))); err != nil || !bytes.Equal(tail, make([]byte, 5000)) {
			t.Fatalf("step %d %s: grown by 5000 bytes, read %v, zeros: %v", step, what, err, bytes.Equal(tail, make([]byte, 5000)))
		}
	}
	for step := range 3000 {
		switch op := rng.IntN(10); {
		case op < 3: // append
			p := randBytes(rng.IntN(200 << 10))
			if len(cur)+len(p) > maxSize {
				continue
			}
			if _, err := f.Write(p); err != nil {
				t.Fatal(err)
			}
			cur = append(cur, p...)
		case op < 5: // overwrite, maybe past the end
			off := rng.IntN(len(cur) + 4096)
			p := randBytes(rng.IntN(100 << 10))
			if off+len(p) > maxSize {
				continue
			}
			if _, err := f.WriteAt(p, int64(off)); err != nil {
				t.Fatal(err)
			}
			if end := off + len(p); end > len(cur) {
				cur = append(cur, make([]byte, end-len(cur))...)
			}
			copy(cur[off:], p)
		case op < 6: // truncate, shorter or longer
			size := rng.IntN(len(cur) + chunkSize/2)
			if size > maxSize {
				continue
			}
			if err := f.Truncate(int64(size)); err != nil {
				t.Fatal(err)
			}
			if size <= len(cur) {
				cur = cur[:size]
			} else {
				cur = append(cur, make([]byte, size-len(cur))...)
			}
		case op < 8:
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			synced = append(synced[:0], cur...)
		case op < 9: // a read anywhere
			off := rng.IntN(len(cur) + 10)
			got := make([]byte, rng.IntN(3*chunkSize))
			n, err := f.ReadAt(got, int64(off))
			want := []byte{}
			if off < len(cur) {
				want = cur[off:min(len(cur), off+len(got))]
			}
			if n != len(want) || !bytes.Equal(got[:n], want) || (n < len(got)) != (err == io.EOF) {
				t.Fatalf("step %d: ReadAt(%d, %d) = %d, %v; want %d bytes", step, len(got), off, n, err, len(want))
			}
		default:
			check(m.Clone(), cur, step, "clone")
			check(m.CrashClone(), synced, step, "crash clone")
		}
		if sz, err := f.Size(); err != nil || sz != int64(len(cur)) {
			t.Fatalf("step %d: size %d %v, want %d", step, sz, err, len(cur))
		}
	}
	check(m, cur, -1, "file")
	if err := errors.Join(f.Close(), m.Remove("/d/f"), m.SyncDir("/d")); err != nil {
		t.Fatal(err)
	}
	if got := m.HeldBytes(); got != 0 {
		t.Fatalf("file removed: holds %d bytes", got)
	}
}

// TestMemReleasesFileMemory checks that a memory file's chunks go back when
// the file is truncated and when it is removed, once nothing can read them
// any more: not while the file is open, nor while its name would survive a
// crash (its removal is not durable until SyncDir).
func TestMemReleasesFileMemory(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/d/seg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 5*chunkSize)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if got := m.HeldBytes(); got != 5*chunkSize {
		t.Fatalf("5 MiB written: holds %d bytes", got)
	}
	if err := f.Truncate(chunkSize + 10); err != nil {
		t.Fatal(err)
	}
	// The synced 5 MiB stay (a crash keeps them), and the chunk cut in
	// the middle is copied before its tail is cleared.
	if got := m.HeldBytes(); got != 6*chunkSize {
		t.Fatalf("truncated, not synced: holds %d bytes, want 6 chunks", got)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := m.HeldBytes(); got != 2*chunkSize {
		t.Fatalf("truncated to 1 MiB + 10 and synced: holds %d bytes, want 2 chunks", got)
	}
	if err := m.Remove("/d/seg"); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if got := m.HeldBytes(); got != 2*chunkSize {
		t.Fatalf("removed while open: holds %d bytes, want 2 chunks", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := m.HeldBytes(); got != 0 {
		t.Fatalf("removed and closed: holds %d bytes", got)
	}

	// A removal not yet made durable keeps the synced bytes.
	g, err := m.Create("/d/other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Write(make([]byte, 2*chunkSize)); err != nil {
		t.Fatal(err)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(g.Close(), m.SyncDir("/d"), m.Remove("/d/other")); err != nil {
		t.Fatal(err)
	}
	if got := m.HeldBytes(); got != 2*chunkSize {
		t.Fatalf("removal not durable: holds %d bytes, want 2 chunks", got)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if got := m.HeldBytes(); got != 0 {
		t.Fatalf("removal durable: holds %d bytes", got)
	}
}

// TestMemAppendsDoNotCopy checks that appending and syncing allocates each
// byte's room once: no append or sync copies what was written before.
func TestMemAppendsDoNotCopy(t *testing.T) {
	m := NewMem()
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	batch := make([]byte, 16<<10)
	const total = 32 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range total / len(batch) {
		if _, err := f.Write(batch); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := m.HeldBytes(); got > total+chunkSize {
		t.Fatalf("holds %d bytes for %d written", got, total)
	}
	// The Go heap holds at most the chunks (where they are not mapped
	// outside it) and the chunk list.
	if heap := after.TotalAlloc - before.TotalAlloc; heap > total+2*chunkSize {
		t.Fatalf("allocated %d heap bytes to append and sync %d", heap, total)
	}
}
