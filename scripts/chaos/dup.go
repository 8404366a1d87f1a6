package main

// Duplicates after leader kills (issue 26, point 1): with segments of a
// few KiB, a producer's five batches in flight straddle segment rolls,
// and producer snapshots, taken at each roll, keep each producer's last
// batch only. A leader that loaded its producer state from one (after a
// restart or a truncation) must still answer the retry of any of the
// five as a duplicate; answered OUT_OF_ORDER_SEQUENCE_NUMBER, franz-go
// resets its producer id and writes the batch again.
//   - dup-kill (cluster): the topic's internal.segment.bytes set to 4 KiB, then
//     dupKills times: SIGKILL the leader of partition 0 (klog node kill),
//     start it again about a second later, and wait for the full ISR;
//   - dup-kill-durable (one node, klog up --durable): the same topic
//     setting, and dupKills SIGKILLs each followed by a restart.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/scripts/internal/klogproc"
)

// segmentBytesConfig is the topic config that gives the topic small
// segments, and dupSegmentBytes its value: segment.bytes is at least 1 MiB,
// as in Kafka 4, and internal.segment.bytes is Kafka's own setting for
// smaller ones.
const (
	segmentBytesConfig = "internal.segment.bytes"
	dupSegmentBytes    = "4096"
)

// dupKills is how many times each scenario kills a node; dupDown is how
// long dup-kill keeps the leader down: shorter than its session
// (broker.session.timeout.ms), as in the report; the supervisor's notice
// of its exit fences it at once all the same.
const (
	dupKills = 20
	dupDown  = time.Second
)

// scenarioRates are the cluster scenarios whose producer writes at
// another rate than clusterRate. dup-kill's followers fetch 4 KiB
// segments, a few batches a fetch: at clusterRate, while the killed
// leader is down (fenced at once, its partitions led by another node
// without a pause), the restarted node falls behind faster than it
// fetches on a loaded machine and never rejoins the ISR.
var scenarioRates = map[string]int{"dup-kill": clusterRate / 4}

// dupTopicConfigs are the topic configs of both scenarios.
var dupTopicConfigs = map[string]*string{segmentBytesConfig: kadm.StringPtr(dupSegmentBytes)}

// dupKill is the cluster scenario.
func dupKill(ctx context.Context, r *clusterRun) (string, error) {
	cl, err := r.c.Client()
	if err != nil {
		return "", err
	}
	resps, err := kadm.NewClient(cl).AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: segmentBytesConfig, Value: dupTopicConfigs[segmentBytesConfig]}}, topic)
	cl.Close()
	if err == nil {
		for _, resp := range resps {
			if resp.Err != nil {
				err = fmt.Errorf("%w (%s)", resp.Err, resp.ErrMessage)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("set %s=%s on %s: %w", segmentBytesConfig, dupSegmentBytes, topic, err)
	}
	if err := r.produceMore(ctx); err != nil {
		return "", err
	}
	killed := make(map[int32]int)
	start := time.Now()
	for i := range dupKills {
		st, err := r.waitPartition(ctx, others(), topic, 0, "led", func(st klogproc.PartitionState) bool { return st.Leader >= 0 })
		if err != nil {
			return "", fmt.Errorf("kill %d: %w", i+1, err)
		}
		r.fault()
		if err := r.c.KillNode(ctx, st.Leader); err != nil {
			return "", err
		}
		r.p.resume.took()
		killed[st.Leader]++
		// The time down is the fault itself.
		t := time.NewTimer(dupDown)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("kill %d: %w", i+1, ctx.Err())
		case <-t.C:
		}
		if err := r.c.StartNode(ctx, st.Leader); err != nil {
			return "", err
		}
		if err := r.c.WaitISR(ctx, topic); err != nil {
			return "", fmt.Errorf("kill %d: %w", i+1, err)
		}
		if err := r.produceMore(ctx); err != nil {
			return "", fmt.Errorf("after kill %d of node %d: %w", i+1, st.Leader, err)
		}
	}
	var nodes []string
	for _, id := range others() {
		nodes = append(nodes, fmt.Sprintf("node %d %d times", id, killed[id]))
	}
	segs, err := filepath.Glob(filepath.Join(replicaDir(r.c, 0, topic), "*.log"))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s=%s; leader of partition 0 killed %d times (%s), each down %v, in %.1fs; %d segments in node 0's replica of partition 0",
		segmentBytesConfig, dupSegmentBytes, dupKills, strings.Join(nodes, ", "), dupDown, time.Since(start).Seconds(), len(segs)), nil
}

// dupDurable sets up the one-node scenario dup-kill-durable: klog up
// --durable (produces acknowledged once fsynced) and the topic's small
// segments; the kill fault restarts the node at once.
func dupDurable(s *scenario) {
	s.opts.Configs = append(s.opts.Configs, "klog.produce.durable=true")
	s.topicConfigs = dupTopicConfigs
	s.fault = faults["kill"]
}

// oneNodeSetups are one-node scenarios besides kill, pause and term: each
// changes the scenario it is given (its node's options, its topic's
// configs, its fault), run faultsPerScenario times.
var oneNodeSetups = map[string]func(*scenario){
	"dup-kill-durable": dupDurable,
}
