package main

// leader-tail-cut, on a local cluster run by runCluster (cluster.go) while
// its acks=all producer writes (issue 26): the leader of partition 0 is
// killed (klog node kill), its last segment cut in half, which is what a
// power loss of its machine's page cache leaves, and started again half a
// second later, well within its broker session. The node must not lead
// again at its old leader epoch with the shorter log, which would have
// its followers truncate acknowledged records to it: the supervisor's
// notice of its exit fences it at once, its new incarnation registers
// fenced too, another replica leads at a higher epoch, and the restarted
// node fetches what it lost. A few rounds; the ledger checks what was
// acknowledged at the end.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/klogdev/klog/scripts/internal/klogproc"
	"github.com/klogdev/klog/scripts/internal/ledger"
)

const (
	// tailCutRounds is how many times leader-tail-cut kills a leader.
	tailCutRounds = 3
	// tailCutDowntime is how long the killed leader stays down: less
	// than the cluster's broker session (1.5 s), so that its session
	// never expires: the supervisor's notice of its exit and its restart
	// tell the controller it was gone.
	tailCutDowntime = 500 * time.Millisecond
)

// leaderTailCut is the leader-tail-cut scenario.
func leaderTailCut(ctx context.Context, r *clusterRun) (string, error) {
	var rounds, stale []string
	r.afterRead = func(_ context.Context, reads []ledger.Read) (string, error) {
		if len(stale) > 0 {
			return "", fmt.Errorf("the restarted leader led at its old leader epoch (%s): %s", strings.Join(stale, "; "), r.led.Check(reads))
		}
		return "every restarted leader came back as a follower", nil
	}
	for round := 1; round <= tailCutRounds; round++ {
		before, err := r.waitPartition(ctx, others(), topic, 0, "led with its full ISR", func(st klogproc.PartitionState) bool {
			return st.Leader >= 0 && len(st.ISR) == clusterNodes
		})
		if err != nil {
			return "", err
		}
		old := before.Leader
		damaged := strings.Count(r.c.NodeLog(old), "truncating damaged segment tail")
		r.fault()
		t := time.Now()
		if err := r.c.KillNode(ctx, old); err != nil {
			return "", err
		}
		r.p.resume.took()
		cut, err := cutLastSegment(r.c, old)
		if err != nil {
			return "", err
		}
		// The downtime is the fault itself: a restart at once.
		wait := time.NewTimer(tailCutDowntime)
		select {
		case <-ctx.Done():
			wait.Stop()
			return "", ctx.Err()
		case <-wait.C:
		}
		if err := r.c.StartNode(ctx, old); err != nil {
			return "", err
		}
		started := time.Since(t)
		if err := r.c.WaitISR(ctx, topic); err != nil {
			return "", err
		}
		rejoined := time.Since(t)
		after, err := r.waitPartition(ctx, others(), topic, 0, "led", func(st klogproc.PartitionState) bool { return st.Leader >= 0 })
		if err != nil {
			return "", err
		}
		if after.LeaderEpoch <= before.LeaderEpoch {
			// Checked once the records are read back, so that the line
			// says what the old epoch's leader cost.
			stale = append(stale, fmt.Sprintf("round %d: node %d leads at epoch %d again after its restart", round, after.Leader, after.LeaderEpoch))
		}
		recovered := "no damaged tail logged"
		if strings.Count(r.c.NodeLog(old), "truncating damaged segment tail") > damaged {
			recovered = "damaged tail truncated"
		}
		rounds = append(rounds, fmt.Sprintf("round %d: leader %d at epoch %d killed, %s, %s, ready %.1fs after the kill; node %d leads at epoch %d, ISR full %.1fs after the kill",
			round, old, before.LeaderEpoch, cut, recovered, started.Seconds(), after.Leader, after.LeaderEpoch, rejoined.Seconds()))
		if err := r.produceMore(ctx); err != nil {
			return "", fmt.Errorf("after round %d: %w", round, err)
		}
	}
	return strings.Join(rounds, "; "), nil
}

// cutLastSegment truncates the last segment of node id's replica of
// partition 0 of the ledger's topic to half its size, and says what it
// cut.
func cutLastSegment(c *klogproc.Cluster, id int32) (string, error) {
	files, err := filepath.Glob(filepath.Join(replicaDir(c, id, topic), "*.log"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("the segments of node %d in %s: %d files, %v", id, replicaDir(c, id, topic), len(files), err)
	}
	// Segment files are named by their zero-padded base offset.
	last := slices.Max(files)
	fi, err := os.Stat(last)
	if err != nil {
		return "", err
	}
	if err := os.Truncate(last, fi.Size()/2); err != nil {
		return "", fmt.Errorf("cut node %d's segment %s: %w", id, filepath.Base(last), err)
	}
	return fmt.Sprintf("segment %s cut from %d to %d bytes", filepath.Base(last), fi.Size(), fi.Size()/2), nil
}
