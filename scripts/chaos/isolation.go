package main

// Fault tests 2 and 4 of issue 11 on a local cluster, run by runCluster
// (cluster.go) while its acks=all producer writes:
//   - isolated-leader (test 2): klog node isolate of the leader of
//     partition 0, which cuts it off from the other nodes both ways
//     (quorum, replication, coordinator requests) but not from its
//     clients; an acks=all produce sent to it is not acknowledged, the
//     other two elect a new leader the producer moves to, and once healed
//     the old leader truncates what only it took and rejoins the ISR;
//   - truncation (test 4, KIP-101): a leader takes a tail its followers
//     never get, dies, and a follower with its ISR place takes over and
//     writes other records at those offsets in a new epoch; the old
//     leader comes back, truncates its tail and fetches the new leader's
//     log, and the three replicas end byte-identical.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/klogproc"
	"github.com/klogdev/klog/scripts/internal/kwire"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/supervisor"
)

// isolatedLeader is test 2. The probe sent to the isolated leader goes to
// the ledger's partition 0: it must be truncated with the rest of what
// only that node took, and the ledger would report it (as a record out
// of order) if it were read back.
func isolatedLeader(ctx context.Context, r *clusterRun) (string, error) {
	before, err := r.waitPartition(ctx, others(), topic, 0, "led", func(st klogproc.PartitionState) bool { return st.Leader >= 0 })
	if err != nil {
		return "", err
	}
	old := before.Leader
	acked := r.led.AckedIn(0)
	r.fault()
	start := time.Now()
	if err := r.c.IsolateNode(ctx, old); err != nil {
		return "", err
	}
	r.p.resume.took()
	// At once, while its followers still follow it: the isolated node
	// thinks it leads and takes its clients' produces, but they cannot
	// fetch what it takes (with the quorum cut alone they would, and
	// this produce would be acknowledged).
	type answer struct {
		code int16
		err  error
	}
	probed := make(chan answer, 1)
	go func() {
		code, err := r.produceRaw(old, topic, 0, -1, "isolated")
		probed <- answer{code, err}
	}()
	next, err := r.waitPartition(ctx, others(old), topic, 0, "led by another node than "+fmt.Sprint(old), func(st klogproc.PartitionState) bool {
		return st.Leader >= 0 && st.Leader != old
	})
	if err != nil {
		<-probed
		return "", err
	}
	elected := time.Since(start)
	if probe := <-probed; probe.err != nil {
		return "", probe.err
	} else if probe.code != kerr.RequestTimedOut.Code {
		return "", fmt.Errorf("an acks=all produce to the isolated leader %d answered %s, want REQUEST_TIMED_OUT: it cannot replicate it", old, codeName(probe.code))
	}
	// The producer has moved partition 0 to the new leader.
	want := acked + r.step/int(r.partitions)
	if err := klogproc.WaitFor(ctx, func() (bool, error) { return r.led.AckedIn(0) >= want, nil }); err != nil {
		return "", fmt.Errorf("partition 0 acknowledged %d records, want %d, while node %d is isolated: %w%s", r.led.AckedIn(0), want, old, err, r.p.firstError())
	}
	isolatedAcks := r.led.AckedIn(0) - acked
	if err := r.c.HealNode(ctx, old); err != nil {
		return "", err
	}
	healed := time.Now()
	if err := r.c.WaitISR(ctx, topic); err != nil {
		return "", err
	}
	return fmt.Sprintf("leader %d of partition 0 isolated; node %d led it at epoch %d after %.1fs and acknowledged %d of its records meanwhile; "+
		"an acks=all produce to the isolated node: REQUEST_TIMED_OUT; healed, in every ISR again after %.1fs",
		old, next.Leader, next.LeaderEpoch, elected.Seconds(), isolatedAcks, time.Since(healed).Seconds()), nil
}

// truncationTopic is the one-partition topic whose replicas test 4
// compares: written only by the test's own produces, so that it is quiet
// when compared. flush.messages=1 writes each segment's indexes with every
// append (klog keeps them in memory until a flush), so the files of the
// running nodes can be compared; index.interval.bytes=1 indexes every
// batch, so the truncation has index entries to remove too.
const truncationTopic = "chaos-kip101"

// truncation is test 4. Both followers of the truncation topic's leader
// are stopped (klog node stop), acks=1 batches land on the leader alone
// (the producer's acks=all batches wait there too), then the leader is
// killed and the followers resumed: one of them, in the ISR, takes over
// and acks=all batches of other sizes land at the same offsets in its
// epoch. The old leader is started again; it must truncate its tail
// (KIP-101) and end with the new leader's bytes.
func truncation(ctx context.Context, r *clusterRun) (string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.c.Brokers()...))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, clusterNodes, map[string]*string{
		"min.insync.replicas": kmsg.StringPtr("2"), "flush.messages": kmsg.StringPtr("1"), "index.interval.bytes": kmsg.StringPtr("1"),
	}, truncationTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return "", fmt.Errorf("create topic %s: %w", truncationTopic, err)
	}
	if err := r.c.WaitISR(ctx, truncationTopic); err != nil {
		return "", err
	}
	st, err := r.waitPartition(ctx, others(), truncationTopic, 0, "led", func(st klogproc.PartitionState) bool { return st.Leader >= 0 })
	if err != nil {
		return "", err
	}
	old := st.Leader
	followers := others(old)
	// produce writes batches to node id, each retried for up to 10 s
	// while the answer is retriable: Metadata can name a leader a moment
	// before the node's replica takes the role (NOT_LEADER_OR_FOLLOWER).
	produce := func(id int32, acks int16, batches int, value string) error {
		for i := range batches {
			var code int16
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := klogproc.WaitFor(wctx, func() (bool, error) {
				var err error
				code, err = r.produceRaw(id, truncationTopic, 0, acks, fmt.Sprintf("%s %d", value, i))
				return err != nil || code == 0 || !kerr.IsRetriable(kerr.ErrorForCode(code)), err
			})
			cancel()
			if err == nil && code != 0 {
				err = errors.New(codeName(code))
			}
			if err != nil {
				return fmt.Errorf("an acks=%d produce to node %d: %w (last answer %s)", acks, id, err, codeName(code))
			}
		}
		return nil
	}
	if err := produce(old, -1, 3, "replicated"); err != nil {
		return "", err
	}

	r.fault()
	for _, f := range followers {
		if err := r.c.StopNode(ctx, f); err != nil {
			return "", err
		}
	}
	if err := produce(old, 1, 5, "only on the old leader"); err != nil {
		return "", err
	}
	oldBytes, err := logBytes(r.c, old, truncationTopic)
	if err != nil {
		return "", err
	}
	followerBytes, err := logBytes(r.c, followers[0], truncationTopic)
	if err != nil {
		return "", err
	}
	if oldBytes <= followerBytes {
		return "", fmt.Errorf("the leader's log (%d bytes) is no longer than its stopped follower's (%d): no unreplicated tail", oldBytes, followerBytes)
	}
	if err := r.c.KillNode(ctx, old); err != nil {
		return "", err
	}
	for _, f := range followers {
		if err := r.c.StartNode(ctx, f); err != nil {
			return "", err
		}
	}
	next, err := r.waitPartition(ctx, followers, truncationTopic, 0, "led by a follower", func(st klogproc.PartitionState) bool {
		return st.Leader >= 0 && st.Leader != old
	})
	if err != nil {
		return "", err
	}
	// Two batches with longer values: the new leader's log differs from
	// the old one's tail at the same offsets, in bytes and in epoch.
	if err := produce(next.Leader, -1, 2, "written by the new leader, at the offsets of the old leader's tail"); err != nil {
		return "", err
	}
	if err := r.produceMore(ctx); err != nil {
		return "", err
	}
	if err := r.c.StartNode(ctx, old); err != nil {
		return "", err
	}
	if err := r.c.WaitISR(ctx, truncationTopic); err != nil {
		return "", err
	}
	compared, err := sameReplicas(ctx, r.c, truncationTopic)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("leader %d of %s-0 took %d bytes its stopped followers did not, was killed; node %d led at epoch %d and wrote other records there; "+
		"node %d restarted, truncated and rejoined the ISR; byte-identical on nodes 0, 1, 2: %s",
		old, truncationTopic, oldBytes-followerBytes, next.Leader, next.LeaderEpoch, old, compared), nil
}

// produceRaw sends one batch of values to partition p of topic t straight
// to node id with acks (as sent: a client would retry or reroute it) and
// returns the partition's error code (0 when taken). The request waits
// 5 s at most for the ISR (kwire.ProduceRequest).
func (r *clusterRun) produceRaw(id int32, t string, p int32, acks int16, values ...string) (int16, error) {
	bb := record.NewBuilder(time.Now().UnixMilli())
	for _, v := range values {
		bb.Append(record.Record{Value: []byte(v)})
	}
	b, err := bb.Build()
	if err != nil {
		return 0, err
	}
	conn, err := kwire.Dial(r.c.Addr(id), "chaos", nil)
	if err != nil {
		return 0, fmt.Errorf("produce acks=%d to node %d: %w", acks, id, err)
	}
	defer conn.Close()
	got, _, err := conn.Do(kwire.ProduceRequest(t, p, acks, b), 10*time.Second)
	if err != nil {
		return 0, fmt.Errorf("produce acks=%d to node %d: %w", acks, id, err)
	}
	resp := got.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("produce acks=%d to node %d: %d topics in the answer", acks, id, len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0].ErrorCode, nil
}

// replicaDir is node id's directory of partition 0 of topic t.
func replicaDir(c *klogproc.Cluster, id int32, t string) string {
	return filepath.Join(supervisor.NodeDir(c.DataDir(), id), t+"-0")
}

// logBytes is the size of node id's replica of partition 0 of t: the
// bytes of its segments' .log files.
func logBytes(c *klogproc.Cluster, id int32, t string) (int64, error) {
	files, err := filepath.Glob(filepath.Join(replicaDir(c, id, t), "*.log"))
	if err != nil || len(files) == 0 {
		return 0, fmt.Errorf("the segments of node %d in %s: %d files, %v", id, replicaDir(c, id, t), len(files), err)
	}
	var n int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return 0, err
		}
		n += fi.Size()
	}
	return n, nil
}

// errReplicasDiffer means the replicas of a partition did not end the same.
var errReplicasDiffer = errors.New("replicas differ")

// sameReplicas waits until the three replicas of partition 0 of t hold
// the same files with the same bytes, producer snapshots aside (each
// replica writes those where its log ended when it stopped), and returns
// the files compared. While a follower is still fetching they differ;
// past the bound the first difference is the error.
func sameReplicas(ctx context.Context, c *klogproc.Cluster, t string) (string, error) {
	read := func(id int32) (map[string][]byte, error) {
		dir := replicaDir(c, id, t)
		files, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		out := map[string][]byte{}
		for _, f := range files {
			if filepath.Ext(f.Name()) == ".snapshot" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, f.Name()))
			if err != nil {
				return nil, err
			}
			out[f.Name()] = b
		}
		return out, nil
	}
	var names []string
	var sizes []string
	var diff error
	compare := func() (bool, error) {
		want, err := read(0)
		if err != nil {
			return false, err
		}
		names = slices.Sorted(maps.Keys(want))
		sizes = sizes[:0]
		for _, name := range names {
			sizes = append(sizes, fmt.Sprintf("%s %d bytes", name, len(want[name])))
		}
		for id := int32(1); id < clusterNodes; id++ {
			got, err := read(id)
			if err != nil {
				return false, err
			}
			if gotNames := slices.Sorted(maps.Keys(got)); !slices.Equal(gotNames, names) {
				diff = fmt.Errorf("%w: node %d has files %v, node 0 %v", errReplicasDiffer, id, gotNames, names)
				return false, nil
			}
			for _, name := range names {
				if !bytes.Equal(got[name], want[name]) {
					diff = fmt.Errorf("%w: %s of node %d (%d bytes) differs from node 0's (%d bytes)", errReplicasDiffer, name, id, len(got[name]), len(want[name]))
					return false, nil
				}
			}
		}
		return true, nil
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := klogproc.WaitFor(wctx, compare); err != nil {
		if diff != nil {
			return "", fmt.Errorf("%s-0 after 30 s: %w", t, diff)
		}
		return "", err
	}
	return strings.Join(sizes, ", "), nil
}
