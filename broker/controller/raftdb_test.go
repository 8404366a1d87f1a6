package controller

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedStoreRefused: a raft.db cut short (to 8 KiB, to half its
// size) or with both meta pages overwritten makes New fail with
// ErrStoreDamaged naming the file, where bbolt alone crashed the process
// with SIGBUS reading past the end of the file. The intact file still
// opens.
func TestDamagedStoreRefused(t *testing.T) {
	src := t.TempDir()
	c := start(t, testConfig(t, src))
	// A topic of many partitions is one large metadata record: the file
	// grows past bbolt's first 32 KiB map, so that its half lacks pages.
	if _, err := c.CreateTopic(ctxT(t), TopicSpec{Name: "big", Partitions: 2000, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	intact, err := os.ReadFile(filepath.Join(src, RaftDBFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("raft.db is %d bytes", len(intact))
	cases := []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"cut to 8KiB", func(b []byte) []byte { return b[:8<<10] }, "cut short"},
		{"cut to half", func(b []byte) []byte { return b[:len(b)/2] }, "cut short"},
		{"cut to 5000 bytes", func(b []byte) []byte { return b[:5000] }, "too small"},
		{"meta pages zeroed", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			clear(b[:8<<10])
			return b
		}, "invalid database"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, RaftDBFile)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(intact), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := New(testConfig(t, dir))
			if err == nil {
				c.Close()
				t.Fatal("New opened a damaged raft.db")
			}
			if !errors.Is(err, ErrStoreDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want ErrStoreDamaged naming %s and saying %q", err, path, tc.want)
			}
		})
	}
	start(t, testConfig(t, src))
}
