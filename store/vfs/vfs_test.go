package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"testing"
)

func testFS(t *testing.T, fsys FS, root string) {
	t.Helper()
	dir := filepath.Join(root, "a", "b")
	if err := fsys.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "f")
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(" world")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("J"), 6); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "hello Jorld" {
		t.Fatalf("got %q", buf)
	}
	if n, err := f.ReadAt(buf, 8); n != 3 || err != io.EOF {
		t.Fatalf("short read: %d %v", n, err)
	}
	if err := f.Truncate(5); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("!")); err != nil {
		t.Fatal(err)
	}
	if sz, err := f.Size(); err != nil || sz != 6 {
		t.Fatalf("size %d %v", sz, err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("?")); err != nil {
		t.Fatal(err)
	}
	buf = make([]byte, 7)
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "hello!?" {
		t.Fatalf("got %q", buf)
	}
	_ = f.Close()
	if err := fsys.Rename(name, filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open renamed: %v", err)
	}
	names, err := fsys.List(filepath.Join(root, "a"))
	if err != nil || len(names) != 1 || names[0] != "b" {
		t.Fatalf("list %v %v", names, err)
	}
	st, err := fsys.Stat(filepath.Join(dir, "g"))
	if err != nil || st.Size() != 7 || st.IsDir() {
		t.Fatalf("stat %v %v", st, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove(filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat removed: %v", err)
	}
}

func TestOS(t *testing.T)  { testFS(t, OS(), t.TempDir()) }
func TestMem(t *testing.T) { testFS(t, NewMem(), "/data") }

func TestCrashClone(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	// Synced data and synced name: kept.
	f, _ := m.Create("/d/kept")
	_, _ = f.Write([]byte("abc"))
	_ = f.Sync()
	_, _ = f.Write([]byte("def")) // unsynced tail: lost
	// Name never made durable: lost even though its data is synced.
	g, _ := m.Create("/d/lost")
	_, _ = g.Write([]byte("x"))
	_ = g.Sync()
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	h, _ := m.Create("/d/late")
	_ = h.Sync()
	_ = m.Remove("/d/lost") // removal not synced: file comes back
	c := m.CrashClone()
	cf, err := c.Open("/d/kept")
	if err != nil {
		t.Fatal(err)
	}
	sz, _ := cf.Size()
	buf := make([]byte, sz)
	_, _ = cf.ReadAt(buf, 0)
	if string(buf) != "abc" {
		t.Fatalf("kept = %q", buf)
	}
	if _, err := c.Open("/d/late"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("late survived: %v", err)
	}
	if _, err := c.Open("/d/lost"); err != nil {
		t.Fatalf("unsynced remove took effect: %v", err)
	}
	// Rename becomes durable with SyncDir.
	_ = m.Rename("/d/kept", "/d/renamed")
	_ = m.SyncDir("/d")
	c = m.CrashClone()
	if _, err := c.Open("/d/kept"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("old name survived: %v", err)
	}
	if _, err := c.Open("/d/renamed"); err != nil {
		t.Fatal(err)
	}
	// The clone is independent.
	cf2, _ := c.Open("/d/renamed")
	_, _ = cf2.Write([]byte("zzz"))
	if sz, _ := f.Size(); sz != 6 {
		t.Fatalf("original changed: %d", sz)
	}
}

func TestClone(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, _ := m.Create("/d/f")
	_, _ = f.Write([]byte("abc"))
	_ = f.Sync()
	_ = m.SyncDir("/d")
	_, _ = f.Write([]byte("def")) // unsynced: a killed process keeps it
	g, _ := m.Create("/d/g")      // name not durable: kept too
	_, _ = g.Write([]byte("x"))
	c := m.Clone()
	read := func(fsys *MemFS, name string) string {
		t.Helper()
		h, err := fsys.Open(name)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		sz, _ := h.Size()
		buf := make([]byte, sz)
		_, _ = h.ReadAt(buf, 0)
		return string(buf)
	}
	if got := read(c, "/d/f"); got != "abcdef" {
		t.Fatalf("clone /d/f = %q, want every byte written", got)
	}
	if got := read(c, "/d/g"); got != "x" {
		t.Fatalf("clone /d/g = %q", got)
	}
	// What was durable stays apart: the clone crashes as m would.
	cc := c.CrashClone()
	if got := read(cc, "/d/f"); got != "abc" {
		t.Fatalf("crash of clone /d/f = %q, want the synced bytes", got)
	}
	if _, err := cc.Open("/d/g"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("crash of clone kept an undurable name: %v", err)
	}
	// The clone is independent.
	h, _ := c.Open("/d/f")
	_, _ = h.WriteAt([]byte("zzz"), 0)
	if got := read(m, "/d/f"); got != "abcdef" {
		t.Fatalf("original changed: %q", got)
	}
}

func TestInjectError(t *testing.T) {
	m := NewMem()
	_ = m.MkdirAll("/d")
	f, _ := m.Create("/d/f")
	writes := 0
	m.InjectError(func(op Op, name string) error {
		if op == OpWrite {
			writes++
			if writes == 2 {
				return ErrInjected
			}
		}
		if op == OpSync {
			return ErrInjected
		}
		return nil
	})
	if _, err := f.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("b")); !errors.Is(err, ErrInjected) {
		t.Fatalf("second write: %v", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("sync: %v", err)
	}
	m.InjectError(nil)
	buf := make([]byte, 1)
	if _, err := f.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, []byte("a")) {
		t.Fatalf("state after failed write: %q %v", buf, err)
	}
	if sz, _ := f.Size(); sz != 1 {
		t.Fatalf("failed write changed size: %d", sz)
	}
	_ = f.Close()
	if err := f.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("double close: %v", err)
	}
}
