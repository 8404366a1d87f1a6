package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/events"
)

// TestSecurityEventsBounded checks the bounds of the security events at
// chosen times: repeats of one kind counted into one event at the end of
// its window, each event standing for itself and its repeats; distinct
// kinds cut to the budget, the suppressed counted on the next event
// recorded; a repeat whose window ended with the budget spent kept for a
// later flush, not lost; and the kinds remembered bounded.
func TestSecurityEventsBounded(t *testing.T) {
	var s securityEvents
	t0 := time.Unix(1000, 0)
	ev := func(i int) events.Event {
		return events.Event{Kind: events.AuthorizationDenied, Detail: map[string]any{"n": i}}
	}
	key := func(name string) securityKey {
		return securityKey{kind: events.AuthorizationDenied, principal: "User:a", name: name}
	}
	recorded := 0
	for i := range 1000 {
		if _, ok := s.admit(key("t"), ev(i), t0.Add(time.Duration(i)*time.Millisecond)); ok {
			recorded++
		}
	}
	if recorded != 1 {
		t.Fatalf("1000 repeats within the window recorded %d events, want 1", recorded)
	}
	if got := s.flush(t0.Add(securityWindow - time.Millisecond)); len(got) != 0 {
		t.Fatalf("a flush before the window ended: %v", got)
	}
	got := s.flush(t0.Add(securityWindow))
	if len(got) != 1 || got[0].Detail["repeats"] != int64(998) || got[0].Detail["n"] != 999 {
		t.Fatalf("the window's end: %v, want the last repeat with repeats=998", got)
	}

	// Distinct kinds: the budget's burst less the two events above.
	t1 := t0.Add(time.Minute) // the budget refilled
	recorded = 0
	for i := range 200 {
		if _, ok := s.admit(key(fmt.Sprint("other-", i)), ev(i), t1); ok {
			recorded++
		}
	}
	if recorded != securityBurst {
		t.Fatalf("200 distinct denials at once recorded %d events, want %d", recorded, securityBurst)
	}
	// A repeat of one recorded; at its window's end the budget refilled
	// ten events, and distinct denials spend them first: the repeat
	// waits for the next flush with budget, which records it with the
	// count of the suppressed.
	s.admit(key("other-0"), ev(-1), t1.Add(time.Millisecond))
	t2 := t1.Add(securityWindow)
	var first []events.Event
	for i := range 20 {
		if e, ok := s.admit(key(fmt.Sprint("more-", i)), ev(i), t2); ok {
			first = append(first, e)
		}
	}
	if len(first) != 10 || first[0].Detail["suppressed"] != int64(200-securityBurst) {
		t.Fatalf("20 distinct denials with ten of budget: %d events, the first %v; want 10, suppressed=%d", len(first), first[0].Detail, 200-securityBurst)
	}
	if got := s.flush(t2); len(got) != 0 {
		t.Fatalf("a flush with the budget spent: %v", got)
	}
	got = s.flush(t2.Add(securityRefill))
	if len(got) != 1 || got[0].Detail["n"] != -1 || got[0].Detail["repeats"] != nil || got[0].Detail["suppressed"] != int64(10) {
		t.Fatalf("the flush after: %v, want other-0's repeat alone, suppressed=10", got)
	}
	if n := len(s.mu.seen); n > maxSecurityKeys {
		t.Fatalf("%d kinds remembered, more than %d", n, maxSecurityKeys)
	}
}
