package snapshot

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveRestore(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	state := t.TempDir()
	write(t, filepath.Join(data, "node-0", "orders-0", "00000000000000000000.log"), "v1")
	write(t, filepath.Join(data, "cluster.json"), "{}")
	write(t, filepath.Join(data, "klog.log"), "output")
	// The control socket of a running cluster is neither saved nor removed.
	sock := filepath.Join(data, "control.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	dir, err := Path(state, "seeded")
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(data, dir); err != nil {
		t.Fatal(err)
	}
	if err := Save(data, dir); !errors.Is(err, ErrExists) {
		t.Fatalf("second save: %v, want ErrExists", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "control.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket saved: %v", err)
	}

	write(t, filepath.Join(data, "node-0", "orders-0", "00000000000000000000.log"), "v1v2")
	write(t, filepath.Join(data, "node-0", "payments-0", "00000000000000000000.log"), "new")
	if err := Restore(dir, data); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(data, "node-0", "orders-0", "00000000000000000000.log")); got != "v1" {
		t.Fatalf("restored segment %q, want v1", got)
	}
	if _, err := os.Stat(filepath.Join(data, "node-0", "payments-0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a topic made after the save survived the restore: %v", err)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("socket removed: %v", err)
	}
	if got := read(t, filepath.Join(data, "klog.log")); got != "output" {
		t.Fatalf("output log %q after restore", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "klog.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("output log saved: %v", err)
	}
	if got := read(t, filepath.Join(dir, "node-0", "orders-0", "00000000000000000000.log")); got != "v1" {
		t.Fatalf("the snapshot changed: %q", got)
	}
	if err := Restore(filepath.Join(state, "nope"), data); !errors.Is(err, ErrNotFound) {
		t.Fatalf("restore of a missing snapshot: %v", err)
	}
	for _, bad := range []string{"", "..", "a/b", "../x"} {
		if _, err := Path(state, bad); !errors.Is(err, ErrBadName) {
			t.Fatalf("Path(%q): %v, want ErrBadName", bad, err)
		}
	}
}

// TestListDelete: List names each saved snapshot with its files and
// bytes, not a save in progress; Delete removes one, and a second Delete
// of it is ErrNotFound.
func TestListDelete(t *testing.T) {
	root := t.TempDir()
	if got, err := List(filepath.Join(root, "none")); err != nil || len(got) != 0 {
		t.Fatalf("List of a missing root: %v, %v", got, err)
	}
	data := t.TempDir()
	write(t, filepath.Join(data, "node-0", "orders-0", "00000000000000000000.log"), "abcd")
	write(t, filepath.Join(data, "cluster.json"), "{}")
	for _, name := range []string{"b", "a"} {
		dir, err := Path(root, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Save(data, dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, ".c.saving-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" || got[0].Files != 2 || got[0].Bytes != 6 || got[0].Saved.IsZero() {
		t.Fatalf("List: %+v", got)
	}
	dir, _ := Path(root, "a")
	if err := Delete(dir); err != nil {
		t.Fatal(err)
	}
	if err := Delete(dir); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete of a deleted snapshot: %v", err)
	}
	if got, _ := List(root); len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("List after Delete: %+v", got)
	}
}
