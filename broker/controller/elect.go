package controller

// Leader election and ISR changes, after Kafka's PartitionChangeBuilder
// (without eligible leader replicas, KIP-966):
//
//   - A partition keeps its leader while the leader is in the target ISR
//     and eligible (registered, unfenced). Otherwise the first replica in
//     replica order that is in the target ISR and eligible leads.
//   - A preferred election moves leadership to the first replica (the
//     preferred leader) when it is in the ISR and eligible.
//   - With none in the ISR left, an unclean election (ElectLeaders
//     UNCLEAN, or unclean.leader.election.enable on the topic) takes the
//     first eligible replica in replica order and makes the ISR just that
//     replica; a clean one leaves the partition without a leader (-1).
//   - The ISR never becomes empty: removing its last member keeps it, and
//     the partition goes offline until that member returns, which is why
//     a broker coming back is elected for the leaderless partitions whose
//     ISR it is in (Kafka's handleBrokerUnfenced).
//
// Every change is one PartitionChange record carrying the epochs it was
// computed against, so a change computed on a stale image is refused by
// the state machine instead of undoing a newer one. The leader epoch bumps
// when the leader changes, the partition epoch on every change (applied
// in broker/metadata); an ISR shrink alone does not bump the leader epoch,
// as in Kafka since metadata version 3.6.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
)

// election is the kind of leader election a partition change attempts.
type election int

const (
	// electOnline keeps an eligible leader in the ISR, else takes the
	// first eligible ISR replica.
	electOnline election = iota
	// electPreferred prefers the first replica when it is eligible and in
	// the ISR.
	electPreferred
	// electUnclean is electOnline falling back to any eligible replica.
	electUnclean
)

// partitionChange is the outcome of building a change for one partition.
type partitionChange struct {
	leader int32
	isr    []int32
	// asg is the partition's assignment after the change.
	asg assignment
	// unclean reports that the leader came from outside the ISR.
	unclean bool
	// bump is set when replicas leave while the leader stays: the leader
	// epoch bumps all the same, as Kafka's
	// triggerLeaderEpochBumpForReplicaReassignmentIfNeeded does.
	bump bool
}

// buildChange computes the leader and ISR partition p gets with target
// as its ISR: an election is tried when the current leader is not in
// target or not eligible, or, for a preferred election, when it is not
// the preferred replica. An empty target keeps the current ISR. A
// reassignment under way completes when target allows it.
func buildChange(p metadata.Partition, target []int32, el election, eligible func(int32) bool) partitionChange {
	return buildReassignment(p, assignmentOf(p), target, el, eligible)
}

// buildReassignment is buildChange with asg as the partition's new
// assignment: the reassignment completes at once when the ISR allows it
// (Kafka's PartitionChangeBuilder.completeReassignmentIfNeeded), and the
// leader is elected in the order of the replicas it leaves.
func buildReassignment(p metadata.Partition, asg assignment, target []int32, el election, eligible func(int32) bool) partitionChange {
	isr := target
	if len(isr) == 0 {
		isr = p.ISR
	}
	if done, doneISR, ok := asg.complete(isr); ok {
		asg, isr = done, doneISR
	}
	q := p
	q.Replicas = asg.replicas
	out := elect(q, isr, el, eligible)
	out.asg = asg
	out.bump = out.leader == p.Leader && !containsAll(asg.replicas, p.Replicas)
	return out
}

// elect computes the leader and ISR partition p gets with target as its
// ISR, for buildReassignment.
func elect(p metadata.Partition, target []int32, el election, eligible func(int32) bool) partitionChange {
	out := partitionChange{leader: p.Leader, isr: slices.Clone(target)}
	if len(out.isr) == 0 {
		out.isr = slices.Clone(p.ISR)
	}
	valid := func(r int32) bool { return slices.Contains(out.isr, r) && eligible(r) }
	needed := p.Leader == -1 || !valid(p.Leader)
	if el == electPreferred && len(p.Replicas) > 0 && p.Leader != p.Replicas[0] {
		needed = true
	}
	if !needed {
		return out
	}
	if el == electPreferred && len(p.Replicas) > 0 && valid(p.Replicas[0]) {
		out.leader = p.Replicas[0]
		return out
	}
	if p.Leader != -1 && valid(p.Leader) {
		return out
	}
	for _, r := range p.Replicas {
		if valid(r) {
			out.leader = r
			return out
		}
	}
	if el == electUnclean {
		for _, r := range p.Replicas {
			if eligible(r) {
				out.leader, out.isr, out.unclean = r, []int32{r}, true
				return out
			}
		}
	}
	out.leader = -1
	return out
}

// changed reports whether ch differs from p.
func (ch partitionChange) changed(p metadata.Partition) bool {
	return ch.leader != p.Leader || !slices.Equal(ch.isr, p.ISR) || !ch.asg.equal(assignmentOf(p))
}

// record is the PartitionChange record that turns p into ch, conditional
// on p's epochs.
func (ch partitionChange) record(t *metadata.Topic, p metadata.Partition) *metadata.PartitionChangeRecord {
	leader := ch.leader
	le, pe := p.LeaderEpoch, p.PartitionEpoch
	r := &metadata.PartitionChangeRecord{
		Topic: t.Name, ID: t.ID, Partition: p.Index,
		Leader: &leader, ISR: slices.Clone(ch.isr),
		BumpLeaderEpoch: ch.bump,
		IfLeaderEpoch:   &le, IfPartitionEpoch: &pe,
	}
	if !ch.asg.equal(assignmentOf(p)) {
		// All three, so that none is left from the old assignment; empty
		// (not nil) clears adding and removing.
		r.Replicas = slices.Clone(ch.asg.replicas)
		r.AddingReplicas = append([]int32{}, ch.asg.adding...)
		r.RemovingReplicas = append([]int32{}, ch.asg.removing...)
	}
	return r
}

// eligibleIn returns whether a broker may lead or join an ISR in img:
// registered, unfenced and not shutting down.
func eligibleIn(img *metadata.Image) func(int32) bool {
	return func(id int32) bool {
		b, ok := img.Brokers[id]
		return ok && b.Active()
	}
}

// wakeRepair asks the liveness loop for a repair pass now.
func (c *Controller) wakeRepair() {
	select {
	case c.repairNow <- struct{}{}:
	default:
	}
}

// ControlledShutdown moves leadership and ISR membership off this node
// before it stops, as Kafka's controlled shutdown does: it commits this
// node's registration as shutting down, upon which the active controller
// elects other leaders for the partitions it leads (a partition with no
// one else in its ISR goes offline) and takes it out of every ISR, and
// waits until this node's image shows it leading nothing and in no ISR
// (but as the last member), or ctx ends.
// The node's next start registers it afresh. A single-node quorum has
// nowhere to move anything and returns at once, and so does a node whose
// every peer is fenced or shutting down, as the last node of a whole
// cluster's stop is: its moves could go nowhere, and the quorum that would
// commit them is usually gone with its peers.
func (c *Controller) ControlledShutdown(ctx context.Context) error {
	if c.net == nil {
		return nil
	}
	img := c.Image()
	b, ok := img.Brokers[c.cfg.NodeID]
	if !ok {
		return nil
	}
	if !c.peerActive(img) {
		c.log.Info("controlled shutdown: no other broker is active; nothing to move")
		return nil
	}
	b.ShuttingDown = true
	c.shuttingDown.Store(true)
	res, err := c.propose(ctx, amendRegistration(b))
	if err != nil {
		return fmt.Errorf("controller: controlled shutdown: %w", err)
	}
	if res.err != nil {
		return fmt.Errorf("controller: controlled shutdown: %w", res.err)
	}
	for {
		ch := c.Changed()
		img := c.Image()
		if !c.peerActive(img) {
			// The peers are stopping too (a whole cluster's stop): there
			// is no one to hand anything to.
			c.log.Info("controlled shutdown: the other brokers are stopping too; nothing to move")
			return nil
		}
		if !c.leadsOrPending(img) {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("controller: controlled shutdown: still leading partitions: %w", ctx.Err())
		case <-c.stop:
			return ErrClosed
		}
	}
	c.handOff(ctx)
	return nil
}

// handOff, on the active controller, passes Raft leadership to another
// voter before this node stops. The entries just committed (the moves of
// the controlled shutdown) are known committed to the leader alone until
// its next append: a leader that stops at once leaves the others applying
// an image without them until a new leader commits, which needs a quorum
// that may be gone with this node (2 of 3 down). The new leader commits
// an entry of its own term while this node still votes, which commits
// everything before it; once this node has applied that entry, so has the
// new leader. Best effort: with no voter to take over, the node stops as
// it is.
func (c *Controller) handOff(ctx context.Context) {
	if c.raft.State() != raft.Leader || !c.peerActive(c.Image()) {
		return
	}
	last := c.raft.LastIndex()
	if err := c.raft.LeadershipTransfer().Error(); err != nil {
		c.log.Warn("controlled shutdown: leadership transfer failed", "err", err)
		return
	}
	// The new leader's first entry is a no-op, which the state machine
	// does not see: poll Raft's applied index.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for c.raft.AppliedIndex() <= last {
		if !c.peerActive(c.Image()) {
			// The new leader is stopping too (a whole cluster's stop):
			// its first entry may never come.
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			c.log.Warn("controlled shutdown: the new controller's first entry not applied", "err", ctx.Err())
			return
		case <-c.stop:
			return
		}
	}
	_, id := c.raft.LeaderWithID()
	c.log.Info("controlled shutdown: controller handed off", "to", id)
}

// peerActive reports whether a broker other than this node is registered
// in img, unfenced and not shutting down: one that could take over what
// this node leads.
func (c *Controller) peerActive(img *metadata.Image) bool {
	for id, b := range img.Brokers {
		if id != c.cfg.NodeID && b.Active() {
			return true
		}
	}
	return false
}

// leadsOrPending reports whether this node leads a partition in img, or a
// repair of a partition whose ISR holds it is still to come.
func (c *Controller) leadsOrPending(img *metadata.Image) bool {
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			if p.Leader == c.cfg.NodeID {
				return true
			}
		}
	}
	return c.repairPending(img, c.cfg.NodeID)
}

// repairPending reports whether a repair of img (repairChanges) is still
// to come for a partition that broker id leads or whose ISR holds it.
func (c *Controller) repairPending(img *metadata.Image, id int32) bool {
	for _, rec := range c.repairChanges(img) {
		p, _ := img.Topics[rec.Topic].Partition(rec.Partition)
		if p.Leader == id || slices.Contains(p.ISR, id) {
			return true
		}
	}
	return false
}

// uncleanAllowed reports whether t's unclean.leader.election.enable (its
// override, else the broker's value in b, from brokerConfig) is true.
func uncleanAllowed(b *config.Broker, t *metadata.Topic) bool {
	tc, err := b.Topic(t.Configs)
	return err == nil && tc.UncleanLeaderElection
}

// brokerConfig is this node's broker settings with img's dynamic broker
// configs over the static ones.
func (c *Controller) brokerConfig(img *metadata.Image) *config.Broker {
	if len(img.BrokerConfigs) == 0 {
		return c.cfg.Broker
	}
	b, err := c.cfg.Broker.WithDynamic(img.BrokerConfigs[""], img.BrokerConfigs[strconv.Itoa(int(c.cfg.NodeID))])
	if err != nil {
		c.log.Warn("dynamic broker configs", "err", err)
	}
	return b
}

// repairChanges lists the changes img needs for its brokers' liveness:
// ineligible brokers leave every ISR (but the last member), partitions
// whose leader is ineligible or absent elect one.
func (c *Controller) repairChanges(img *metadata.Image) []*metadata.PartitionChangeRecord {
	eligible := eligibleIn(img)
	b := c.brokerConfig(img)
	var recs []*metadata.PartitionChangeRecord
	for _, name := range img.SortedTopicNames() {
		t := img.Topics[name]
		el := electOnline
		if uncleanAllowed(b, t) {
			el = electUnclean
		}
		for _, p := range t.Partitions {
			target := slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return !eligible(r) })
			if p.Leader != -1 && eligible(p.Leader) && len(target) == len(p.ISR) {
				continue // the common case, without building anything
			}
			if ch := buildChange(p, target, el, eligible); ch.changed(p) {
				recs = append(recs, ch.record(t, p))
			}
		}
	}
	return recs
}

// repairPartitions commits repairChanges on the active controller. A
// change refused because its epochs went stale is recomputed on the next
// pass. It returns how many changes committed.
func (c *Controller) repairPartitions(ctx context.Context) int {
	if !c.IsLeader() {
		return 0
	}
	n := 0
	for _, rec := range c.repairChanges(c.Image()) {
		res, err := c.propose(ctx, rec)
		if err != nil {
			c.log.Warn("partition change failed", "topic", rec.Topic, "partition", rec.Partition, "err", err)
			return n
		}
		if res.err != nil {
			c.log.Debug("partition change refused", "topic", rec.Topic, "partition", rec.Partition, "err", res.err)
			continue
		}
		n++
		p, _ := res.next.Topics[rec.Topic].Partition(rec.Partition)
		c.log.Info("partition leader and isr changed", "topic", rec.Topic, "partition", p.Index,
			"leader", p.Leader, "leader_epoch", p.LeaderEpoch, "isr", p.ISR)
	}
	return n
}

// ElectLeader runs a leader election for one partition, as ElectLeaders
// (key 43) asks: preferred moves leadership to the preferred replica if
// it is eligible and in the ISR; unclean elects a leader for a partition
// without one, from outside the ISR if need be. The errors are Kafka's:
// ErrElectionNotNeeded when the partition already has the leader asked
// for, ErrPreferredLeaderNotAvailable and ErrEligibleLeadersNotAvailable
// when no election can give it one, ErrUnknownTopic for an unknown topic
// or partition.
func (c *Controller) ElectLeader(ctx context.Context, topic string, partition int32, unclean bool) error {
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	return c.electLeader(ctx, topic, partition, unclean)
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// ElectLeaders runs ElectLeader for each partition, after catching up with
// the active controller once, and returns each one's error. A nil list
// means every partition of every topic, in name and index order, and
// parts is then filled in: the partitions the results are for.
func (c *Controller) ElectLeaders(ctx context.Context, unclean bool, parts []TopicPartition) ([]TopicPartition, []error) {
	if err := c.CatchUp(ctx); err != nil {
		errs := make([]error, len(parts))
		for i := range errs {
			errs[i] = err
		}
		return parts, errs
	}
	if parts == nil {
		img := c.Image()
		for _, name := range img.SortedTopicNames() {
			for _, p := range img.Topics[name].Partitions {
				parts = append(parts, TopicPartition{Topic: name, Partition: p.Index})
			}
		}
	}
	errs := make([]error, len(parts))
	for i, tp := range parts {
		errs[i] = c.electLeader(ctx, tp.Topic, tp.Partition, unclean)
	}
	return parts, errs
}

func (c *Controller) electLeader(ctx context.Context, topic string, partition int32, unclean bool) error {
	img := c.Image()
	t, ok := img.Topic(topic)
	if !ok {
		return errmsg.With(fmt.Errorf("%w: %q", ErrUnknownTopic, topic), "No such topic as "+topic)
	}
	p, ok := t.Partition(partition)
	if !ok {
		return errmsg.Withf(fmt.Errorf("%w: %s-%d", ErrUnknownTopic, topic, partition), "No such partition as %s-%d", topic, partition)
	}
	el := electPreferred
	if unclean {
		el = electUnclean
	}
	switch {
	case !unclean && len(p.Replicas) > 0 && p.Leader == p.Replicas[0]:
		return errmsg.With(ErrElectionNotNeeded, "Leader election not needed for topic partition.")
	case unclean && p.Leader != -1:
		return errmsg.With(ErrElectionNotNeeded, "Leader election not needed for topic partition.")
	}
	ch := buildChange(p, p.ISR, el, eligibleIn(img))
	if !ch.changed(p) || (!unclean && ch.leader != p.Replicas[0]) {
		if unclean {
			return errmsg.With(ErrEligibleLeadersNotAvailable, "Eligible topic partition leaders are not available.")
		}
		return errmsg.With(ErrPreferredLeaderNotAvailable, "The preferred leader was not available.")
	}
	res, err := c.propose(ctx, ch.record(t, p))
	if err != nil {
		return err
	}
	if res.err != nil {
		return c.staleChange(res.err)
	}
	np, _ := res.next.Topics[topic].Partition(partition)
	c.log.Info("leader elected", "topic", topic, "partition", partition, "unclean", ch.unclean, "leader", np.Leader, "leader_epoch", np.LeaderEpoch)
	return nil
}

// rebalanceLeaders runs a preferred election, on the active controller,
// for every partition whose preferred replica does not lead but is
// eligible and in the ISR: auto.leader.rebalance.enable. Like Kafka's
// KRaft controller it ignores leader.imbalance.per.broker.percentage and
// balances whenever a partition is imbalanced. It returns how many
// leaders moved.
func (c *Controller) rebalanceLeaders(ctx context.Context) int {
	img := c.Image()
	eligible := eligibleIn(img)
	n := 0
	for _, name := range img.SortedTopicNames() {
		for _, p := range img.Topics[name].Partitions {
			if len(p.Replicas) == 0 || p.Leader == p.Replicas[0] || !eligible(p.Replicas[0]) || !slices.Contains(p.ISR, p.Replicas[0]) {
				continue
			}
			if err := c.electLeader(ctx, name, p.Index, false); err != nil {
				c.log.Debug("preferred leader election failed", "topic", name, "partition", p.Index, "err", err)
				continue
			}
			n++
		}
	}
	return n
}

// staleChange maps a state-machine refusal of a partition change to the
// controller's errors.
func (c *Controller) staleChange(err error) error {
	switch {
	case errors.Is(err, metadata.ErrStaleLeaderEpoch):
		return fmt.Errorf("%w: %w", ErrFencedLeaderEpoch, err)
	case errors.Is(err, metadata.ErrStalePartitionEpoch):
		return fmt.Errorf("%w: %w", ErrInvalidUpdateVersion, err)
	case errors.Is(err, metadata.ErrUnknownTopic):
		return fmt.Errorf("%w: %w", ErrUnknownTopic, err)
	}
	return err
}
