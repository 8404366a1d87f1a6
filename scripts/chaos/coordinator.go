package main

// coord-failover (test 7 of issue 11): the group and transaction
// coordinators fail over with their replicated internal topics. Besides
// the ledger's producer, a consumer group reads the ledger's topic
// (auto-committing every 500 ms) and an exactly-once copier (consume,
// produce to copyTopic and commit the consumed offsets in one
// transaction, read_committed) copies it, partition for partition. The
// group's coordinator, the copier's group coordinator and its transaction
// coordinator are one node, which is killed (klog node kill) mid-run and
// started again. Once everything is read back:
//   - the group consumed every record of the topic: at least once, so
//     duplicates are allowed (re-deliveries from the last commit after a
//     rebalance) and counted;
//   - read_committed, copyTopic holds every record of the topic exactly
//     once, in order, and no transaction is left open in it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/scripts/internal/klogproc"
	"github.com/klogdev/klog/scripts/internal/ledger"
)

// copyTopic is the copier's output topic.
const copyTopic = "chaos-copy"

// coordFailover is test 7: the coordinators' node killed and
// started again while a group consumes and a copier copies.
func coordFailover(ctx context.Context, r *clusterRun) (string, error) {
	if err := createReplicated(ctx, r.c.Brokers(), copyTopic, r.partitions); err != nil {
		return "", err
	}
	adm, err := r.c.Client()
	if err != nil {
		return "", err
	}
	defer adm.Close()
	keys, err := coordinatedTogether(ctx, kadm.NewClient(adm))
	if err != nil {
		return "", err
	}
	for _, t := range []string{copyTopic, "__consumer_offsets", "__transaction_state"} {
		if err := r.c.WaitISR(ctx, t); err != nil {
			return "", err
		}
	}
	consumer, err := startGroupReader(ctx, r.c.Brokers(), keys.group)
	if err != nil {
		return "", err
	}
	cp := startCopier(ctx, r.c.Brokers(), keys.txnID, keys.copierGroup)
	stop := func() {
		consumer.close()
		cp.close()
	}
	// Both at work before the fault: the group has consumed and the
	// copier has committed a transaction.
	if err := r.produceMore(ctx); err != nil {
		stop()
		return "", err
	}
	if err := klogproc.WaitFor(ctx, func() (bool, error) { return consumer.count() > 0 && cp.commitCount() > 0, nil }); err != nil {
		stop()
		return "", fmt.Errorf("group and copier at work before the fault (consumed %d, %d commits%s): %w", consumer.count(), cp.commitCount(), cp.lastError(), err)
	}

	r.fault()
	commitsBefore := cp.commitCount()
	t := time.Now()
	if err := r.c.KillNode(ctx, keys.node); err != nil {
		stop()
		return "", err
	}
	r.p.resume.took()
	moved, err := coordinatorsMoved(ctx, r.c, keys)
	if err != nil {
		stop()
		return "", err
	}
	failover := time.Since(t)
	err = klogproc.WaitFor(ctx, func() (bool, error) { return cp.commitCount() > commitsBefore, nil })
	if err != nil {
		stop()
		return "", fmt.Errorf("a copier commit after node %d's kill (%d restarts%s): %w", keys.node, cp.restartCount(), cp.lastError(), err)
	}
	copying := time.Since(t)
	if err := r.produceMore(ctx); err != nil {
		stop()
		return "", fmt.Errorf("with node %d killed: %w", keys.node, err)
	}
	if err := r.c.StartNode(ctx, keys.node); err != nil {
		stop()
		return "", err
	}
	for _, t := range []string{topic, copyTopic, "__consumer_offsets", "__transaction_state"} {
		if err := r.c.WaitISR(ctx, t); err != nil {
			stop()
			return "", err
		}
	}
	r.afterRead = func(ctx context.Context, reads []ledger.Read) (string, error) {
		defer stop()
		return checkConsumers(ctx, r, consumer, cp, reads)
	}
	return fmt.Sprintf("group %s, copier group %s and transactional id %s coordinated by node %d, killed: coordinators on %s %.1fs later, the copier committing again after %.1fs",
		keys.group, keys.copierGroup, keys.txnID, keys.node, moved, failover.Seconds(), copying.Seconds()), nil
}

// coordinatorKeys are the group, the copier's group and its transactional
// id, all three coordinated by node.
type coordinatorKeys struct {
	group, copierGroup, txnID string
	node                      int32
}

// coordinatedTogether picks the copier's transactional id, then groups
// coordinated by the same node (FindCoordinator creates the internal
// topics on first use).
func coordinatedTogether(ctx context.Context, adm *kadm.Client) (coordinatorKeys, error) {
	keys := coordinatorKeys{txnID: "chaos-copier", node: -1}
	var last error
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		co := adm.FindTxnCoordinators(ctx, keys.txnID)[keys.txnID]
		if last = co.Err; last != nil {
			return false, nil
		}
		keys.node = co.NodeID
		keys.group, keys.copierGroup = "", ""
		for i := range 64 {
			for _, k := range []struct {
				name   string
				picked *string
			}{{fmt.Sprintf("chaos-group-%d", i), &keys.group}, {fmt.Sprintf("chaos-copier-group-%d", i), &keys.copierGroup}} {
				if *k.picked != "" {
					continue
				}
				co := adm.FindGroupCoordinators(ctx, k.name)[k.name]
				if last = co.Err; last != nil {
					return false, nil
				}
				if co.NodeID == keys.node {
					*k.picked = k.name
				}
			}
			if keys.group != "" && keys.copierGroup != "" {
				return true, nil
			}
		}
		return false, fmt.Errorf("no chaos-group-N and chaos-copier-group-N (N < 64) both coordinated by node %d", keys.node)
	})
	if err != nil {
		return keys, fmt.Errorf("find coordinators (last error %v): %w", last, err)
	}
	return keys, nil
}

// coordinatorsMoved waits until the nodes other than keys.node name
// another node as the coordinator of each key, and names them.
func coordinatorsMoved(ctx context.Context, c *klogproc.Cluster, keys coordinatorKeys) (string, error) {
	var seeds []string
	for _, id := range others(keys.node) {
		seeds = append(seeds, c.Addr(id))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var now string
	err = klogproc.WaitFor(ctx, func() (bool, error) {
		groups := adm.FindGroupCoordinators(ctx, keys.group, keys.copierGroup)
		txn := adm.FindTxnCoordinators(ctx, keys.txnID)[keys.txnID]
		g, cg := groups[keys.group], groups[keys.copierGroup]
		now = fmt.Sprintf("nodes %d, %d and %d", g.NodeID, cg.NodeID, txn.NodeID)
		for _, co := range []kadm.FindCoordinatorResponse{g, cg, txn} {
			if co.Err != nil || co.NodeID == keys.node {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for coordinators other than node %d (last %s): %w", keys.node, now, err)
	}
	return now, nil
}

// groupReader is a consumer of the ledger's topic in a group, recording
// every record it polls.
type groupReader struct {
	cl   *kgo.Client
	mu   sync.Mutex
	read []ledger.Read
	quit chan struct{}
	done chan struct{}
}

func startGroupReader(ctx context.Context, seeds []string, group string) (*groupReader, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(500*time.Millisecond),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(500*time.Millisecond))
	if err != nil {
		return nil, err
	}
	g := &groupReader{cl: cl, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		for {
			select {
			case <-g.quit:
				return
			case <-ctx.Done():
				return
			default:
			}
			pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			fs := cl.PollFetches(pctx)
			cancel()
			g.mu.Lock()
			fs.EachRecord(func(rec *kgo.Record) {
				seq, _ := strconv.ParseInt(string(rec.Value), 10, 64)
				g.read = append(g.read, ledger.Read{Partition: rec.Partition, Seq: seq, Offset: rec.Offset})
			})
			g.mu.Unlock()
		}
	}()
	return g, nil
}

func (g *groupReader) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.read)
}

// reads is what the group consumed so far, in order.
func (g *groupReader) reads() []ledger.Read {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.read)
}

func (g *groupReader) close() {
	select {
	case <-g.quit:
	default:
		close(g.quit)
	}
	<-g.done
	g.cl.Close()
}

// copier is the exactly-once copier: a group transact session that copies
// each record of the ledger's topic to the same partition of copyTopic. A
// session whose Begin or End fails is closed and a new one, with the same
// transactional id, carries on from the committed offsets, as kgo's
// GroupTransactSession documents that no error of End is retriable.
type copier struct {
	mu       sync.Mutex
	next     map[int32]int64 // per partition, the offset after the last record of a committed transaction
	commits  int
	aborts   int
	restarts int
	last     error
	quit     chan struct{}
	done     chan struct{}
}

func startCopier(ctx context.Context, seeds []string, txnID, group string) *copier {
	c := &copier{next: make(map[int32]int64), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			err := c.session(ctx, seeds, txnID, group)
			select {
			case <-c.quit:
				return
			case <-ctx.Done():
				return
			default:
			}
			c.mu.Lock()
			c.restarts++
			c.last = err
			c.mu.Unlock()
		}
	}()
	return c
}

// session copies with one session until quit or an error.
func (c *copier) session(ctx context.Context, seeds []string, txnID, group string) error {
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(seeds...), kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(20*time.Second), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(copyTopic),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(500*time.Millisecond))
	if err != nil {
		return err
	}
	defer sess.Close()
	for {
		select {
		case <-c.quit:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := sess.PollFetches(pctx)
		cancel()
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		ends := make(map[int32]int64)
		fs.EachRecord(func(rec *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Partition: rec.Partition, Value: rec.Value}, nil)
			ends[rec.Partition] = rec.Offset + 1
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			return fmt.Errorf("end: %w", err)
		}
		c.mu.Lock()
		if committed {
			c.commits++
			for p, end := range ends {
				c.next[p] = max(c.next[p], end)
			}
		} else {
			c.aborts++
		}
		c.mu.Unlock()
	}
}

func (c *copier) commitCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits
}

func (c *copier) restartCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restarts
}

// lastError is the error that ended the last session, for a message.
func (c *copier) lastError() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		return ""
	}
	return ", last error: " + c.last.Error()
}

// copiedTo reports whether the committed transactions reach, in every
// partition, the offsets in ends.
func (c *copier) copiedTo(ends map[int32]int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, end := range ends {
		if c.next[p] < end {
			return false
		}
	}
	return true
}

func (c *copier) close() {
	select {
	case <-c.quit:
	default:
		close(c.quit)
	}
	<-c.done
}

// checkConsumers waits until the group has consumed and the copier has
// copied everything read back, then checks both against it.
func checkConsumers(ctx context.Context, r *clusterRun, g *groupReader, cp *copier, reads []ledger.Read) (string, error) {
	ends := make(map[int32]int64)
	byPartition := make(map[int32][]int64)
	for _, rd := range reads {
		ends[rd.Partition] = max(ends[rd.Partition], rd.Offset+1)
		byPartition[rd.Partition] = append(byPartition[rd.Partition], rd.Seq)
	}
	consumedTo := func() bool {
		got := make(map[int32]int64)
		for _, rd := range g.reads() {
			got[rd.Partition] = max(got[rd.Partition], rd.Offset+1)
		}
		for p, end := range ends {
			if got[p] < end {
				return false
			}
		}
		return true
	}
	if err := klogproc.WaitFor(ctx, func() (bool, error) { return consumedTo() && cp.copiedTo(ends), nil }); err != nil {
		return "", fmt.Errorf("group and copier catching up with the %d records read back (group consumed %d, copier %d restarts%s): %w",
			len(reads), g.count(), cp.restartCount(), cp.lastError(), err)
	}
	g.close()
	cp.close()

	// The group: every record consumed, at least once.
	consumed := g.reads()
	seen := make(map[ledger.Read]int)
	for _, rd := range consumed {
		seen[rd]++
	}
	missing, duplicated := 0, 0
	for _, rd := range reads {
		switch n := seen[rd]; {
		case n == 0:
			missing++
		case n > 1:
			duplicated += n - 1
		}
	}
	rep := r.led.Check(consumed) // acknowledged and never consumed: lost
	if missing > 0 || rep.Lost > 0 || rep.Moved > 0 {
		return "", fmt.Errorf("the group missed %d of the %d records read back (%s; %v)", missing, len(reads), rep, rep.Examples)
	}

	// The copier: read_committed, each record once, in order, nothing
	// open.
	copies, err := readCopies(ctx, r.c.Brokers())
	if err != nil {
		return "", err
	}
	var bad []string
	total := 0
	for p := range r.partitions {
		total += len(copies[p])
		if !slices.Equal(copies[p], byPartition[p]) {
			bad = append(bad, fmt.Sprintf("partition %d: %s", p, seqDiff(byPartition[p], copies[p])))
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("read_committed, %s does not hold the %d records read back once each: %v", copyTopic, len(reads), bad)
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return fmt.Sprintf("group consumed all %d records, %d duplicated (re-delivered from its last commit); copier: %d transactions committed, %d aborted, %d sessions restarted, %d records copied each once (read_committed, no open transaction)",
		len(reads), duplicated, cp.commits, cp.aborts, cp.restarts, total), nil
}

// seqDiff describes how got differs from want, two lists of sequences.
func seqDiff(want, got []int64) string {
	count := make(map[int64]int)
	for _, s := range got {
		count[s]++
	}
	missing, twice := 0, 0
	for _, s := range want {
		if count[s] == 0 {
			missing++
		}
	}
	for _, n := range count {
		if n > 1 {
			twice += n - 1
		}
	}
	return fmt.Sprintf("%d copies of %d records: %d missing, %d duplicated, order kept %v", len(got), len(want), missing, twice, missing+twice == 0 && len(got) == len(want))
}

// readCopies reads copyTopic read_committed once no transaction is open in
// it (its last stable offsets at its high watermarks): each partition's
// values, as sequences, in offset order.
func readCopies(ctx context.Context, seeds []string) (map[int32][]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var ends kadm.ListedOffsets
	var last string
	err = klogproc.WaitFor(ctx, func() (bool, error) {
		stable, err := adm.ListCommittedOffsets(ctx, copyTopic)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if ends, err = adm.ListEndOffsets(ctx, copyTopic); err != nil {
			last = err.Error()
			return false, nil
		}
		open := false
		ends.Each(func(o kadm.ListedOffset) {
			s, _ := stable.Lookup(copyTopic, o.Partition)
			if o.Err != nil || s.Err != nil || s.Offset != o.Offset {
				open = true
				last = fmt.Sprintf("partition %d: last stable offset %d, high watermark %d", o.Partition, s.Offset, o.Offset)
			}
		})
		return !open, nil
	})
	if err != nil {
		return nil, fmt.Errorf("a transaction left open in %s (%s): %w", copyTopic, last, err)
	}
	starts := make(map[int32]kgo.Offset)
	want := make(map[int32]int64)
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			starts[o.Partition] = kgo.NewOffset().AtStart()
			want[o.Partition] = o.Offset
		}
	})
	out := make(map[int32][]int64)
	if len(starts) == 0 {
		return out, nil
	}
	// Markers are kept, so the reader reaches the high watermark, which a
	// transaction's marker ends.
	rd, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{copyTopic: starts}))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	next := make(map[int32]int64)
	for {
		done := true
		for p, end := range want {
			done = done && next[p] >= end
		}
		if done {
			return out, nil
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := rd.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s back (at %v of %v): %w", copyTopic, next, want, err)
		}
		for _, fe := range fs.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("read %s back: partition %d: %w", copyTopic, fe.Partition, fe.Err)
			}
		}
		fs.EachRecord(func(rec *kgo.Record) {
			next[rec.Partition] = rec.Offset + 1
			if rec.Attrs.IsControl() {
				return
			}
			seq, _ := strconv.ParseInt(string(rec.Value), 10, 64)
			out[rec.Partition] = append(out[rec.Partition], seq)
		})
	}
}
