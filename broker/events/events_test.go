package events_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/events"
)

func seqs(evs []events.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

// TestBounds: a full ring keeps its last capacity events, and a reader
// behind them is told how many it missed.
func TestBounds(t *testing.T) {
	r := events.New(4, nil)
	if p := r.Since(0, 0); len(p.Events) != 0 || p.First != 0 || p.Last != 0 || p.Missed != 0 {
		t.Fatalf("empty ring: %+v", p)
	}
	for i := range 10 {
		r.Append(events.Event{Kind: events.SegmentRoll, Topic: "t", Partition: int32(i)})
	}
	p := r.Since(0, 0)
	if got := fmt.Sprint(seqs(p.Events)); got != "[7 8 9 10]" || p.First != 7 || p.Last != 10 || p.Missed != 6 || p.More {
		t.Fatalf("since 0: %s %+v", got, p)
	}
	if p.Events[0].Partition != 6 || p.Events[0].Time.IsZero() {
		t.Fatalf("oldest held: %+v", p.Events[0])
	}
	p = r.Since(7, 2)
	if got := fmt.Sprint(seqs(p.Events)); got != "[8 9]" || p.Missed != 0 || !p.More {
		t.Fatalf("since 7 limit 2: %s %+v", got, p)
	}
	if p = r.Since(10, 0); len(p.Events) != 0 || p.Missed != 0 || p.Last != 10 {
		t.Fatalf("since the last: %+v", p)
	}
	if p = r.Since(99, 0); len(p.Events) != 0 || p.Last != 10 {
		t.Fatalf("since past the last: %+v", p)
	}
}

// TestChanged: the channel of a waiter is closed by the next append, and
// is closed at once for a waiter behind.
func TestChanged(t *testing.T) {
	r := events.New(8, nil)
	ch := r.Changed(0)
	select {
	case <-ch:
		t.Fatal("closed before any append")
	default:
	}
	r.Append(events.Event{Kind: events.Cleaning})
	select {
	case <-ch:
	default:
		t.Fatal("not closed by the append")
	}
	select {
	case <-r.Changed(0):
	default:
		t.Fatal("a waiter behind the ring is not woken at once")
	}
	select {
	case <-r.Changed(1):
		t.Fatal("a waiter at the last event is woken")
	default:
	}
}

// TestClip: long strings are cut, so that a full ring's memory is bounded.
func TestClip(t *testing.T) {
	r := events.New(1, nil)
	long := strings.Repeat("é", 1000)
	r.Append(events.Event{Kind: events.Rebalance, Group: long, Detail: map[string]any{"reason": long}})
	e := r.Since(0, 0).Events[0]
	if len(e.Group) > 260 || !strings.HasSuffix(e.Group, "…") || len(e.Detail["reason"].(string)) > 260 {
		t.Fatalf("group of %d bytes, reason of %d", len(e.Group), len(e.Detail["reason"].(string)))
	}
}

// TestConcurrent: writers and waiting readers at once (run with -race);
// every event gets its own sequence number and a reader following the
// ring sees each one exactly once, or counts it missed.
func TestConcurrent(t *testing.T) {
	const writers, each = 4, 500
	r := events.New(64, func() time.Time { return time.Unix(0, 0) })
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r.Append(events.Event{Kind: events.SegmentRoll, Partition: int32(w*each + i)})
			}
		})
	}
	var seen, missed uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var last uint64
		for last < writers*each {
			<-r.Changed(last)
			p := r.Since(last, 16)
			missed += p.Missed
			for _, e := range p.Events {
				if e.Seq != last+1+p.Missed && e.Seq != last+1 {
					t.Errorf("event %d after %d (missed %d)", e.Seq, last, p.Missed)
				}
				p.Missed = 0
				last = e.Seq
				seen++
			}
		}
	}()
	wg.Wait()
	<-done
	if seen+missed != writers*each {
		t.Fatalf("seen %d + missed %d, want %d", seen, missed, writers*each)
	}
	if p := r.Since(0, 0); p.Last != writers*each || len(p.Events) != 64 {
		t.Fatalf("after: last %d, %d held", p.Last, len(p.Events))
	}
}

// TestWaiting: a reader waits from Changed until the next Append.
func TestWaiting(t *testing.T) {
	r := events.New(2, nil)
	if r.Waiting() {
		t.Fatal("waiting before Changed")
	}
	r.Changed(0)
	if !r.Waiting() {
		t.Fatal("not waiting after Changed")
	}
	r.Append(events.Event{Kind: events.Cleaning})
	if r.Waiting() {
		t.Fatal("waiting after Append")
	}
}
