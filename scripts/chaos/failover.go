package main

// Failover timing on a local cluster (klog up -n 3, its own liveness
// timings): the leader of partition 0 faulted -failovers times, each time
// brought back and the ISR full again before the next, while the acks=all
// producer writes; the CHAOS line's "resumed" figures are what these
// scenarios are for:
//   - failover-kill: SIGKILL (klog node kill), then start it again;
//   - failover-stop: SIGSTOP (klog node stop), then resume it;
//   - failover-isolate: klog node isolate, then heal it.

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/scripts/internal/klogproc"
)

// failoverClient is the failover scenarios' producer, tuned to follow
// a new leader as soon as a laptop's cluster elects one. A hung leader
// (SIGSTOP) never answers: kgo gives up on a produce after its timeout
// plus the overhead (10 s and 10 s by default, Kafka's Java producer
// 30 s), and only then moves the partition to the leader the others
// elected: 1.5 s in all here, klog up -n's session (kgo retries a produce
// that timed out, the broker dropping it as a duplicate if it was
// written). Metadata every half second, so that finding the new leader
// stays below the session too. Too tight for the heavier scenarios on a
// loaded machine, where acknowledgements can take longer.
var failoverClient = []kgo.Opt{
	kgo.MetadataMinAge(100 * time.Millisecond), kgo.MetadataMaxAge(500 * time.Millisecond),
	kgo.ProduceRequestTimeout(time.Second), kgo.RequestTimeoutOverhead(500 * time.Millisecond),
}

// scenarioClients are the cluster scenarios whose producer takes more
// options.
var scenarioClients = map[string][]kgo.Opt{
	"failover-kill": failoverClient, "failover-stop": failoverClient, "failover-isolate": failoverClient,
}

// failovers is how many times each failover scenario faults a leader
// (the -failovers flag).
var failovers = 3

// failoverFault faults node id of r's cluster, and restore brings it back.
type failoverFault struct {
	fault, restore func(c *klogproc.Cluster, ctx context.Context, id int32) error
}

var failoverFaults = map[string]failoverFault{
	"failover-kill":    {(*klogproc.Cluster).KillNode, (*klogproc.Cluster).StartNode},
	"failover-stop":    {(*klogproc.Cluster).StopNode, (*klogproc.Cluster).StartNode},
	"failover-isolate": {(*klogproc.Cluster).IsolateNode, (*klogproc.Cluster).HealNode},
}

// failoverScenario is the cluster scenario of fault f.
func failoverScenario(f failoverFault) clusterScenario {
	return func(ctx context.Context, r *clusterRun) (string, error) {
		var elected []time.Duration
		for i := range failovers {
			before, err := r.leader0(ctx)
			if err != nil {
				return "", err
			}
			old := before.Leader
			t := time.Now()
			if err := f.fault(r.c, ctx, old); err != nil {
				return "", err
			}
			r.p.resume.took()
			if _, err := r.waitPartition(ctx, others(old), topic, 0, "led by another node", func(st klogproc.PartitionState) bool {
				return st.Leader >= 0 && st.Leader != old && st.LeaderEpoch > before.LeaderEpoch
			}); err != nil {
				return "", fmt.Errorf("fault %d of node %d: %w", i+1, old, err)
			}
			elected = append(elected, time.Since(t))
			if err := r.waitResumed(ctx); err != nil {
				return "", fmt.Errorf("fault %d of node %d: %w", i+1, old, err)
			}
			if err := f.restore(r.c, ctx, old); err != nil {
				return "", err
			}
			if err := r.c.WaitISR(ctx, topic); err != nil {
				return "", err
			}
			if err := r.produceMore(ctx); err != nil {
				return "", err
			}
		}
		p50, top := percentiles(elected)
		return fmt.Sprintf("%d faults of partition 0's leader: a new leader in every other node's metadata after p50 %.2fs max %.2fs", failovers, p50.Seconds(), top.Seconds()), nil
	}
}

// waitResumed waits until every partition has been acknowledged since the
// last fault.
func (r *clusterRun) waitResumed(ctx context.Context) error {
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		r.p.resume.mu.Lock()
		defer r.p.resume.mu.Unlock()
		for _, t := range r.p.resume.faults[len(r.p.resume.faults)-1].first {
			if t.IsZero() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the producer has not resumed on every partition: %w%s", err, r.p.firstError())
	}
	return nil
}
