package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/klogdev/klog/store/log"
)

// The log cleaner of a node: the background passes over the dirtiest
// compacted log (runCleaner), passes asked for now (CompactNow, klog topic
// compact through the admin HTTP API) and the cleaner's state per
// partition (CleanerStates). One pass runs at a time on a node, whoever
// asked for it (n.cleaning), as Kafka runs one cleaner thread by default:
// a node holds one offset map (log.cleaner.dedupe.buffer.size) at most.

// Errors of CompactNow.
var (
	// ErrUnknownTopic: the node's metadata has no such topic or partition.
	ErrUnknownTopic = errors.New("unknown topic or partition")
	// ErrNotCompacted: the topic's cleanup.policy has no compact.
	ErrNotCompacted = errors.New("cleanup.policy has no compact")
)

// runCleaner is the log cleaner, Kafka's LogCleaner with one thread: it
// cleans the dirtiest compacted log (store/log's Manager.CleanDirtiest),
// at once again while one qualifies, and waits log.cleaner.backoff.ms when
// none does. Nothing runs with log.cleaner.enable=false. The node's close
// stops a pass in progress before its next batch (or after the swap it is
// in).
func (n *Node) runCleaner() {
	defer n.wg.Done()
	s := n.settings().Cleaner
	if !s.Enable {
		return
	}
	backoff := max(s.Backoff, 10*time.Millisecond)
	t := time.NewTimer(backoff)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		for n.ctx.Err() == nil {
			if !n.cleanDirtiest(s.DedupeBufferBytes) {
				break
			}
		}
		t.Reset(backoff)
	}
}

// cleanDirtiest runs one background pass, reporting whether it cleaned.
func (n *Node) cleanDirtiest(mapBytes int64) bool {
	select {
	case n.cleaning <- struct{}{}:
	case <-n.ctx.Done():
		return false
	}
	defer func() { <-n.cleaning }()
	opts := log.CleanOptions{Now: n.clock.Now(), MapBytes: mapBytes, Stop: n.ctx.Done()}
	tp, res, ok, err := n.logs.CleanDirtiest(opts, n.cleanerUpperBound)
	if err != nil {
		if !errors.Is(err, log.ErrClosed) && !errors.Is(err, log.ErrCleanStopped) {
			n.logger.Warn("log cleaner failed", "partition", tp.Dir(), "err", err)
		}
		return false
	}
	n.recordCleaning(tp, res, "cleaner")
	return ok && res.Cleaned
}

// Compaction is one local partition's part in CompactNow: the passes'
// result (a plan when dry) and the cleaner's state after them.
type Compaction struct {
	Result log.CleanResult
	CleanerPartition
}

// CompactNow cleans the node's replicas of topic now, whatever their dirty
// ratio (partition -1: every partition the node has a replica of; else that
// one): as far as each one's first uncleanable offset, which the active
// segment, the last stable offset and min.compaction.lag.ms still hold
// back. With dryRun nothing is written; each result's Plan says what a
// pass would remove. It waits for a pass in progress; ctx ends the wait
// and the passes, as the node's close does (log.ErrClosed).
// log.cleaner.enable=false does not stop it. An empty result means the
// node has no replica of the topic.
func (n *Node) CompactNow(ctx context.Context, topic string, partition int32, dryRun bool) ([]Compaction, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(n.ctx, cancel)()
	t, ok := n.ctrl.Image().Topic(topic)
	if !ok || partition >= int32(len(t.Partitions)) || partition < -1 {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTopic, topicPartitionName(topic, partition))
	}
	if policy := n.topicConfig(t).CleanupPolicy; !cleanupPolicy(policy).Compact() {
		return nil, fmt.Errorf("topic %s: %w (it is %s)", topic, ErrNotCompacted, strings.Join(policy, ","))
	}
	var out []Compaction
	for _, p := range n.localPartitions(topic, partition) {
		l := n.logs.Get(topic, p)
		if l == nil {
			continue
		}
		select {
		case n.cleaning <- struct{}{}:
		case <-ctx.Done():
			if n.ctx.Err() != nil {
				return out, log.ErrClosed
			}
			return out, ctx.Err()
		}
		tp := log.TopicPartition{Topic: topic, Partition: p}
		now := n.clock.Now()
		res, err := n.logs.CleanNow(l, log.CleanOptions{
			Now: now, UpperBound: n.cleanerUpperBound(tp, l), MapBytes: n.settings().Cleaner.DedupeBufferBytes, DryRun: dryRun, Stop: ctx.Done(),
		})
		<-n.cleaning
		switch {
		case errors.Is(err, log.ErrCleanStopped) && n.ctx.Err() != nil:
			return out, log.ErrClosed
		case errors.Is(err, log.ErrCleanStopped):
			return out, fmt.Errorf("%s: %w", tp.Dir(), context.Cause(ctx))
		case err != nil:
			return out, fmt.Errorf("%s: %w", tp.Dir(), err)
		}
		if !dryRun {
			n.recordCleaning(tp, res, "request")
		}
		out = append(out, Compaction{Result: res, CleanerPartition: n.cleanerPartition(tp, l, n.clock.Now())})
	}
	return out, nil
}

// CleanerPartition is the cleaner's state of one local replica of a
// compacted topic.
type CleanerPartition struct {
	Topic     string
	Partition int32
	// MinCleanableDirtyRatio is the topic's min.cleanable.dirty.ratio:
	// the background cleaner takes the log once DirtyRatio exceeds it.
	MinCleanableDirtyRatio float64
	log.CleanerState
}

// CleanerStates is the cleaner's state of every local replica of a
// compacted topic, by topic and partition.
func (n *Node) CleanerStates() []CleanerPartition {
	var out []CleanerPartition
	now := n.clock.Now()
	for tp, l := range n.logs.Logs() {
		if !l.Config().CleanupPolicy.Compact() {
			continue
		}
		out = append(out, n.cleanerPartition(tp, l, now))
	}
	slices.SortFunc(out, func(a, b CleanerPartition) int {
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

func (n *Node) cleanerPartition(tp log.TopicPartition, l *log.Log, now time.Time) CleanerPartition {
	return CleanerPartition{
		Topic: tp.Topic, Partition: tp.Partition, MinCleanableDirtyRatio: l.Config().MinCleanableDirtyRatio,
		CleanerState: l.CleanerState(now, n.cleanerUpperBound(tp, l)),
	}
}

// localPartitions lists the partitions of topic this node has a replica
// of, in order (partition -1: all; else that one if the node has it).
func (n *Node) localPartitions(topic string, partition int32) []int32 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	var ps []int32
	for key := range n.mu.parts {
		if key.topic == topic && (partition < 0 || key.partition == partition) {
			ps = append(ps, key.partition)
		}
	}
	slices.Sort(ps)
	return ps
}

func topicPartitionName(topic string, partition int32) string {
	if partition < 0 {
		return topic
	}
	return fmt.Sprintf("%s/%d", topic, partition)
}

// CleanerState is the log cleaner's view of a local partition's log (its
// dirty section bounded by the partition's last stable offset, the last
// pass, the bytes and records removed); false when the node has no log of
// it.
func (n *Node) CleanerState(topic string, partition int32) (log.CleanerState, bool) {
	l := n.logs.Get(topic, partition)
	if l == nil {
		return log.CleanerState{}, false
	}
	tp := log.TopicPartition{Topic: topic, Partition: partition}
	return l.CleanerState(n.clock.Now(), n.cleanerUpperBound(tp, l)), true
}

// cleanerUpperBound is the first offset of a partition the cleaner must
// not clean: its last stable offset (the high watermark, or the first
// offset of an open transaction below it). A log without an open
// partition is not cleaned.
func (n *Node) cleanerUpperBound(tp log.TopicPartition, l *log.Log) int64 {
	n.mu.RLock()
	p := n.mu.parts[partitionKey{tp.Topic, tp.Partition}]
	n.mu.RUnlock()
	if p == nil {
		return l.StartOffset()
	}
	return p.LastStableOffset()
}
