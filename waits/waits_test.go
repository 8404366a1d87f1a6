package waits

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
)

// fakeWatcher is a Watcher on a clock the test moves, writing to out.
func fakeWatcher(o Options) (*Watcher, *testkit.Clock, *testkit.Buffer) {
	var out testkit.Buffer
	clock := testkit.NewClock(time.Unix(1000, 0))
	wt := New(&out, o)
	wt.now = clock.Now
	wt.epoch = clock.Now()
	wt.setClock(clock.Now())
	return wt, clock, &out
}

// TestReportsGroupAndRepeat: records of two partitions waiting for the
// same reason are one line, reported once the wait passes Threshold and a
// look (here at each step) saw the metadata, then as the wait doubles, at
// least every maxRepeat; a delivery ends the wait, and OnGiveUp is called
// once the wait passes GiveUp.
func TestReportsGroupAndRepeat(t *testing.T) {
	gaveUp := make(chan struct{}, 2)
	wt, clock, out := fakeWatcher(Options{AcksAll: true, GiveUp: 40 * time.Second, OnGiveUp: func() { gaveUp <- struct{}{} }})
	h := hooks{wt}
	var rs []*kgo.Record
	for _, p := range []int32{0, 1, 1} {
		r := &kgo.Record{Topic: "orders", Partition: p}
		h.OnProduceRecordBuffered(r)
		h.OnProduceRecordPartitioned(r, 0)
		rs = append(rs, r)
	}
	h.OnBrokerConnect(kgo.BrokerMetadata{NodeID: 1, Host: "127.0.0.1", Port: 9093}, 0, nil, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})

	var reported []string
	step := func(to time.Duration) {
		t.Helper()
		clock.Advance(to - clock.Now().Sub(time.Unix(1000, 0)))
		if topics := wt.report(); len(topics) > 0 {
			// What a look at the metadata would find.
			wt.mu.Lock()
			wt.look = look{at: clock.Now(), brokers: map[int32]string{1: "127.0.0.1:9093"}, topicErrs: map[string]error{"orders": nil},
				parts: map[topicPartition]partState{{"orders", 0}: {leader: 1, isr: []int32{1}}, {"orders", 1}: {leader: 1, isr: []int32{1}}}}
			wt.mu.Unlock()
		}
		h.OnBrokerConnect(kgo.BrokerMetadata{NodeID: 1, Host: "127.0.0.1", Port: 9093}, 0, nil, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})
	}
	for at := time.Duration(0); at <= 45*time.Second; at += 100 * time.Millisecond {
		step(at)
	}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		reported = append(reported, strings.Fields(l)[2])
	}
	want := []string{"2.2s", "4.4s", "8.8s", "17.6s", "32.6s"}
	if fmt.Sprint(reported) != fmt.Sprint(want) {
		t.Errorf("reported at %v, want %v first:\n%s", reported, want, out.String())
	}
	line := "klog: waiting 2.2s for orders/0, orders/1 (3 records): leader 1 at 127.0.0.1:9093 unreachable: connection refused\n"
	if !strings.HasPrefix(out.String(), line) {
		t.Errorf("first line:\n%s\nwant\n%s", out.String(), line)
	}
	select {
	case <-gaveUp:
	case <-time.After(testkit.WaitTimeout):
		t.Fatal("OnGiveUp not called")
	}
	if why := wt.Reason("orders", 1); !strings.HasPrefix(why, "leader 1 at") {
		t.Errorf("Reason = %q", why)
	}

	before := len(out.String())
	h.OnProduceRecordUnbuffered(rs[1], nil)
	if got, want := out.String()[before:], "klog: orders/1 delivered again after 45.0s\n"; got != want {
		t.Errorf("end of the wait: %q, want %q", got, want)
	}
}

// TestPartReasons: what the metadata and the brokers' failures say.
func TestPartReasons(t *testing.T) {
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name   string
		part   partState
		minISR int
		down   []string
		want   string
	}{
		{"no leader", partState{leader: -1, err: kerr.LeaderNotAvailable}, 2, nil, "no leader (LEADER_NOT_AVAILABLE)"},
		{"few in sync", partState{leader: 0, isr: []int32{0}}, 2, nil, "NOT_ENOUGH_REPLICAS (min.insync.replicas 2, in sync 1: 0)"},
		{"leader down", partState{leader: 1, isr: []int32{1, 0}}, 2, []string{"h:1"}, "leader 1 at h:1 unreachable: connection refused"},
		{"followers down", partState{leader: 0, isr: []int32{2, 0, 1}}, 2, []string{"h:1", "h:2"}, "leader 0 waits for in-sync replicas 2,1 (unreachable: connection refused)"},
		{"slow", partState{leader: 0, isr: []int32{1, 0}}, 2, nil, "leader 0 at h:0 has not acknowledged (in sync 0,1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wt, _, _ := fakeWatcher(Options{AcksAll: true})
			wt.minISR["t"] = tc.minISR
			for _, addr := range tc.down {
				wt.brokers[addr] = &brokerWait{since: wt.now(), last: wt.now(), err: refused}
			}
			wt.look = look{at: wt.now(), brokers: map[int32]string{0: "h:0", 1: "h:1", 2: "h:2"},
				topicErrs: map[string]error{"t": nil}, parts: map[topicPartition]partState{{"t", 0}: tc.part}}
			if got := wt.partReason(topicPartition{"t", 0}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRideThrough: a group member rides through lost sessions, except for
// errors retrying cannot fix, and through nothing else.
func TestRideThrough(t *testing.T) {
	dial := fmt.Errorf("unable to dial: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&kgo.ErrGroupSession{Err: dial}, true},
		{&kgo.ErrGroupSession{Err: kerr.NotCoordinator}, true},
		{&kgo.ErrGroupSession{Err: kerr.CoordinatorNotAvailable}, true},
		{&kgo.ErrGroupSession{Err: kerr.GroupAuthorizationFailed}, false},
		{&kgo.ErrGroupSession{Err: kerr.InvalidGroupID}, false},
		{kerr.TopicAuthorizationFailed, false},
		{errors.New("other"), false},
	} {
		if got := RideThrough(tc.err); got != tc.want {
			t.Errorf("RideThrough(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestCountsConcurrent: records buffered, partitioned and finished by
// several goroutines at once, as the producer and its sinks do, leave
// nothing pending, and a record that failed before it was partitioned is
// taken off its topic.
func TestCountsConcurrent(t *testing.T) {
	wt, _, _ := fakeWatcher(Options{})
	h := hooks{wt}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				r := &kgo.Record{Topic: fmt.Sprint("t", g%2), Partition: int32(i % 7)}
				h.OnProduceRecordBuffered(r)
				if i%10 == 0 {
					// On a partition no record of the test is given.
					r.Partition = 7
					h.OnProduceRecordUnbuffered(r, errors.New("failed"))
					continue
				}
				h.OnProduceRecordPartitioned(r, 0)
				h.OnProduceRecordUnbuffered(r, nil)
			}
		})
	}
	wg.Wait()
	wt.mu.Lock()
	defer wt.mu.Unlock()
	parts := 0
	wt.eachPart(func(tp topicPartition, pw *partWait) {
		parts++
		if n, _ := pw.load(); n != 0 {
			t.Errorf("%s: %d pending", tp, n)
		}
	})
	if parts != 2*8 {
		t.Errorf("%d partitions counted, want 16", parts)
	}
}

// BenchmarkHooks: what the hooks cost one produced record, buffered,
// partitioned and delivered, on one of 16 partitions.
func BenchmarkHooks(b *testing.B) {
	wt := New(io.Discard, Options{})
	h := hooks{wt}
	rs := make([]*kgo.Record, 16)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: "orders", Partition: int32(i)}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := rs[i%len(rs)]
		h.OnProduceRecordBuffered(r)
		h.OnProduceRecordPartitioned(r, 0)
		h.OnProduceRecordUnbuffered(r, nil)
	}
}
