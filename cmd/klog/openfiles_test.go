package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestUpStartsUnderLowFileLimit: a data directory of 1,000 partitions of
// three segments each — 12,000 segment files — written by a node with the
// usual limit, then opened by `klog up` under `ulimit -n 256`, after a
// SIGKILL (every log recovered) and again after a clean stop. Each time the
// node starts, serves a fetch from the oldest segment of a partition and
// takes a produce, and keeps within the limit (counted in /proc/PID/fd).
func TestUpStartsUnderLowFileLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/PID/fd, which only Linux has")
	}
	const (
		partitions = 1000
		rounds     = 3 // batches, and so segments, per partition
		nofile     = 256
	)
	dir := t.TempDir()
	// Every batch after a partition's first rolls a new segment.
	args := []string{"--data-dir", dir, "--listen", "127.0.0.1:0"}
	p := startUp(t, args...)
	createTopic(t, p.brokers, "many", partitions, "internal.segment.bytes", "100")
	for round := range rounds {
		rs := make([]*kgo.Record, partitions)
		for i := range rs {
			rs[i] = &kgo.Record{Topic: "many", Partition: int32(i), Value: fmt.Appendf(nil, "r%d-p%d", round, i)}
		}
		produceRecords(t, p.brokers, rs...)
	}
	t.Logf("writer node: %d descriptors open", openDescriptors(t, p))

	check := func(p *upProcess, part int32) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.brokers),
			kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"many": {part: kgo.NewOffset().At(0)}}))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		fs := cl.PollRecords(ctx, 1)
		if err := fs.Err0(); err != nil {
			t.Fatalf("fetch partition %d from offset 0: %v", part, err)
		}
		recs := fs.Records()
		if len(recs) == 0 || recs[0].Offset != 0 || string(recs[0].Value) != fmt.Sprintf("r0-p%d", part) {
			t.Fatalf("partition %d at offset 0: %v, want r0-p%d", part, recs, part)
		}
		produceRecords(t, p.brokers, &kgo.Record{Topic: "many", Partition: part, Value: []byte("after restart")})
		if n := openDescriptors(t, p); n > nofile {
			t.Fatalf("%d descriptors open under a limit of %d", n, nofile)
		} else {
			t.Logf("node under ulimit -n %d: %d descriptors open", nofile, n)
		}
	}

	p.kill(t)
	p = startUpWithFileLimit(t, nofile, args...)
	check(p, 500)
	p.stop(t)
	p = startUpWithFileLimit(t, nofile, args...)
	check(p, 999)
	p.stop(t)
}

// openDescriptors counts the descriptors the process has open.
func openDescriptors(t *testing.T, p *upProcess) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
