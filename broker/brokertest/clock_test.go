package brokertest_test

import (
	"testing"
	"time"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/clock"
)

// TestClusterAdvanceClock: Cluster.AdvanceClock advances every node's
// clock by as much, a clock the nodes share once; a shared clock keeps
// what was advanced across a restart.
func TestClusterAdvanceClock(t *testing.T) {
	c := brokertest.StartCluster(t, 2)
	c.AdvanceClock(time.Hour)
	for _, n := range c.Nodes() {
		if got := n.Broker().Clock().Offset; got != time.Hour {
			t.Errorf("node %d: clock %v ahead, want 1h", n.Broker().ID(), got)
		}
	}
	shared := clock.New()
	s := brokertest.StartCluster(t, 2, brokertest.Clock(shared))
	s.AdvanceClock(time.Hour)
	if got := shared.Offset(); got != time.Hour {
		t.Fatalf("shared clock %v ahead, want 1h", got)
	}
	s.Node(1).Restart()
	if got := s.Node(1).Broker().Clock().Offset; got != time.Hour {
		t.Fatalf("after a restart: %v ahead, want 1h", got)
	}
}
