//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/snapshot"
)

// produceN writes n records to orders through brokers.
func produceN(t *testing.T, brokers []string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range n {
		if err := cl.ProduceSync(testkit.Context(t), &kgo.Record{Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitOrdersEnd waits until the end offset of orders[0] through brokers
// is want. The end offset is the high watermark: a leader relaunched on
// a copy of its data starts from the high watermark its checkpoint kept,
// which may be behind its log, and moves on once its follower fetches, as
// Kafka's does. A copy with other records than want never gets there.
func waitOrdersEnd(t *testing.T, brokers []string, want int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	testkit.WaitFor(t, fmt.Sprintf("the end offset of orders[0] at %d", want), func() (bool, string) {
		offs, err := kadm.NewClient(cl).ListEndOffsets(testkit.Context(t), "orders")
		if err != nil {
			return false, err.Error()
		}
		o, _ := offs.Lookup("orders", 0)
		if o.Err != nil {
			return false, o.Err.Error()
		}
		return o.Offset == want, fmt.Sprintf("end offset %d", o.Offset)
	})
}

// TestSnapshotSaveRestore: klog snapshot save copies a running klog up -n
// cluster's data and resumes it; what is produced after is gone once
// klog snapshot restore has put the copy back and relaunched the nodes,
// and the snapshot restores again.
func TestSnapshotSaveRestore(t *testing.T) {
	stateDir := t.TempDir()
	info := upDetached(t, stateDir, "-n", "2", "--any-port", "--data-dir", t.TempDir(), "--seed-topic", "orders:1:2")
	defer stateRun(t, stateDir, "down")
	produceN(t, info.Brokers, 3)
	if r := stateRun(t, stateDir, "snapshot", "save", "three"); r.code != 0 {
		t.Fatalf("klog snapshot save: exit %d %s", r.code, r.stderr)
	}
	if r := stateRun(t, stateDir, "snapshot", "save", "three"); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("klog snapshot save of a name taken: exit %d %s", r.code, r.stderr)
	}
	produceN(t, info.Brokers, 2)
	waitOrdersEnd(t, info.Brokers, 5)
	for range 2 {
		if r := stateRun(t, stateDir, "snapshot", "restore", "three"); r.code != 0 {
			t.Fatalf("klog snapshot restore: exit %d %s", r.code, r.stderr)
		}
		waitOrdersEnd(t, info.Brokers, 3)
		produceN(t, info.Brokers, 1)
	}
}

// TestSnapshotSingleNode: a single node is snapshotted stopped, by its
// data directory; while it runs, klog snapshot refuses.
func TestSnapshotSingleNode(t *testing.T) {
	stateDir, dir := t.TempDir(), t.TempDir()
	info := upDetached(t, stateDir, "--any-port", "--data-dir", dir, "--seed-topic", "orders:1")
	produceN(t, info.Brokers, 3)
	if r := stateRun(t, stateDir, "snapshot", "save", "three"); r.code != 1 || !strings.Contains(r.stderr, "klog down") {
		t.Fatalf("klog snapshot save of a running node: exit %d %s", r.code, r.stderr)
	}
	stateRun(t, stateDir, "down")
	if r := stateRun(t, stateDir, "snapshot", "save", "three", "--data-dir", dir); r.code != 0 {
		t.Fatalf("klog snapshot save --data-dir: exit %d %s", r.code, r.stderr)
	}
	info = upDetached(t, stateDir, "--any-port", "--data-dir", dir)
	produceN(t, info.Brokers, 2)
	stateRun(t, stateDir, "down")
	if r := stateRun(t, stateDir, "snapshot", "restore", "three", "--data-dir", dir); r.code != 0 {
		t.Fatalf("klog snapshot restore --data-dir: exit %d %s", r.code, r.stderr)
	}
	info = upDetached(t, stateDir, "--any-port", "--data-dir", dir)
	defer stateRun(t, stateDir, "down")
	waitOrdersEnd(t, info.Brokers, 3)
}

// TestSnapshotListDelete: klog snapshot list shows each saved snapshot,
// in JSON too; klog snapshot delete removes one, and a second delete of
// it fails.
func TestSnapshotListDelete(t *testing.T) {
	stateDir, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cluster.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} {
		if r := stateRun(t, stateDir, "snapshot", "save", name, "--data-dir", dir); r.code != 0 {
			t.Fatalf("klog snapshot save %s: exit %d %s", name, r.code, r.stderr)
		}
	}
	r := stateRun(t, stateDir, "snapshot", "list")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "one ") || !strings.HasPrefix(lines[2], "two ") {
		t.Fatalf("klog snapshot list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without a terminal and without --yes nothing is deleted.
	if r := stateRun(t, stateDir, "snapshot", "delete", "one"); r.code != 1 || !strings.Contains(r.stderr, "pass --yes") {
		t.Fatalf("klog snapshot delete without --yes: exit %d %s", r.code, r.stderr)
	}
	if r := stateRun(t, stateDir, "snapshot", "list"); !strings.Contains(r.stdout, "\none ") {
		t.Fatalf("snapshot one is gone after a delete without --yes:\n%s", r.stdout)
	}
	if r := stateRun(t, stateDir, "snapshot", "delete", "one", "--yes"); r.code != 0 {
		t.Fatalf("klog snapshot delete: exit %d %s", r.code, r.stderr)
	}
	if r := stateRun(t, stateDir, "snapshot", "delete", "one", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "no such snapshot") {
		t.Fatalf("second klog snapshot delete: exit %d %s", r.code, r.stderr)
	}
	r = stateRun(t, stateDir, "snapshot", "list", "--format", "json")
	var got []snapshot.Info
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 || len(got) != 1 || got[0].Name != "two" || got[0].Files != 1 || got[0].Bytes != 2 {
		t.Fatalf("klog snapshot list --format json: exit %d %v\n%s", r.code, err, r.stdout)
	}
}
