package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/controller"
)

// upExits runs `klog up` with args in a child process that must exit by
// itself, and returns its result.
func upExits(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"up", "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), "KLOG_TEST_AS_KLOG=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); ctx.Err() != nil {
		t.Fatalf("klog up %q did not exit: %v; stderr:\n%s", args, err, stderr.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// TestUpRefusesDamagedMetadataStore: `klog up` on a data directory whose
// raft.db is cut short (to 8 KiB, to half) or whose raft/ is gone exits 1
// with one line naming what is wrong and what to do, where it died of
// SIGBUS with a goroutine dump, or formed a new cluster over the old
// logs. The intact directory starts again.
func TestUpRefusesDamagedMetadataStore(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--listen", "127.0.0.1:0"}
	p := startUp(t, args...)
	createTopic(t, p.brokers, "c", 1)
	p.stop(t)
	raftDir := filepath.Join(dir, "node-0", "raft")
	db := filepath.Join(raftDir, "raft.db")
	intact, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt grows its file ahead of the pages in use: cutting the file to
	// half of its size may leave every page the header names. Half of the
	// pages the header names is a cut that loses some.
	used, err := controller.StoreSize(db)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		damage func() error
		names  string
	}{
		{"raft.db cut to 8KiB", func() error { return os.WriteFile(db, intact[:8<<10], 0o600) }, db},
		{"raft.db cut to half its pages", func() error { return os.WriteFile(db, intact[:used/2], 0o600) }, db},
		{"raft dir removed", func() error { return os.RemoveAll(raftDir) }, raftDir},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.damage(); err != nil {
				t.Fatal(err)
			}
			r := upExits(t, args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "klog: ") ||
				!strings.Contains(lines[0], tc.names) || !strings.Contains(lines[0], "restore") {
				t.Fatalf("exit %d; stderr:\n%s\nwant exit 1 and one line naming %s and what to do", r.code, r.stderr, tc.names)
			}
			t.Log(lines[0])
		})
	}
	if err := os.MkdirAll(raftDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, intact, 0o600); err != nil {
		t.Fatal(err)
	}
	startUp(t, args...).stop(t)
}
