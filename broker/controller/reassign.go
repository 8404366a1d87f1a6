package controller

// Partition reassignment, after Kafka's KIP-455 as its KRaft controller
// runs it (ReplicationControlManager.alterPartitionReassignment,
// PartitionReassignmentReplicas, PartitionReassignmentRevert):
//
//  1. A reassignment commits one PartitionChange making the replicas the
//     target replicas followed by those leaving, with adding (the target
//     replicas not among the current ones) and removing (the current ones
//     not among the target) set. The nodes added create the replica and
//     fetch it from the leader, which adds them to the ISR through
//     AlterPartition once they have caught up.
//  2. The change that brings every target replica into the ISR completes
//     it: the leaving replicas drop out of the replicas and the ISR, the
//     leader moves if it was one of them, the leader epoch bumps, and
//     adding and removing are cleared. The nodes removed delete their
//     replica.
//
// A reassignment that adds nobody, or whose added replicas are in the ISR
// already, completes at once. A new reassignment of a partition under way
// replaces the old one, counting the old one's replicas as current, as
// Kafka does. Cancelling goes back to the original replicas (the current
// ones but those being added); when that would leave the ISR empty, it
// needs unclean leader election enabled on the topic.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
)

// assignment is a partition's replicas and its reassignment under way, as
// metadata.Partition keeps them.
type assignment struct {
	replicas, adding, removing []int32
}

func assignmentOf(p metadata.Partition) assignment {
	return assignment{replicas: p.Replicas, adding: p.AddingReplicas, removing: p.RemovingReplicas}
}

func (a assignment) equal(b assignment) bool {
	return slices.Equal(a.replicas, b.replicas) && slices.Equal(a.adding, b.adding) && slices.Equal(a.removing, b.removing)
}

func (a assignment) reassigning() bool { return len(a.adding) > 0 || len(a.removing) > 0 }

// reassignTo is the assignment reassigning from current to target:
// replicas target followed by current's others, adding and removing sorted
// (PartitionReassignmentReplicas).
func reassignTo(current, target []int32) assignment {
	removing := without(current, target)
	adding := without(target, current)
	slices.Sort(removing)
	slices.Sort(adding)
	return assignment{replicas: slices.Concat(target, removing), adding: nilIfEmpty(adding), removing: nilIfEmpty(removing)}
}

// complete returns the assignment and ISR once the reassignment under way
// completes with isr as the ISR, and whether it does: when the ISR
// without the leaving replicas is not empty and holds every replica that
// stays (maybeCompleteReassignment).
func (a assignment) complete(isr []int32) (assignment, []int32, bool) {
	if !a.reassigning() {
		return a, isr, false
	}
	newISR := without(isr, a.removing)
	replicas := without(a.replicas, a.removing)
	if len(newISR) == 0 || len(replicas) == 0 || !containsAll(newISR, replicas) {
		return a, isr, false
	}
	return assignment{replicas: replicas}, newISR, true
}

// original is the assignment a reassignment under way started from: the
// replicas but those being added.
func (a assignment) original() []int32 { return without(a.replicas, a.adding) }

// Reassignment is one partition's change in AlterPartitionReassignments:
// Replicas is the target replica list; nil cancels the reassignment under
// way.
type Reassignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

// AlterPartitionReassignments starts, replaces or cancels the
// reassignment of each partition, after catching up with the active
// controller once, and returns each one's error (nil: done, or under
// way). allowRFChange false refuses a target of another size than the
// partition's replication factor (KIP-860). Errors are Kafka's:
// ErrUnknownTopic for an unknown topic or partition;
// ErrInvalidReplicaAssignment for an empty target, one naming a broker
// twice or an unregistered broker, or a cancellation that would need an
// unclean election; ErrInvalidReplicationFactor; ErrNoReassignment when
// there is nothing to cancel.
func (c *Controller) AlterPartitionReassignments(ctx context.Context, rs []Reassignment, allowRFChange bool) []error {
	errs := make([]error, len(rs))
	if err := c.CatchUp(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i, r := range rs {
		errs[i] = c.reassign(ctx, r, allowRFChange)
	}
	return errs
}

// reassignAttempts bounds how often a reassignment is recomputed when the
// partition changed under it (an ISR change committed between reading the
// image and committing).
const reassignAttempts = 5

func (c *Controller) reassign(ctx context.Context, r Reassignment, allowRFChange bool) error {
	var stale error
	for range reassignAttempts {
		img := c.Image()
		t, p, err := c.checkReassignment(img, r, allowRFChange)
		if err != nil {
			return err
		}
		ch, err := c.buildReassignmentChange(img, t, p, r)
		if err != nil || !ch.changed(p) {
			return err
		}
		res, err := c.propose(ctx, ch.record(t, p))
		if err != nil {
			return err
		}
		if res.err != nil {
			if errors.Is(res.err, metadata.ErrStaleLeaderEpoch) || errors.Is(res.err, metadata.ErrStalePartitionEpoch) {
				stale = res.err
				continue
			}
			return c.staleChange(res.err)
		}
		np, _ := res.next.Topics[r.Topic].Partition(r.Partition)
		c.log.Info("partition reassignment", "topic", r.Topic, "partition", r.Partition, "target", r.Replicas,
			"replicas", np.Replicas, "adding", np.AddingReplicas, "removing", np.RemovingReplicas,
			"leader", np.Leader, "isr", np.ISR)
		return nil
	}
	return c.staleChange(stale)
}

// checkReassignment validates r against img and returns its topic and
// partition.
func (c *Controller) checkReassignment(img *metadata.Image, r Reassignment, allowRFChange bool) (*metadata.Topic, metadata.Partition, error) {
	t, ok := img.Topic(r.Topic)
	if !ok {
		return nil, metadata.Partition{}, errmsg.Withf(fmt.Errorf("%w: %q", ErrUnknownTopic, r.Topic), "Unable to find a topic named %s.", r.Topic)
	}
	p, ok := t.Partition(r.Partition)
	if !ok {
		return nil, metadata.Partition{}, errmsg.Withf(fmt.Errorf("%w: %s-%d", ErrUnknownTopic, r.Topic, r.Partition),
			"Unable to find partition %s:%d.", r.Topic, r.Partition)
	}
	if r.Replicas == nil {
		if !p.Reassigning() {
			return t, p, errmsg.With(fmt.Errorf("%w: %s-%d", ErrNoReassignment, r.Topic, r.Partition),
				"No partition reassignment is in progress for the topic partition.")
		}
		return t, p, nil
	}
	if err := checkReplicaList(img, r.Replicas); err != nil {
		return t, p, err
	}
	if !allowRFChange {
		rf := len(p.Replicas)
		if p.Reassigning() {
			rf = len(without(p.Replicas, p.RemovingReplicas))
		}
		if rf != len(r.Replicas) {
			return t, p, errmsg.Withf(fmt.Errorf("%w: %s-%d has %d replicas, the target %d, and allowReplicationFactorChange is false",
				ErrInvalidReplicationFactor, r.Topic, r.Partition, rf, len(r.Replicas)),
				"The replication factor is changed from %d to %d", rf, len(r.Replicas))
		}
	}
	return t, p, nil
}

// buildReassignmentChange is the change r makes to p.
func (c *Controller) buildReassignmentChange(img *metadata.Image, t *metadata.Topic, p metadata.Partition, r Reassignment) (partitionChange, error) {
	eligible := eligibleIn(img)
	el := electOnline
	if r.Replicas != nil {
		return buildReassignment(p, reassignTo(p.Replicas, r.Replicas), p.ISR, el, eligible), nil
	}
	// Cancel: back to the original replicas, without those being added
	// in the ISR.
	asg := assignmentOf(p)
	back := assignment{replicas: asg.original()}
	isr := without(p.ISR, asg.adding)
	unclean := uncleanAllowed(c.brokerConfig(img), t)
	if unclean {
		el = electUnclean
	}
	if len(isr) == 0 {
		if !unclean {
			return partitionChange{}, errmsg.Withf(fmt.Errorf("%w: reverting %s-%d would need an unclean leader election", ErrInvalidReplicaAssignment, t.Name, p.Index),
				"Unable to revert partition assignment for %s:%d because it would require an unclean leader election.", t.Name, p.Index)
		}
		isr = back.replicas[:1]
	}
	return buildReassignment(p, back, isr, el, eligible), nil
}

// checkReplicaList checks a manual replica list: not empty, no broker
// twice, every broker registered (validateManualPartitionAssignment).
func checkReplicaList(img *metadata.Image, replicas []int32) error {
	if len(replicas) == 0 {
		return errmsg.With(fmt.Errorf("%w: an empty replica list", ErrInvalidReplicaAssignment),
			"The manual partition assignment includes an empty replica list.")
	}
	// In broker id order, as Kafka checks them: the first problem it
	// names is the same.
	sorted := slices.Sorted(slices.Values(replicas))
	for i, b := range sorted {
		if _, ok := img.Brokers[b]; !ok {
			return errmsg.Withf(fmt.Errorf("%w: broker %d is not registered", ErrInvalidReplicaAssignment, b),
				"The manual partition assignment includes broker %d, but no such broker is registered.", b)
		}
		if i > 0 && sorted[i-1] == b {
			return errmsg.Withf(fmt.Errorf("%w: broker %d listed twice", ErrInvalidReplicaAssignment, b),
				"The manual partition assignment includes the broker %d more than once.", b)
		}
	}
	return nil
}

// PartitionReassignment is a partition with a reassignment under way, as
// ListPartitionReassignments reports it.
type PartitionReassignment struct {
	Topic                      string
	Partition                  int32
	Replicas, Adding, Removing []int32
}

// ListPartitionReassignments returns the reassignments under way in the
// given partitions, or in all (a nil parts), in topic and partition order.
// Unknown topics and partitions are left out, as in Kafka.
func (c *Controller) ListPartitionReassignments(parts []TopicPartition) []PartitionReassignment {
	img := c.Image()
	var out []PartitionReassignment
	add := func(name string, p metadata.Partition) {
		if p.Reassigning() {
			out = append(out, PartitionReassignment{Topic: name, Partition: p.Index,
				Replicas: slices.Clone(p.Replicas), Adding: slices.Clone(p.AddingReplicas), Removing: slices.Clone(p.RemovingReplicas)})
		}
	}
	if parts == nil {
		for _, name := range img.SortedTopicNames() {
			for _, p := range img.Topics[name].Partitions {
				add(name, p)
			}
		}
		return out
	}
	for _, tp := range parts {
		if t, ok := img.Topic(tp.Topic); ok {
			if p, ok := t.Partition(tp.Partition); ok {
				add(tp.Topic, p)
			}
		}
	}
	return out
}

// without returns the members of s not in drop, in s's order.
func without(s, drop []int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, r := range s {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

// containsAll reports whether s holds every member of sub.
func containsAll(s, sub []int32) bool {
	for _, r := range sub {
		if !slices.Contains(s, r) {
			return false
		}
	}
	return true
}

func nilIfEmpty(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return s
}
