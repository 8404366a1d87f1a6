package share_test

import (
	"testing"
	"time"

	"github.com/klogdev/klog/broker/share"
	"github.com/klogdev/klog/internal/testkit"
)

func TestManagerWakesAndExpires(t *testing.T) {
	clk := testkit.NewClock(time.Unix(1_700_000_000, 0))
	m := share.NewManager(share.Config{LockDuration: lock, DeliveryLimit: 5, MaxRecordLocks: 100}, clk.Now, share.NewSessions(10, 10))
	key := share.Key{Group: "g", Partition: 0}
	start := func() int64 { return 7 }
	deadline := m.With(key, 1, 0, start, func(p *share.Partition, now time.Time) bool {
		if p.Start() != 7 {
			t.Fatalf("a new share-partition starts at %d, want 7", p.Start())
		}
		p.Acquire("a", now, batches(7, 3), 0, share.BatchOptimized)
		return false
	})
	if !deadline.Equal(clk.Now().Add(lock)) {
		t.Fatalf("lock deadline %v, want %v", deadline, clk.Now().Add(lock))
	}
	wake := m.Wake("g")
	other := m.Wake("h")
	// The member leaving gives its records back and wakes the group's
	// fetches, not another group's.
	m.MemberGone("g", "a")
	select {
	case <-wake:
	default:
		t.Fatal("releasing records did not wake the group")
	}
	select {
	case <-other:
		t.Fatal("another group was woken")
	default:
	}
	// Acquired again, then the lock lapses at the next look.
	m.With(key, 1, 0, start, func(p *share.Partition, now time.Time) bool {
		p.Acquire("b", now, batches(7, 3), 0, share.BatchOptimized)
		return false
	})
	wake = m.Wake("g")
	clk.Advance(lock)
	m.With(key, 1, 0, start, nil)
	select {
	case <-wake:
	default:
		t.Fatal("a lapsed lock did not wake the group")
	}
	m.Lookup(key, func(p *share.Partition) {
		if st, d, _, _ := p.StateOf(7); st != share.Available || d != 2 {
			t.Fatalf("offset 7: %v delivered %d, want Available 2", st, d)
		}
	})
	// A new leader epoch starts the share-partition again.
	m.With(key, 2, 0, func() int64 { return 10 }, func(p *share.Partition, _ time.Time) bool {
		if p.Start() != 10 || p.End() != 10 {
			t.Fatalf("after a leader change: %d-%d, want 10-10", p.Start(), p.End())
		}
		return false
	})
}
