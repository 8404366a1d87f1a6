package brokertest

import (
	"context"
	"time"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/clock"
)

// Clock makes the node read time from c (broker.Config.Clock), which
// keeps what was advanced across Restart; given to StartCluster, every
// node shares c. Without it each node has a clock of its own, starting at
// real time, whose offset the node keeps in its data (memory or disk)
// across Restart.
func Clock(c *clock.Clock) Option {
	return nodeOption(func(cfg *broker.Config) { cfg.Clock = c })
}

// AdvanceClock moves the node's clock d forward and runs at once what
// time drives (broker.Node.AdvanceClock): retention, segment.ms, the
// cleaner, transaction and session timeouts, offset expiry.
func (n *Node) AdvanceClock(d time.Duration) {
	n.t.Helper()
	n.advanceClock(d)
}

func (n *Node) advanceClock(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := n.Broker().AdvanceClock(ctx, d); err != nil {
		n.t.Fatalf("advance the clock of node %d by %v: %v", n.Broker().ID(), d, err)
	}
}

// AdvanceClock moves the clock of every running node d forward, a clock
// the nodes share once, and then runs each node's passes.
func (c *Cluster) AdvanceClock(d time.Duration) {
	c.t.Helper()
	advanced := map[*clock.Clock]bool{}
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		by := d
		if shared := n.cfg.Clock; shared != nil {
			if advanced[shared] {
				by = 0
			}
			advanced[shared] = true
		}
		n.advanceClock(by)
	}
}
