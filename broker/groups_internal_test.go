package broker

import (
	"context"
	"errors"
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
	ctx := context.Background()
	noop := func(group.Record) error { return nil }
	groups := n.internalStore(n.newOffsetsTopic())
	txns := n.internalStore(n.newTxnStateTopic())

	if err := groups.Append(ctx, 3, []group.Record{{Key: []byte("k")}}); !errors.Is(err, group.ErrNotLeader) {
		t.Errorf("group append: %v, want group.ErrNotLeader", err)
	}
	if err := groups.Replay(ctx, 3, noop); !errors.Is(err, group.ErrNotLeader) {
		t.Errorf("group replay: %v, want group.ErrNotLeader", err)
	}
	if err := txns.Append(ctx, 3, []txn.Record{{Key: []byte("k")}}); !errors.Is(err, txn.ErrNotLeader) {
		t.Errorf("txn append: %v, want txn.ErrNotLeader", err)
	}
	if err := groups.AppendTransactional(ctx, 3, 7, 0, []group.Record{{Key: []byte("k")}}); !errors.Is(err, group.ErrNotLeader) {
		t.Errorf("group transactional append: %v, want group.ErrNotLeader", err)
	}
	if err := txns.Replay(ctx, 3, func(txn.Record) error { return nil }); !errors.Is(err, txn.ErrNotLeader) {
		t.Errorf("txn replay: %v, want txn.ErrNotLeader", err)
	}
}
