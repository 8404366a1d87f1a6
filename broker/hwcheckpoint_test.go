package broker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
)

// TestRestartedFollowerHighWatermark: a follower restarted on a log whose
// end is past its checkpointed high watermark (replication-offset-checkpoint
// older than the log, as after a crash) starts from the checkpoint, not
// from its log end: with its leader down it learns nothing more, and its
// log end vouches for nothing being committed.
func TestRestartedFollowerHighWatermark(t *testing.T) {
	c := startCluster(t, 3, "broker.session.timeout.ms", "60000", "replica.fetch.backoff.ms", "20")
	ctx := testkit.Context(t)
	const topic = "hw"
	p := replicatedTopic(t, ctx, c.nodes, topic).Partitions[0]
	f := quietFollower(t, ctx, c, p)
	cl := nodeClient(t, c.nodes[p.Leader])
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Append(nil, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	part := func() (hw, end int64) {
		r := c.nodes[f].PartitionForTest(topic, 0)
		return r.HighWatermark(), r.LogEndOffset()
	}
	testkit.WaitFor(t, "the follower at high watermark 10", func() (bool, string) {
		hw, end := part()
		return hw == 10 && end == 10, fmt.Sprintf("high watermark %d, log end %d", hw, end)
	})
	c.stop(int(f))
	file := filepath.Join(c.cfgs[f].DataDir, log.ReplicationOffsetCheckpoint)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nhw 0 10\n") {
		t.Fatalf("checkpoint written at close: %q", b)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "\nhw 0 10\n", "\nhw 0 4\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.stop(int(p.Leader))
	c.start(int(f))
	if hw, end := part(); hw != 4 || end != 10 {
		t.Errorf("restarted follower with its leader down: high watermark %d, log end %d; want 4 (the checkpoint), 10", hw, end)
	}
}
