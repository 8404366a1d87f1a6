package main

// The fault tests of issue 11 on a local cluster (klog up -n 3), each on a
// fresh cluster and data directory with an RF 3, min.insync.replicas 2
// topic, while the idempotent acks=all producer of scenario.go writes
// numbered records; the ledger checks what it acknowledged at the end:
//   - leader-kill (test 1): SIGKILL the leader of partition 0 (klog node
//     kill) and start it again, then SIGSTOP a follower (klog node stop)
//     and resume it (klog node start);
//   - min-isr (test 3): with 2 of 3 nodes down, a raw acks=all produce is
//     answered NOT_ENOUGH_REPLICAS (and acks=1 is taken), and acks=all
//     succeeds again once a node is back;
//   - rolling-restart (test 5): klog node restart of each node in turn;
//     no produce error, a restarted node is ready with current metadata,
//     and leadership returns to the preferred replicas;
//   - controller-kill (test 6): kill the active controller's node, create
//     a topic within seconds, and all nodes' Metadata is identical once
//     it is back.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/klogproc"
	"github.com/klogdev/klog/scripts/internal/ledger"
)

// clusterScenario is one fault test on a running cluster while r's
// producer writes: it returns what it measured, for the CHAOS line, or an
// error when it could not run or a property it checks does not hold.
type clusterScenario func(ctx context.Context, r *clusterRun) (string, error)

// clusterNodes is the size of every scenario's cluster.
const clusterNodes = 3

// clusterConfigs are the nodes' configs: RF 3 and min ISR 2 (the topics
// also name them), and preferred leaders checked every 2 s instead of 300
// so that a scenario's faults take seconds. The liveness timings are klog
// up -n's own (supervisor.LocalTimings), which the failover scenarios
// measure.
var clusterConfigs = []string{
	"default.replication.factor=3", "min.insync.replicas=2",
	"leader.imbalance.check.interval.seconds=2",
	// The coordinators' internal topics on every node, so that they fail
	// over (coordinator.go).
	"offsets.topic.replication.factor=3", "transaction.state.log.replication.factor=3",
}

// clusterRate is the producer's rate in records a second: enough to have
// thousands in flight at each fault, few enough that the ledger and the
// read back stay small over a scenario's seconds.
const clusterRate = 20000

// clusterRun is one cluster scenario under way.
type clusterRun struct {
	c          *klogproc.Cluster
	led        *ledger.Ledger
	p          *producer
	step       int      // acknowledgements to wait for between faults
	inFlight   []string // records buffered by the producer at each fault
	partitions int32
	// name is the scenario's; clientOpts are the producer's options
	// beyond startProducer's.
	name       string
	clientOpts []kgo.Opt
	// afterRead, when the scenario sets it, checks more once the
	// producer has stopped and its records are read back, and adds to
	// the scenario's figures.
	afterRead func(ctx context.Context, reads []ledger.Read) (string, error)
}

// runCluster runs the cluster scenario name and returns its CHAOS line.
func runCluster(ctx context.Context, name, bin string, sc clusterScenario, records int, partitions int32) (string, error) {
	start := time.Now()
	dir, done, err := workDir(name)
	if err != nil {
		return "", err
	}
	keep := true
	defer func() { done(keep) }()
	c, err := klogproc.StartCluster(ctx, bin, dir, clusterNodes, klogproc.Options{Configs: clusterConfigs})
	if err != nil {
		return "", err
	}
	defer c.Stop()
	if err := createReplicated(ctx, c.Brokers(), topic, partitions); err != nil {
		return "", err
	}
	if err := c.WaitISR(ctx, topic); err != nil {
		return "", err
	}
	r := &clusterRun{c: c, name: name, clientOpts: scenarioClients[name]}
	detail, reads, err := r.drive(ctx, c.Brokers(), records, partitions, sc)
	if err != nil {
		return "", err
	}
	p := r.p
	rep := r.led.Check(reads)
	if r.afterRead != nil {
		more, err := r.afterRead(ctx, reads)
		if err != nil {
			return "", err
		}
		detail += "; " + more
	}
	failed := p.failed.Load()
	verdict := "PASS"
	if !rep.OK() || failed > 0 {
		verdict = "FAIL"
	}
	line := fmt.Sprintf("CHAOS %s %s %s, %s (%s; %s records in flight at the faults, %d records read, %d produce errors%s, %.1fs)",
		name, verdict, rep, p.resume.summary(), detail, strings.Join(r.inFlight, "/"), rep.Read, failed, p.firstError(), time.Since(start).Seconds())
	for _, e := range rep.Examples {
		line += "\n  " + e
	}
	keep = verdict != "PASS"
	return line, nil
}

// drive starts r's producer on seeds, runs sc while it writes (with
// acknowledgements before and after), stops it and reads every partition
// back.
func (r *clusterRun) drive(ctx context.Context, seeds []string, records int, partitions int32, sc clusterScenario) (detail string, reads []ledger.Read, err error) {
	r.led = ledger.New()
	r.p, err = startProducer(ctx, seeds, partitions, cmp.Or(scenarioRates[r.name], clusterRate), r.led, r.clientOpts...)
	if err != nil {
		return "", nil, err
	}
	// Each of the scenario's steps waits for this many more acks, so that
	// records are in flight at every fault.
	r.step, r.partitions = max(records/10, 1), partitions
	err = r.produceMore(ctx)
	if err == nil {
		detail, err = sc(ctx, r)
	}
	if err == nil {
		err = r.produceMore(ctx)
	}
	if err != nil {
		r.p.close()
		return "", nil, err
	}
	if err := r.p.stop(ctx); err != nil {
		return "", nil, err
	}
	reads, err = readBack(ctx, seeds, partitions)
	return detail, reads, err
}

// leader0 waits until partition 0 has a leader on every node and
// returns its state, then notes a fault beginning.
func (r *clusterRun) leader0(ctx context.Context) (klogproc.PartitionState, error) {
	st, err := r.waitPartition(ctx, others(), topic, 0, "led", func(st klogproc.PartitionState) bool { return st.Leader >= 0 })
	if err == nil {
		r.fault()
	}
	return st, err
}

// createReplicated creates topic with RF 3 and min.insync.replicas 2,
// whatever the cluster's defaults.
func createReplicated(ctx context.Context, seeds []string, name string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, clusterNodes, map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")}, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	return nil
}

// produceMore waits until r.step more records are acknowledged.
func (r *clusterRun) produceMore(ctx context.Context) error {
	want := r.led.Acked() + r.step
	err := klogproc.WaitFor(ctx, func() (bool, error) { return r.led.Acked() >= want, nil })
	if err != nil {
		return fmt.Errorf("%d of %d records acknowledged: %w%s", r.led.Acked(), want, err, r.p.firstError())
	}
	return nil
}

// fault notes the records in flight as a fault begins.
func (r *clusterRun) fault() {
	r.inFlight = append(r.inFlight, fmt.Sprint(r.p.cl.BufferedProduceRecords()))
	r.p.resume.fault()
}

// others is every node but the ones given.
func others(but ...int32) []int32 {
	var ids []int32
	for id := range int32(clusterNodes) {
		if !slices.Contains(but, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// waitPartition waits until every node in ids shows partition p of t in
// a state for which ok holds, and all the same one; it returns that state.
func (r *clusterRun) waitPartition(ctx context.Context, ids []int32, t string, p int32, what string, ok func(klogproc.PartitionState) bool) (klogproc.PartitionState, error) {
	var agreed klogproc.PartitionState
	var last string
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		var seen []klogproc.PartitionState
		for _, id := range ids {
			st, err := r.c.Partition(ctx, id, t, p)
			if err != nil {
				last = err.Error()
				return false, nil
			}
			last = fmt.Sprintf("node %d: %+v", id, st)
			if !ok(st) || len(seen) > 0 && !samePartition(seen[0], st) {
				return false, nil
			}
			seen = append(seen, st)
		}
		agreed = seen[0]
		return true, nil
	})
	if err != nil {
		return agreed, fmt.Errorf("wait until nodes %v show %s-%d %s (last %s): %w", ids, t, p, what, last, err)
	}
	return agreed, nil
}

func samePartition(a, b klogproc.PartitionState) bool {
	return a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch && slices.Equal(a.ISR, b.ISR) && slices.Equal(a.Replicas, b.Replicas)
}

// leaderKill is test 1: the leader of partition 0 killed and started
// again, then a follower stopped and resumed.
func leaderKill(ctx context.Context, r *clusterRun) (string, error) {
	before, err := r.leader0(ctx)
	if err != nil {
		return "", err
	}
	old := before.Leader
	t := time.Now()
	if err := r.c.KillNode(ctx, old); err != nil {
		return "", err
	}
	r.p.resume.took()
	after, err := r.waitPartition(ctx, others(old), topic, 0, "led by another node", func(st klogproc.PartitionState) bool {
		return st.Leader >= 0 && st.Leader != old && st.LeaderEpoch > before.LeaderEpoch
	})
	if err != nil {
		return "", err
	}
	failover := time.Since(t)
	if err := r.produceMore(ctx); err != nil {
		return "", fmt.Errorf("with leader %d killed: %w", old, err)
	}
	t = time.Now()
	if err := r.c.StartNode(ctx, old); err != nil {
		return "", err
	}
	if err := r.c.WaitISR(ctx, topic); err != nil {
		return "", err
	}
	rejoin := time.Since(t)
	if err := r.produceMore(ctx); err != nil {
		return "", err
	}

	st, err := r.waitPartition(ctx, others(), topic, 0, "led", func(st klogproc.PartitionState) bool { return st.Leader >= 0 })
	if err != nil {
		return "", err
	}
	follower := st.Replicas[0]
	if follower == st.Leader {
		follower = st.Replicas[1]
	}
	r.fault()
	if err := r.c.StopNode(ctx, follower); err != nil {
		return "", err
	}
	r.p.resume.took()
	// The producer goes on without the stopped follower once it has left
	// the ISR (replica.lag.time.max.ms), two replicas being enough.
	t = time.Now()
	if err := r.produceMore(ctx); err != nil {
		return "", fmt.Errorf("with follower %d stopped: %w", follower, err)
	}
	stalled := time.Since(t)
	if err := r.c.StartNode(ctx, follower); err != nil {
		return "", err
	}
	t = time.Now()
	if err := r.c.WaitISR(ctx, topic); err != nil {
		return "", err
	}
	return fmt.Sprintf("leader %d of partition 0 killed: node %d leads at epoch %d after %.1fs, node %d back in every ISR %.1fs after its start; follower %d stopped: %d more acks in %.1fs, back in every ISR %.1fs after its resume",
		old, after.Leader, after.LeaderEpoch, failover.Seconds(), old, rejoin.Seconds(), follower, r.step, stalled.Seconds(), time.Since(t).Seconds()), nil
}

// probeTopic is the one-partition topic that raw produces go to, so that
// their records stay out of the ledger's partitions.
const probeTopic = "chaos-probe"

// rawProduce sends one record to partition 0 of probeTopic on node id
// with acks, and returns the partition's error code (0 when taken).
func (r *clusterRun) rawProduce(id int32, acks int16) (int16, error) {
	return r.produceRaw(id, probeTopic, 0, acks, "probe")
}

// codeName is an error code's Kafka name, NONE for 0.
func codeName(code int16) string {
	if err := kerr.ErrorForCode(code); err != nil {
		return err.Error()[:strings.IndexByte(err.Error()+":", ':')]
	}
	return "NONE"
}

// notEnoughReplicas is test 3: with 2 of 3 nodes down, acks=all produce is
// refused NOT_ENOUGH_REPLICAS, and taken again once a node is back.
func notEnoughReplicas(ctx context.Context, r *clusterRun) (string, error) {
	if err := createReplicated(ctx, r.c.Brokers(), probeTopic, 1); err != nil {
		return "", err
	}
	if err := r.c.WaitISR(ctx, probeTopic); err != nil {
		return "", err
	}
	st, err := r.waitPartition(ctx, others(), probeTopic, 0, "led", func(st klogproc.PartitionState) bool { return st.Leader >= 0 })
	if err != nil {
		return "", err
	}
	leader := st.Leader
	down := others(leader)
	crashed, stopped := down[0], down[1]
	want := func(acks int16, wantCode int16, when string) error {
		code, err := r.rawProduce(leader, acks)
		if err != nil {
			return err
		}
		if code != wantCode {
			return fmt.Errorf("%s: produce acks=%d to leader %d answered %s, want %s", when, acks, leader, codeName(code), codeName(wantCode))
		}
		return nil
	}

	// One node crashes: the ISR of two still meets min.insync.replicas.
	r.fault()
	if err := r.c.KillNode(ctx, crashed); err != nil {
		return "", err
	}
	r.p.resume.took()
	if _, err := r.waitPartition(ctx, []int32{leader}, probeTopic, 0, "without "+fmt.Sprint(crashed)+" in the ISR", func(st klogproc.PartitionState) bool {
		return st.Leader == leader && len(st.ISR) == 2 && !slices.Contains(st.ISR, crashed)
	}); err != nil {
		return "", err
	}
	if err := want(-1, 0, fmt.Sprintf("node %d down", crashed)); err != nil {
		return "", err
	}
	if err := r.produceMore(ctx); err != nil {
		return "", fmt.Errorf("with node %d down: %w", crashed, err)
	}

	// A second one shuts down: its controlled shutdown, while two voters
	// still make a quorum, leaves the leader alone in the ISR. Crashing it
	// instead would lose the quorum first, and an ISR that cannot shrink
	// makes acks=all time out, as in Kafka.
	r.fault()
	if err := r.c.TerminateNode(ctx, stopped); err != nil {
		return "", err
	}
	if _, err := r.waitPartition(ctx, []int32{leader}, probeTopic, 0, fmt.Sprintf("with ISR [%d]", leader), func(st klogproc.PartitionState) bool {
		return st.Leader == leader && slices.Equal(st.ISR, []int32{leader})
	}); err != nil {
		return "", err
	}
	if err := want(-1, kerr.NotEnoughReplicas.Code, "2 of 3 nodes down"); err != nil {
		return "", err
	}
	// The partition does take writes: it is min.insync.replicas that
	// refuses acks=all.
	if err := want(1, 0, "2 of 3 nodes down"); err != nil {
		return "", err
	}

	t := time.Now()
	if err := r.c.StartNode(ctx, stopped); err != nil {
		return "", err
	}
	var codes []string
	err = klogproc.WaitFor(ctx, func() (bool, error) {
		code, err := r.rawProduce(leader, -1)
		if err != nil {
			return false, err
		}
		if len(codes) == 0 || codes[len(codes)-1] != codeName(code) {
			codes = append(codes, codeName(code))
		}
		switch code {
		case 0:
			return true, nil
		case kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code, kerr.RequestTimedOut.Code:
			return false, nil
		}
		return false, fmt.Errorf("node %d back: produce acks=-1 answered %s", stopped, codeName(code))
	})
	if err != nil {
		return "", fmt.Errorf("acks=all produce once node %d is back (answers %v): %w", stopped, codes, err)
	}
	back := time.Since(t)
	if err := r.produceMore(ctx); err != nil {
		return "", fmt.Errorf("with node %d back: %w", stopped, err)
	}
	if err := r.c.StartNode(ctx, crashed); err != nil {
		return "", err
	}
	for _, tp := range []string{topic, probeTopic} {
		if err := r.c.WaitISR(ctx, tp); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("node %d killed and node %d shut down: acks=-1 to leader %d answered NOT_ENOUGH_REPLICAS, acks=1 NONE; node %d started: acks=-1 answered %s, taken %.1fs after the start",
		crashed, stopped, leader, stopped, strings.Join(codes, " then "), back.Seconds()), nil
}

// rollingRestart is test 5: klog node restart of each node in turn.
func rollingRestart(ctx context.Context, r *clusterRun) (string, error) {
	var took []string
	for _, id := range others() {
		// A node ready after its restart must know at least the leader
		// epochs the cluster had before it: stale metadata is not ready.
		before, err := r.c.Partitions(ctx, others(id)[0], topic)
		if err != nil {
			return "", err
		}
		r.fault()
		t := time.Now()
		if err := r.c.RestartNode(ctx, id); err != nil {
			return "", err
		}
		now, err := r.c.Partitions(ctx, id, topic)
		if err != nil {
			return "", fmt.Errorf("node %d just after its restart: %w", id, err)
		}
		for p, st := range before {
			if now[p].LeaderEpoch < st.LeaderEpoch {
				return "", fmt.Errorf("node %d ready after its restart with stale metadata: partition %d leader %d at epoch %d, was leader %d at epoch %d before", id, p, now[p].Leader, now[p].LeaderEpoch, st.Leader, st.LeaderEpoch)
			}
		}
		restarted := time.Since(t)
		if err := r.c.WaitISR(ctx, topic); err != nil {
			return "", err
		}
		took = append(took, fmt.Sprintf("node %d %.1fs (ISR full %.1fs)", id, restarted.Seconds(), time.Since(t).Seconds()))
		if err := r.produceMore(ctx); err != nil {
			return "", fmt.Errorf("after node %d restarted: %w", id, err)
		}
	}
	// Leadership goes back to the preferred replicas (the first of each
	// partition's replicas): auto.leader.rebalance.enable, checked every
	// leader.imbalance.check.interval.seconds.
	t := time.Now()
	for p := range r.partitions {
		if _, err := r.waitPartition(ctx, others(), topic, p, "led by its preferred replica", func(st klogproc.PartitionState) bool {
			return len(st.Replicas) > 0 && st.Leader == st.Replicas[0] && len(st.ISR) == len(st.Replicas)
		}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("restarted %s; every partition led by its preferred replica %.1fs later", strings.Join(took, ", "), time.Since(t).Seconds()), nil
}

// createBound is how soon after the active controller's node is killed a
// topic must be created: the "within seconds", loosely, for loaded
// machines (it takes about 1 s).
const createBound = 10 * time.Second

// controllerKill is test 6: the active controller's node killed.
func controllerKill(ctx context.Context, r *clusterRun) (string, error) {
	ctl := int32(-1)
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		id, err := r.c.Controller(ctx, 0)
		ctl = id
		return err == nil && id >= 0, nil
	})
	if err != nil {
		return "", fmt.Errorf("find the active controller: %w", err)
	}
	r.fault()
	t := time.Now()
	if err := r.c.KillNode(ctx, ctl); err != nil {
		return "", err
	}
	r.p.resume.took()
	var seeds []string
	for _, id := range others(ctl) {
		seeds = append(seeds, r.c.Addr(id))
	}
	// RF 2: the killed node may be fenced already, and RF 3 would then
	// have too few brokers.
	const newTopic = "chaos-after-controller"
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	var tries []string
	err = klogproc.WaitFor(ctx, func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := kadm.NewClient(cl).CreateTopic(cctx, 1, 2, nil, newTopic)
		if err == nil {
			err = resp.Err
		}
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) && len(tries) > 0 {
			return true, nil
		}
		tries = append(tries, err.Error())
		var ke *kerr.Error
		if errors.As(err, &ke) && !ke.Retriable && !errors.Is(err, kerr.NotController) {
			return false, fmt.Errorf("create %s with controller %d killed: %w", newTopic, ctl, err)
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("create %s with controller %d killed (%d tries, last %v): %w", newTopic, ctl, len(tries), tries[max(len(tries)-1, 0):], err)
	}
	created := time.Since(t)
	if created > createBound {
		return "", fmt.Errorf("topic %s created %.1fs after controller %d was killed, over %v", newTopic, created.Seconds(), ctl, createBound)
	}
	// More history while the node is down, so that its replay of what it
	// missed takes more than one of Raft's appends.
	if err := createHistory(ctx, seeds); err != nil {
		return "", err
	}
	newCtl, err := r.c.Controller(ctx, others(ctl)[0])
	if err != nil {
		return "", err
	}
	if err := r.produceMore(ctx); err != nil {
		return "", fmt.Errorf("with controller %d killed: %w", ctl, err)
	}
	if err := r.c.StartNode(ctx, ctl); err != nil {
		return "", err
	}
	// Ready means current: the node knows the topics created while it was
	// down as soon as it is ready, not once its replay gets there.
	missed := []string{newTopic, historyTopic(historyTopics - 1)}
	resp, err := r.c.Metadata(ctx, ctl, missed...)
	if err != nil {
		return "", err
	}
	for _, t := range resp.Topics {
		if t.ErrorCode != 0 {
			return "", fmt.Errorf("node %d ready after its start with stale metadata: topic %s created while it was down answers %s", ctl, deref(t.Topic), codeName(t.ErrorCode))
		}
	}
	t = time.Now()
	var views []string
	err = klogproc.WaitFor(ctx, func() (bool, error) {
		views = views[:0]
		for _, id := range others() {
			resp, err := r.c.Metadata(ctx, id)
			if err != nil {
				return false, nil
			}
			views = append(views, metadataView(resp))
		}
		for _, v := range views[1:] {
			if v != views[0] {
				return false, nil
			}
		}
		return strings.Count(views[0], "broker ") == clusterNodes && strings.Contains(views[0], "topic "+newTopic+" "), nil
	})
	if err != nil {
		return "", fmt.Errorf("wait until every node's Metadata is the same (last views:\n%s): %w", strings.Join(views, "\n--\n"), err)
	}
	return fmt.Sprintf("controller %d killed: topic %s created after %.1fs (%d retries), node %d the controller; Metadata the same on all %d nodes %.1fs after node %d's start",
		ctl, newTopic, created.Seconds(), len(tries), newCtl, clusterNodes, time.Since(t).Seconds(), ctl), nil
}

// historyTopics is how many topics createHistory creates.
const historyTopics = 200

func historyTopic(i int) string { return fmt.Sprintf("chaos-history-%d", i) }

// createHistory creates historyTopics one-partition topics of one replica
// in one request.
func createHistory(ctx context.Context, seeds []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err
	}
	defer cl.Close()
	names := make([]string, historyTopics)
	for i := range names {
		names[i] = historyTopic(i)
	}
	resps, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, names...)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		return fmt.Errorf("create %d topics: %w", historyTopics, err)
	}
	return nil
}

// metadataView is a Metadata answer as text, in a fixed order: cluster
// and controller, brokers, then each topic and partition with its leader,
// epoch, replicas, ISR and offline replicas.
func metadataView(resp *kmsg.MetadataResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s controller %d\n", deref(resp.ClusterID), resp.ControllerID)
	brokers := slices.Clone(resp.Brokers)
	sort.Slice(brokers, func(i, j int) bool { return brokers[i].NodeID < brokers[j].NodeID })
	for _, br := range brokers {
		fmt.Fprintf(&b, "broker %d %s:%d rack %s\n", br.NodeID, br.Host, br.Port, deref(br.Rack))
	}
	topics := slices.Clone(resp.Topics)
	sort.Slice(topics, func(i, j int) bool { return deref(topics[i].Topic) < deref(topics[j].Topic) })
	for _, t := range topics {
		fmt.Fprintf(&b, "topic %s %x internal %v error %d\n", deref(t.Topic), t.TopicID, t.IsInternal, t.ErrorCode)
		parts := slices.Clone(t.Partitions)
		sort.Slice(parts, func(i, j int) bool { return parts[i].Partition < parts[j].Partition })
		for _, p := range parts {
			fmt.Fprintf(&b, "  %d leader %d epoch %d replicas %v isr %v offline %v error %d\n",
				p.Partition, p.Leader, p.LeaderEpoch, p.Replicas, p.ISR, p.OfflineReplicas, p.ErrorCode)
		}
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
