package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
)

// A request time falls in the first bucket whose bound it does not pass;
// the buckets are cumulative and the count holds the ones past every
// bound.
func TestRequestTimesBuckets(t *testing.T) {
	var r requestTimes
	for _, d := range []time.Duration{0, time.Millisecond, 1500 * time.Microsecond, 40 * time.Second} {
		r.observe(d)
	}
	s := r.snapshot("Produce")
	bounds := RequestTimeBucketsMs()
	if bounds[0] != 0.5 || bounds[1] != 1 || bounds[2] != 2.5 || bounds[len(bounds)-1] != 30000 {
		t.Fatalf("bounds %v", bounds)
	}
	want := []uint64{1, 2, 3}
	for range len(bounds) - 3 {
		want = append(want, 3)
	}
	if s.Request != "Produce" || s.Count != 4 || s.SumMs != 40002.5 || !slices.Equal(s.Buckets, want) {
		t.Fatalf("snapshot %+v, want buckets %v", s, want)
	}
}

// Fetch is counted as itself and again by who sent it.
func TestRequestDoneSplitsFetch(t *testing.T) {
	var s nodeStats
	follower := kmsg.NewPtrFetchRequest()
	follower.ReplicaID = 1
	consumer := kmsg.NewPtrFetchRequest()
	consumer.ReplicaID = -1
	s.requestDone(kmsg.Fetch.Int16(), follower, time.Millisecond)
	s.requestDone(kmsg.Fetch.Int16(), consumer, time.Millisecond)
	s.requestDone(kmsg.Produce.Int16(), kmsg.NewPtrProduceRequest(), time.Millisecond)
	if s.requests[kmsg.Fetch].snapshot("").Count != 2 || s.fetchFollower.snapshot("").Count != 1 ||
		s.fetchConsumer.snapshot("").Count != 1 || s.requests[kmsg.Produce].snapshot("").Count != 1 {
		t.Fatal("fetches not counted as Fetch and by sender")
	}
}

// A leader counts an ISR change at one leader epoch once, as a shrink, an
// expand or both; nothing else counts.
func TestISRChanged(t *testing.T) {
	st := func(leader, epoch int32, isr ...int32) partition.LeaderState {
		return partition.LeaderState{Leader: leader, Epoch: epoch, ISR: isr}
	}
	for _, tc := range []struct {
		name             string
		prev, next       partition.LeaderState
		shrinks, expands uint64
	}{
		{"shrink", st(0, 3, 0, 1, 2), st(0, 3, 0, 2), 1, 0},
		{"two leave at once", st(0, 3, 0, 1, 2), st(0, 3, 0), 1, 0},
		{"expand", st(0, 3, 0), st(0, 3, 0, 1), 0, 1},
		{"one leaves, one joins", st(0, 3, 0, 1), st(0, 3, 0, 2), 1, 1},
		{"same ISR", st(0, 3, 0, 1), st(0, 3, 1, 0), 0, 0},
		{"new epoch", st(0, 3, 0, 1, 2), st(0, 4, 0), 0, 0},
		{"becomes leader", st(1, 3, 0, 1, 2), st(0, 4, 0), 0, 0},
		{"first state", st(-1, -1), st(0, 0, 0, 1, 2), 0, 0},
		{"follower", st(1, 3, 0, 1, 2), st(1, 3, 1), 0, 0},
	} {
		var s nodeStats
		s.isrChanged(0, tc.prev, tc.next)
		if s.isrShrinks.Load() != tc.shrinks || s.isrExpands.Load() != tc.expands {
			t.Errorf("%s: %d shrinks %d expands, want %d %d", tc.name, s.isrShrinks.Load(), s.isrExpands.Load(), tc.shrinks, tc.expands)
		}
	}
}

// BenchmarkRequestCounters is what every request and every produced
// partition pays for the metrics: a dispatch's timing and a topic's
// counters.
func BenchmarkRequestCounters(b *testing.B) {
	var s nodeStats
	req := kmsg.NewPtrProduceRequest()
	for b.Loop() {
		start := time.Now()
		s.produced("orders", 1024, 10)
		s.requestDone(kmsg.Produce.Int16(), req, time.Since(start))
	}
}
