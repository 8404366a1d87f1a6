package broker

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/txn"
)

// TestInternalStoresReportLostLeadership: when this node does not lead an
// internal topic's partition, the coordinators' stores say so with the
// coordinator's own sentinel, which they answer as NOT_COORDINATOR.
func TestInternalStoresReportLostLeadership(t *testing.T) {
	n := &Node{}
	n.mu.parts = make(map[partitionKey]*partition.Partition)
	n.mu.conns = make(map[net.Conn]struct{})
	ctx := context.Background()
	noop := func(group.Record) error { return nil }

	if err := (groupStore{n}).Append(ctx, 3, []group.Record{{Key: []byte("k")}}); !errors.Is(err, group.ErrNotLeader) {
		t.Errorf("group append: %v, want group.ErrNotLeader", err)
	}
	if err := (groupStore{n}).Replay(ctx, 3, noop); !errors.Is(err, group.ErrNotLeader) {
		t.Errorf("group replay: %v, want group.ErrNotLeader", err)
	}
	if err := (txnStore{n}).Append(ctx, 3, []txn.Record{{Key: []byte("k")}}); !errors.Is(err, txn.ErrNotLeader) {
		t.Errorf("txn append: %v, want txn.ErrNotLeader", err)
	}
}
