package broker_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
)

// diskNode starts a node on dir and closes it when the test ends (or
// sooner, by its caller).
func diskNode(t *testing.T, dir string) (*broker.Node, error) {
	t.Helper()
	n, err := broker.Start(testkit.Context(t), broker.Config{Listen: "127.0.0.1:0", DataDir: dir, Logger: testkit.Logger(t, slog.LevelWarn)})
	if err == nil {
		t.Cleanup(func() { _ = n.Close() })
	}
	return n, err
}

func mustDiskNode(t *testing.T, dir string) *broker.Node {
	t.Helper()
	n, err := diskNode(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func closeNode(t *testing.T, n *broker.Node) {
	t.Helper()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

// fillTopic creates topic with one partition on n and appends records to
// it.
func fillTopic(ctx context.Context, t *testing.T, n *broker.Node, topic string, records int) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Advertised()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	for range records {
		cl.Produce(ctx, &kgo.Record{Value: []byte("old")}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return adm
}

// copyRaftDir replaces to/raft with a copy of from/raft.
func copyRaftDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(to, "raft")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(to, "raft"), os.DirFS(filepath.Join(from, "raft"))); err != nil {
		t.Fatal(err)
	}
}

// TestMissingRaftDirRefused: a data directory whose raft/ is gone but
// which holds partition logs does not start (it would form a new cluster
// whose topics meet the old logs and whose producer IDs meet the old
// producers' state): Start fails with ErrMetadataStoreMissing naming the
// directory, and creates no Raft store.
func TestMissingRaftDirRefused(t *testing.T) {
	ctx := testkit.Context(t)
	dir := t.TempDir()
	n := mustDiskNode(t, dir)
	fillTopic(ctx, t, n, "c", 20)
	closeNode(t, n)
	if err := os.RemoveAll(filepath.Join(dir, "raft")); err != nil {
		t.Fatal(err)
	}
	_, err := diskNode(t, dir)
	if !errors.Is(err, broker.ErrMetadataStoreMissing) || !strings.Contains(err.Error(), filepath.Join(dir, "raft")) ||
		!strings.Contains(err.Error(), "c-0") {
		t.Fatalf("start without raft/: %v; want ErrMetadataStoreMissing naming %s and c-0", err, filepath.Join(dir, "raft"))
	}
	if _, err := os.Stat(filepath.Join(dir, "raft")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused start left a raft directory behind: %v", err)
	}
}

// TestOtherClusterDataDirRefused: a data directory of one cluster started
// with another cluster's Raft store is refused with log.ErrNotThisCluster,
// as Kafka refuses a meta.properties of another cluster.id.
func TestOtherClusterDataDirRefused(t *testing.T) {
	ctx := testkit.Context(t)
	a, b := t.TempDir(), t.TempDir()
	n := mustDiskNode(t, a)
	fillTopic(ctx, t, n, "c", 20)
	closeNode(t, n)
	closeNode(t, mustDiskNode(t, b))
	copyRaftDir(t, b, a)
	_, err := diskNode(t, a)
	if !errors.Is(err, log.ErrNotThisCluster) || !strings.Contains(err.Error(), a) {
		t.Fatalf("start on another cluster's data dir: %v; want ErrNotThisCluster naming %s", err, a)
	}
	// Each directory still starts with its own store.
	closeNode(t, mustDiskNode(t, b))
}

// TestStrayLogNotServed: a partition log whose topic the metadata does
// not know (here the Raft store is from before the topic was created, as
// when a topic is deleted while the node is away) is moved aside, not
// served: the topic created again under the same name starts empty
// instead of showing the old log's records under its new topic ID.
func TestStrayLogNotServed(t *testing.T) {
	ctx := testkit.Context(t)
	dir, before := t.TempDir(), t.TempDir()
	closeNode(t, mustDiskNode(t, dir))
	copyRaftDir(t, dir, before)
	n := mustDiskNode(t, dir)
	fillTopic(ctx, t, n, "c", 20)
	closeNode(t, n)
	copyRaftDir(t, before, dir)

	n = mustDiskNode(t, dir)
	adm := fillTopic(ctx, t, n, "c", 0)
	ends, err := adm.ListEndOffsets(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := ends.Lookup("c", 0); !ok || o.Err != nil || o.Offset != 0 {
		t.Errorf("new topic c ends at %+v: the old topic's log is served under it", o)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stray bool
	for _, e := range names {
		stray = stray || (strings.HasPrefix(e.Name(), "c-0.") && strings.HasSuffix(e.Name(), "-stray"))
	}
	if !stray {
		t.Errorf("no c-0.<id>-stray in %v", names)
	}
}
