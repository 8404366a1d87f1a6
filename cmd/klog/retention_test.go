package main

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
)

// stop ends the process with SIGTERM, as Ctrl-C would, and waits for it.
func (p *upProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("klog up after SIGTERM: %v", err)
	}
}

// TestUpRetentionKeepsCommittedOffsets: time retention deletes old
// segments of an ordinary topic, but never those of the compacted internal
// topics, so committed offsets and transaction state outlive any number of
// retention passes and restarts. It runs the commands a new user would:
//
//	klog up --data-dir D -X log.roll.ms=1000 -X log.retention.ms=3000 -X log.retention.check.interval.ms=500
//	klog topic create t1 -p 1; printf 'x\ny\nz\n' | klog produce t1 -q
//	klog consume t1 -g g1 -e
//	... retention runs ...; printf 'w\n' | klog produce t1 -q; klog consume t1 -g g2 -e
//	... restart on D ...; klog group describe g1
func TestUpRetentionKeepsCommittedOffsets(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--listen", "127.0.0.1:0",
		"-X", "log.roll.ms=1000", "-X", "log.retention.ms=3000", "-X", "log.retention.check.interval.ms=500"}
	p := startUp(t, args...)
	b := p.brokers
	mustRun(t, b, "", "topic", "create", "t1", "-p", "1")
	mustRun(t, b, "x\ny\nz\n", "produce", "t1", "-q")
	mustRun(t, b, "", "consume", "t1", "-g", "g1", "-e")
	mustRun(t, b, "a\nb\n", "produce", "t1", "-q", "--txn-id", "tx1")

	// Retention has run past the group's commit and the transaction once
	// t1's first records are gone: they are older than both.
	logStart := func(b string, at int64) {
		t.Helper()
		adm := testAdmin(t, b)
		testkit.WaitFor(t, fmt.Sprintf("retention to move t1's log start to %d", at), func() (bool, string) {
			starts, err := adm.ListStartOffsets(testkit.Context(t), "t1")
			if err != nil {
				return false, err.Error()
			}
			o, _ := starts.Lookup("t1", 0)
			return o.Offset >= at, fmt.Sprintf("log start %d (%v)", o.Offset, o.Err)
		})
	}
	logStart(b, 3)
	mustRun(t, b, "w\n", "produce", "t1", "-q") // at 6, after x y z, a b and the commit marker
	mustRun(t, b, "", "consume", "t1", "-g", "g2", "-e")
	const g2Committed = 7
	end := int64(g2Committed)
	logStart(b, end) // w's segment, seconds younger, went too

	check := func(b string) {
		t.Helper()
		adm := testAdmin(t, b)
		fetched, err := adm.FetchOffsets(testkit.Context(t), "g1")
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := fetched.Lookup("t1", 0); !ok || o.At != 3 {
			t.Fatalf("g1's committed offset for t1/0: %+v (found %v), want 3", o, ok)
		}
		fetched, err = adm.FetchOffsets(testkit.Context(t), "g2")
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := fetched.Lookup("t1", 0); !ok || o.At != g2Committed {
			t.Fatalf("g2's committed offset for t1/0: %+v (found %v), want %d", o, ok, g2Committed)
		}
		described, err := adm.DescribeTransactions(testkit.Context(t), "tx1")
		if err != nil {
			t.Fatalf("describe transaction tx1: %v", err)
		}
		if s := described["tx1"].State; s != "CompleteCommit" {
			t.Fatalf("transaction tx1 in state %q, want CompleteCommit", s)
		}
		if r := klogRun(t, b, "", "group", "describe", "g1"); r.code != 0 {
			t.Fatalf("klog group describe g1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	check(b)

	// Restart on the same data directory, then let retention run again on
	// the reloaded logs before checking once more and restarting again.
	for round := range 2 {
		p.stop(t)
		p = startUp(t, args...)
		b = p.brokers
		check(b)
		produceRecords(t, b, &kgo.Record{Topic: "t1", Value: []byte(fmt.Sprint("v", round))})
		end++
		logStart(b, end)
		check(b)
	}
}
