package broker

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/partition"
)

// isrProposer proposes a partition's new ISR to the controller, at the
// leader and partition epochs the leader holds: Kafka's AlterPartition,
// which the controller checks against both epochs and answers with a new
// partition epoch in the next metadata image (controllerISR; tests record
// the proposals instead).
type isrProposer interface {
	AlterPartition(ctx context.Context, topic string, partition int32, leaderEpoch, partitionEpoch int32, newISR []int32) error
}

// controllerISR proposes to the metadata quorum: Controller.AlterPartition
// checks the epochs and commits the partition change, forwarded to the
// active controller from any node.
type controllerISR struct {
	ctrl *controller.Controller
	self int32
}

func (c controllerISR) AlterPartition(ctx context.Context, topic string, partition int32, leaderEpoch, partitionEpoch int32, isr []int32) error {
	_, err := c.ctrl.AlterPartition(ctx, c.self, topic, partition, leaderEpoch, partitionEpoch, isr)
	return err
}

// isrProposal is a new ISR for one partition, at the epochs it was
// computed from.
type isrProposal struct {
	topic                       string
	partition                   int32
	leaderEpoch, partitionEpoch int32
	isr                         []int32
}

func (p isrProposal) String() string {
	return fmt.Sprintf("%s-%d@%d/%d%v", p.topic, p.partition, p.leaderEpoch, p.partitionEpoch, p.isr)
}

// proposeISRExpand queues the ISR a follower's fetch made it eligible for
// (partition.FollowerUpdate.ProposedISR) for maintainISR; a full queue
// drops it, and the follower's next fetch proposes it again.
func (n *Node) proposeISRExpand(p *partition.Partition, isr []int32) {
	st := p.LeaderState()
	select {
	case n.isrExpand <- isrProposal{p.Topic(), p.Index(), st.Epoch, st.PartitionEpoch, isr}:
	default:
	}
}

// maintainISR proposes ISR changes for the partitions this node leads, as
// Kafka's ReplicaManager.maybeShrinkIsr and Partition.maybeExpandIsr: every
// replica.lag.time.max.ms/2 it drops the followers that have not caught
// up within replica.lag.time.max.ms (partition.ProposedISRShrink), and it
// adds the followers whose fetches made them eligible. A proposal is sent
// once per partition and epochs until the next check.
func (n *Node) maintainISR() {
	defer n.wg.Done()
	t := time.NewTicker(max(n.settings().Replica.LagTimeMax/2, time.Millisecond))
	defer t.Stop()
	sent := map[string]bool{}
	propose := func(pr isrProposal) {
		if key := pr.String(); !sent[key] {
			sent[key] = true
			n.sendISR(pr)
		}
	}
	for {
		select {
		case <-n.ctx.Done():
			return
		case pr := <-n.isrExpand:
			propose(pr)
		case now := <-t.C:
			clear(sent)
			for _, p := range n.partitions() {
				isr, removed, ok := p.ProposedISRShrink(now)
				if !ok {
					continue
				}
				st := p.LeaderState()
				n.logger.Debug("ISR shrink", "topic", p.Topic(), "partition", p.Index(), "out_of_sync", removed, "isr", isr)
				propose(isrProposal{p.Topic(), p.Index(), st.Epoch, st.PartitionEpoch, slices.Clone(isr)})
			}
		}
	}
}

// sendISR sends one proposal to the controller, bounded by
// replica.socket.timeout.ms; the next metadata image brings the outcome.
func (n *Node) sendISR(pr isrProposal) {
	ctx, cancel := context.WithTimeout(n.ctx, n.settings().Replica.SocketTimeout)
	defer cancel()
	n.isrMu.Lock()
	to := n.isr
	n.isrMu.Unlock()
	if err := to.AlterPartition(ctx, pr.topic, pr.partition, pr.leaderEpoch, pr.partitionEpoch, pr.isr); err != nil {
		n.logger.Debug("propose ISR", "proposal", pr.String(), "err", err)
	}
}
