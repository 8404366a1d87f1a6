package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
)

// TestLimitFSKeepsOpenFilesUnderTheCap: 40 files behind a cap of 4, written
// and read back in turn and then by 8 goroutines at once; the MemFS under
// the cap never has more than 4 open, and every file reads back what was
// written to it, appends continuing at its end after a reopen.
func TestLimitFSKeepsOpenFilesUnderTheCap(t *testing.T) {
	mem := NewMem()
	lfs := LimitOpen(mem, 4)
	const n = 40
	files := make([]File, n)
	for i := range files {
		f, err := lfs.Create(fmt.Sprintf("/f%d", i))
		if err != nil {
			t.Fatal(err)
		}
		files[i] = f
	}
	for round := range 2 {
		for i, f := range files {
			if _, err := f.Write(fmt.Appendf(nil, "%02d%d", i, round)); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(i int) error {
		buf := make([]byte, 6)
		if err := readAll(files[i], buf); err != nil {
			return err
		}
		if want := fmt.Sprintf("%02d0%02d1", i, i); string(buf) != want {
			return fmt.Errorf("file %d holds %q, want %q", i, buf, want)
		}
		return nil
	}
	for i := range files {
		if err := check(i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for k := range 200 {
				if err := check((g*7 + k*13) % n); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, peak := mem.OpenFiles(); peak > 4 {
		t.Fatalf("%d files open at once under a cap of 4", peak)
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if open, _ := mem.OpenFiles(); open != 0 || lfs.OpenFiles() != 0 {
		t.Fatalf("after closing every handle: %d files open (LimitFS counts %d)", open, lfs.OpenFiles())
	}
	if _, err := files[0].ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("read of a closed handle: %v, want ErrClosed", err)
	}
}

func readAll(f File, buf []byte) error {
	n, err := f.ReadAt(buf, 0)
	if n == len(buf) {
		return nil
	}
	return fmt.Errorf("read %d of %d bytes: %w", n, len(buf), err)
}

// TestLimitFSReopensRealFiles: on the OS file system, a file closed
// underneath is reopened by name and appends go on at its end.
func TestLimitFSReopensRealFiles(t *testing.T) {
	dir := t.TempDir()
	lfs := LimitOpen(OS(), 1)
	a, err := lfs.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	b, err := lfs.Create(filepath.Join(dir, "b")) // closes a
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.Write([]byte("cd")); err != nil { // reopens a, closes b
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if err := readAll(a, buf); err != nil || string(buf) != "abcd" {
		t.Fatalf("a holds %q (%v), want abcd", buf, err)
	}
	if n, err := a.Size(); n != 4 || err != nil {
		t.Fatalf("size %d (%v), want 4", n, err)
	}
	if lfs.OpenFiles() != 1 {
		t.Fatalf("%d files open under a cap of 1", lfs.OpenFiles())
	}
}

// TestLimitFSSyncsBeforeClosing: a file with unsynced writes that gives up
// its slot is synced first, so no write error can be lost with its
// descriptor: the written bytes are durable once it is closed.
func TestLimitFSSyncsBeforeClosing(t *testing.T) {
	mem := NewMem()
	lfs := LimitOpen(mem, 1)
	a, err := lfs.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	if _, err := lfs.Create("/b"); err != nil { // closes a
		t.Fatal(err)
	}
	if err := mem.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	crashed := mem.CrashClone()
	f, err := crashed.Open("/a")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if err := readAll(f, buf); err != nil || string(buf) != "kept" {
		t.Fatalf("after a crash /a holds %q (%v), want kept", buf, err)
	}
}

// TestLimitFSSyncErrorIsSticky: when the sync before closing a dirty file
// fails, the handle's next write and sync report it, so that its owner
// never believes the lost writes durable.
func TestLimitFSSyncErrorIsSticky(t *testing.T) {
	mem := NewMem()
	lfs := LimitOpen(mem, 1)
	a, err := lfs.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("lost")); err != nil {
		t.Fatal(err)
	}
	mem.InjectError(func(op Op, name string) error {
		if op == OpSync && name == "/a" {
			return ErrInjected
		}
		return nil
	})
	if _, err := lfs.Create("/b"); err != nil { // closes a, whose sync fails
		t.Fatal(err)
	}
	mem.InjectError(nil)
	if err := a.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("sync after the failed sync: %v, want ErrInjected", err)
	}
	if _, err := a.Write([]byte("x")); !errors.Is(err, ErrInjected) {
		t.Fatalf("write after the failed sync: %v, want ErrInjected", err)
	}
	if _, err := a.ReadAt(make([]byte, 1), 0); err != nil {
		t.Fatalf("read after the failed sync: %v", err)
	}
}

// TestLimitFSRemovedFile: a removed file whose handle was closed
// underneath cannot be reopened; its operations fail with fs.ErrNotExist.
func TestLimitFSRemovedFile(t *testing.T) {
	mem := NewMem()
	lfs := LimitOpen(mem, 1)
	a, err := lfs.Create("/a")
	if err != nil {
		t.Fatal(err)
	}
	if err := lfs.Remove("/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := lfs.Create("/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReadAt(make([]byte, 1), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of a removed file: %v, want fs.ErrNotExist", err)
	}
	if _, err := lfs.Open("/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a removed file: %v, want fs.ErrNotExist", err)
	}
	// /b was closed to make room for the failed reopens, which hold no
	// slot.
	if open, _ := mem.OpenFiles(); open != 0 || lfs.OpenFiles() != 0 {
		t.Fatalf("%d files open (LimitFS counts %d), want 0", open, lfs.OpenFiles())
	}
}

// TestLimitFSHandleFollowsRename: a handle whose file was closed
// underneath reopens it by its new name after a Rename through the
// LimitFS, and a file renamed over an open handle's name is not what that
// handle reads.
func TestLimitFSHandleFollowsRename(t *testing.T) {
	mem := NewMem()
	lfs := LimitOpen(mem, 1)
	a, err := lfs.Create("/seg.log.cleaned")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	old, err := lfs.Create("/seg.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Write([]byte("old")); err != nil {
		t.Fatal(err)
	}
	// The cleaner's swap: old aside, new in its place.
	if err := lfs.Rename("/seg.log", "/seg.log.deleted"); err != nil {
		t.Fatal(err)
	}
	if err := lfs.Rename("/seg.log.cleaned", "/seg.log"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // each read closes the other file, so both reopen
		for _, c := range []struct {
			f    File
			want string
		}{{a, "new"}, {old, "old"}} {
			b := make([]byte, 3)
			if _, err := c.f.ReadAt(b, 0); err != nil || string(b) != c.want {
				t.Fatalf("read %q, %v; want %q", b, err, c.want)
			}
		}
	}
	if lfs.OpenFiles() != 1 {
		t.Fatalf("%d open", lfs.OpenFiles())
	}
}
