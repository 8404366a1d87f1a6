package broker

import (
	"context"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/vfs"
)

// While the disk is full every produce fails and every maintenance pass
// meets the same error; the node's log stays a handful of lines, not one
// per request and partition (it logged about 480 lines a second).
func TestDiskFullDoesNotFloodTheLog(t *testing.T) {
	ctx := testkit.Context(t)
	var logs testkit.Buffer
	n, err := Start(ctx, Config{
		Listen:  "127.0.0.1:0",
		Memory:  true,
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Configs: map[string]string{"log.retention.check.interval.ms": "10", "log.flush.interval.ms": "10"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Advertised()), kgo.AllowAutoTopicCreation(),
		kgo.RecordRetries(0), kgo.RequestRetries(0), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	for p := range 8 {
		r := &kgo.Record{Topic: "full", Partition: int32(p), Value: []byte("before")}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce before the disk fills: %v", err)
		}
	}
	before := strings.Count(logs.String(), "\n")

	n.mem.InjectError(func(op vfs.Op, _ string) error {
		switch op {
		case vfs.OpWrite, vfs.OpSync, vfs.OpCreate, vfs.OpTruncate, vfs.OpRename:
			return syscall.ENOSPC
		}
		return nil
	})
	failed := 0
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		r := &kgo.Record{Topic: "full", Partition: int32(failed % 8), Value: []byte("while full")}
		if cl.ProduceSync(pctx, r).FirstErr() != nil {
			failed++
		}
		cancel()
	}
	lines := strings.Count(logs.String(), "\n") - before
	t.Logf("%d produces failed with the disk full; %d log lines", failed, lines)
	if failed < 50 {
		t.Fatalf("only %d produces failed in 2 s with the disk full", failed)
	}
	if lines > 40 {
		t.Fatalf("%d log lines in 2 s with the disk full, want a handful:\n%s", lines, logs.String())
	}
}
