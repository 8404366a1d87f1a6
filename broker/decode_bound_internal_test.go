package broker

import (
	"runtime"
	"testing"
)

// distinct's memory grows with the distinct keys, not the items: a
// request naming one topic a million times, which the request pool
// admits for what it decodes into, does not make its handler allocate as
// much again to dedupe it (issue 26).
func TestDistinctAllocatesForDistinctKeys(t *testing.T) {
	items := make([]string, 1<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := distinct(items, identity[string])
	runtime.ReadMemStats(&after)
	if len(out) != 1 {
		t.Fatalf("%d distinct items, want 1", len(out))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Fatalf("deduping %d copies of one item allocated %d bytes", len(items), got)
	}
}
