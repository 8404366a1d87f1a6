package share_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/share"
	"github.com/klogdev/klog/internal/testkit"
)

const lock = 30 * time.Second

func newPartition(start int64) (*share.Partition, *testkit.Clock) {
	cfg := share.Config{LockDuration: lock, DeliveryLimit: 3, MaxRecordLocks: 10}
	return share.NewPartition(cfg, start), testkit.NewClock(time.Unix(1_700_000_000, 0))
}

// batches makes one batch of n records per n, from first on.
func batches(first int64, ns ...int) []share.Batch {
	var out []share.Batch
	for _, n := range ns {
		out = append(out, share.Batch{First: first, Last: first + int64(n) - 1})
		first += int64(n)
	}
	return out
}

func ack(first, last int64, t share.AckType) share.AckBatch {
	return share.AckBatch{First: first, Last: last, Types: []share.AckType{t}}
}

func wantRanges(t *testing.T, got []share.AcquiredRange, want ...share.AcquiredRange) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("acquired %v, want %v", got, want)
	}
}

func mustAck(t *testing.T, p *share.Partition, clk *testkit.Clock, member string, acks ...share.AckBatch) {
	t.Helper()
	if err := p.Acknowledge(member, clk.Now(), acks); err != nil {
		t.Fatal(err)
	}
}

func wantWindow(t *testing.T, p *share.Partition, start, end int64) {
	t.Helper()
	if p.Start() != start || p.End() != end {
		t.Fatalf("window %d-%d, want %d-%d", p.Start(), p.End(), start, end)
	}
}

func wantState(t *testing.T, p *share.Partition, off int64, want share.State, deliveries int16) {
	t.Helper()
	st, d, _, ok := p.StateOf(off)
	if !ok || st != want || d != deliveries {
		t.Fatalf("offset %d: %v %d delivered (in window %v), want %v %d", off, st, d, ok, want, deliveries)
	}
}

func TestAcquireAcceptAdvancesStart(t *testing.T) {
	p, clk := newPartition(5)
	got := p.Acquire("a", clk.Now(), batches(5, 2, 2), 0, share.BatchOptimized)
	wantRanges(t, got, share.AcquiredRange{First: 5, Last: 8, Deliveries: 1})
	wantWindow(t, p, 5, 9)
	// Accepting the middle leaves the start where it was.
	mustAck(t, p, clk, "a", ack(7, 8, share.AckAccept))
	if p.Start() != 5 {
		t.Fatalf("start %d after accepting 7-8, want 5", p.Start())
	}
	mustAck(t, p, clk, "a", ack(5, 6, share.AckAccept))
	wantWindow(t, p, 9, 9)
	// Nothing is handed out twice.
	wantRanges(t, p.Acquire("b", clk.Now(), batches(5, 2, 2), 0, share.BatchOptimized))
}

func TestReleaseRedeliversAndRejectArchives(t *testing.T) {
	p, clk := newPartition(0)
	p.Acquire("a", clk.Now(), batches(0, 4), 0, share.BatchOptimized)
	err := p.Acknowledge("a", clk.Now(), []share.AckBatch{{First: 0, Last: 3, Types: []share.AckType{
		share.AckAccept, share.AckRelease, share.AckReject, share.AckRelease}}})
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, p, 1, share.Available, 1)
	wantState(t, p, 2, share.Archived, 1)
	if p.NextFetchOffset() != 1 {
		t.Fatalf("next fetch offset %d, want 1", p.NextFetchOffset())
	}
	// Another member gets the released records, second delivery, and
	// not the archived one between them.
	got := p.Acquire("b", clk.Now(), batches(0, 4), 0, share.BatchOptimized)
	wantRanges(t, got, share.AcquiredRange{First: 1, Last: 1, Deliveries: 2}, share.AcquiredRange{First: 3, Last: 3, Deliveries: 2})
}

func TestLockExpiryAndDeliveryLimit(t *testing.T) {
	p, clk := newPartition(0)
	for delivery := int16(1); delivery <= 3; delivery++ {
		got := p.Acquire("a", clk.Now(), batches(0, 2), 0, share.BatchOptimized)
		wantRanges(t, got, share.AcquiredRange{First: 0, Last: 1, Deliveries: delivery})
		clk.Advance(lock - time.Millisecond)
		if p.Expire(clk.Now()) {
			t.Fatalf("delivery %d: a lock lapsed before its duration", delivery)
		}
		clk.Advance(time.Millisecond)
		if !p.Expire(clk.Now()) {
			t.Fatalf("delivery %d: no lock lapsed at its deadline", delivery)
		}
	}
	// The third lapse archived both: delivered as often as the limit.
	wantWindow(t, p, 2, 2)
	wantRanges(t, p.Acquire("a", clk.Now(), batches(0, 2), 0, share.BatchOptimized))
}

func TestReleaseAtDeliveryLimitArchives(t *testing.T) {
	p, clk := newPartition(0)
	for i := 0; i < 3; i++ {
		p.Acquire("a", clk.Now(), batches(0, 1), 0, share.BatchOptimized)
		mustAck(t, p, clk, "a", ack(0, 0, share.AckRelease))
	}
	if p.Start() != 1 {
		t.Fatalf("start %d after three releases at limit 3, want 1", p.Start())
	}
}

func TestAcknowledgeRefusals(t *testing.T) {
	p, clk := newPartition(10)
	p.Acquire("a", clk.Now(), batches(10, 3), 0, share.BatchOptimized)
	cases := []struct {
		name   string
		member string
		acks   []share.AckBatch
	}{
		{"another member's records", "b", []share.AckBatch{ack(10, 10, share.AckAccept)}},
		{"before the window", "a", []share.AckBatch{ack(9, 10, share.AckAccept)}},
		{"past the window", "a", []share.AckBatch{ack(12, 13, share.AckAccept)}},
		// All or nothing: the first batch is fine, the second is not.
		{"one bad batch of two", "a", []share.AckBatch{ack(10, 10, share.AckAccept), ack(11, 11, share.AckRelease), ack(20, 20, share.AckAccept)}},
	}
	for _, c := range cases {
		err := p.Acknowledge(c.member, clk.Now(), c.acks)
		if !errors.Is(err, share.ErrInvalidRecordState) {
			t.Fatalf("%s: %v, want ErrInvalidRecordState", c.name, err)
		}
		for off := int64(10); off <= 12; off++ {
			wantState(t, p, off, share.Acquired, 1)
		}
	}
	// Acknowledged twice: the second finds it no longer acquired.
	mustAck(t, p, clk, "a", ack(10, 10, share.AckAccept))
	if err := p.Acknowledge("a", clk.Now(), []share.AckBatch{ack(11, 11, share.AckAccept), ack(10, 10, share.AckAccept)}); !errors.Is(err, share.ErrInvalidRecordState) {
		t.Fatalf("acknowledging an accepted record: %v", err)
	}
	// After its lock lapsed a record is not the member's any more.
	clk.Advance(lock)
	p.Expire(clk.Now())
	if err := p.Acknowledge("a", clk.Now(), []share.AckBatch{ack(11, 11, share.AckAccept)}); !errors.Is(err, share.ErrInvalidRecordState) {
		t.Fatalf("acknowledging after the lock lapsed: %v", err)
	}
}

func TestValidateAcks(t *testing.T) {
	bad := map[string][]share.AckBatch{
		"last before first": {ack(5, 4, share.AckAccept)},
		"overlap":           {ack(1, 5, share.AckAccept), ack(5, 6, share.AckAccept)},
		"out of order":      {ack(7, 8, share.AckAccept), ack(1, 2, share.AckAccept)},
		"types length":      {{First: 1, Last: 3, Types: []share.AckType{1, 1}}},
		"unknown type":      {ack(1, 1, 9)},
		"renew not allowed": {ack(1, 1, share.AckRenew)},
		"no types":          {{First: 1, Last: 1}},
	}
	for name, acks := range bad {
		if err := share.ValidateAcks(acks, false); !errors.Is(err, share.ErrInvalidAcks) {
			t.Errorf("%s: %v, want ErrInvalidAcks", name, err)
		}
	}
	good := []share.AckBatch{ack(1, 2, share.AckAccept), {First: 4, Last: 6, Types: []share.AckType{0, 2, 3}}, ack(7, 7, share.AckRenew)}
	if err := share.ValidateAcks(good, true); err != nil {
		t.Fatal(err)
	}
}

func TestRenewKeepsTheLock(t *testing.T) {
	p, clk := newPartition(0)
	p.Acquire("a", clk.Now(), batches(0, 1), 0, share.BatchOptimized)
	clk.Advance(lock - time.Second)
	mustAck(t, p, clk, "a", ack(0, 0, share.AckRenew))
	clk.Advance(lock - time.Second)
	if p.Expire(clk.Now()) {
		t.Fatal("a renewed lock lapsed at its first deadline")
	}
	wantState(t, p, 0, share.Acquired, 1)
}

func TestRecordLockLimitBoundsTheWindow(t *testing.T) {
	p, clk := newPartition(0) // 10 record locks
	got := p.Acquire("a", clk.Now(), batches(0, 4, 4, 4), 0, share.BatchOptimized)
	wantRanges(t, got, share.AcquiredRange{First: 0, Last: 9, Deliveries: 1})
	if p.CanAcquire(100) {
		t.Fatal("a full window can acquire")
	}
	// Accepting records past the start frees nothing: the start holds.
	mustAck(t, p, clk, "a", ack(1, 9, share.AckAccept))
	wantRanges(t, p.Acquire("b", clk.Now(), batches(10, 2), 0, share.BatchOptimized))
	mustAck(t, p, clk, "a", ack(0, 0, share.AckAccept))
	wantRanges(t, p.Acquire("b", clk.Now(), batches(10, 2), 0, share.BatchOptimized), share.AcquiredRange{First: 10, Last: 11, Deliveries: 1})
}

func TestAcquireModesAndMaxRecords(t *testing.T) {
	p, clk := newPartition(0)
	// Batch-optimised finishes the batch it started.
	wantRanges(t, p.Acquire("a", clk.Now(), batches(0, 3, 3), 2, share.BatchOptimized), share.AcquiredRange{First: 0, Last: 2, Deliveries: 1})
	// Record-limit stops inside a batch.
	wantRanges(t, p.Acquire("b", clk.Now(), batches(3, 3), 2, share.RecordLimit), share.AcquiredRange{First: 3, Last: 4, Deliveries: 1})
}

func TestGapsAndControlBatchesAreArchived(t *testing.T) {
	p, clk := newPartition(0)
	in := []share.Batch{{First: 0, Last: 1}, {First: 4, Last: 4, Control: true}, {First: 5, Last: 5}}
	got := p.Acquire("a", clk.Now(), in, 0, share.BatchOptimized)
	wantRanges(t, got, share.AcquiredRange{First: 0, Last: 1, Deliveries: 1}, share.AcquiredRange{First: 5, Last: 5, Deliveries: 1})
	for _, off := range []int64{2, 3, 4} {
		wantState(t, p, off, share.Archived, 0)
	}
	mustAck(t, p, clk, "a", ack(0, 1, share.AckAccept), ack(5, 5, share.AckAccept))
	if p.Start() != 6 {
		t.Fatalf("start %d, want 6 past the archived gap and marker", p.Start())
	}
}

func TestLogStartMovesTheShareStart(t *testing.T) {
	p, clk := newPartition(0)
	p.Acquire("a", clk.Now(), batches(0, 5), 0, share.BatchOptimized)
	p.AdvanceLogStart(3)
	wantWindow(t, p, 3, 5)
	p.AdvanceLogStart(8)
	wantWindow(t, p, 8, 8)
}

func TestReleaseMember(t *testing.T) {
	p, clk := newPartition(0)
	p.Acquire("a", clk.Now(), batches(0, 2), 0, share.BatchOptimized)
	p.Acquire("b", clk.Now(), batches(2, 2), 0, share.BatchOptimized)
	if !p.ReleaseMember("a") {
		t.Fatal("nothing released")
	}
	wantState(t, p, 0, share.Available, 1)
	wantState(t, p, 2, share.Acquired, 1)
}
