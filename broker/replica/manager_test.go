package replica

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/vfs"
)

func testConfig(t *testing.T, addr func(int32) (string, bool)) Config {
	return Config{NodeID: 1, Addr: addr, Logger: testkit.Logger(t, 0), FetchMaxBytes: 1 << 20, ResponseMaxBytes: 1 << 20,
		MaxWait: 50 * time.Millisecond, Backoff: 10 * time.Millisecond, Timeout: time.Second, MaxFrame: 1 << 20}
}

// newFollower is a replica of topic/0 on node 1 following leader.
func newFollower(t *testing.T, topic string, leader int32) *partition.Partition {
	t.Helper()
	m, err := log.OpenManager(vfs.NewMem(), "/data", log.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	l, err := m.Create(topic, 0, [16]byte{1}, log.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := partition.New(topic, 0, [16]byte{1}, l, partition.Options{ReplicaID: 1})
	p.SetLeaderState(partition.LeaderState{Leader: leader, Epoch: 3, Replicas: []int32{leader, 1}, ISR: []int32{leader, 1}})
	return p
}

// One fetcher per leader: partitions of one leader share it, a partition
// moved to another leader moves to that leader's fetcher, and a fetcher
// left with nothing stops. Close stops the rest and Follow then does
// nothing.
func TestManagerFetcherPerLeader(t *testing.T) {
	m := New(testConfig(t, func(int32) (string, bool) { return "", false }))
	a, b := newFollower(t, "a", 2), newFollower(t, "b", 2)
	m.Follow(a, 2)
	m.Follow(b, 2)
	m.Follow(b, 2) // same leader and epoch: nothing changes
	if parts, fetchers := m.Following(); parts != 2 || fetchers != 1 {
		t.Fatalf("two partitions of leader 2: %d partitions, %d fetchers", parts, fetchers)
	}
	m.Follow(b, 3)
	if parts, fetchers := m.Following(); parts != 2 || fetchers != 2 {
		t.Fatalf("b moved to leader 3: %d partitions, %d fetchers", parts, fetchers)
	}
	m.Unfollow(a)
	if parts, fetchers := m.Following(); parts != 1 || fetchers != 1 {
		t.Fatalf("a unfollowed: %d partitions, %d fetchers", parts, fetchers)
	}
	m.Close()
	m.Follow(a, 2)
	if parts, fetchers := m.Following(); parts != 0 || fetchers != 0 {
		t.Fatalf("after Close: %d partitions, %d fetchers", parts, fetchers)
	}
}

// A fetcher whose leader does not answer gives up on the request within
// replica.socket.timeout.ms beyond the fetch wait, reconnects, and is
// stopped at once by Close however long its request has left.
func TestFetcherBoundedByTimeouts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close() // read nothing, answer nothing
		}
	}()
	cfg := testConfig(t, func(int32) (string, bool) { return ln.Addr().String(), true })
	cfg.Timeout = 100 * time.Millisecond
	m := New(cfg)
	m.Follow(newFollower(t, "silent", 2), 2)
	testkit.WaitFor(t, "a second connection after the first timed out", func() (bool, string) {
		return accepted.Load() >= 2, ""
	})
	cfg.Timeout = time.Hour
	m2 := New(cfg)
	m2.Follow(newFollower(t, "stuck", 2), 2)
	n := accepted.Load()
	testkit.WaitFor(t, "the connection of the stuck fetcher", func() (bool, string) { return accepted.Load() > n, "" })
	done := make(chan struct{})
	go func() {
		m2.Close()
		m.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(testkit.WaitTimeout):
		t.Fatal("Close did not stop a fetcher waiting for its leader")
	}
}

// OFFSET_OUT_OF_RANGE sends a partition back to truncation at once; a
// second one in a row (truncation did not help: the follower is below the
// leader's log start) asks the leader's log start, and the log restarts
// there (Kafka's truncateFullyAndStartAt). Any other answer ends the run.
func TestOutOfRangeTwiceRestartsAtTheLeadersLogStart(t *testing.T) {
	f := newFetcher(testConfig(t, nil), 2)
	fp := &followed{p: newFollower(t, "oor", 2), epoch: 3}
	k := key{"oor", 0}
	f.mu.parts[k] = fp
	oor := kmsg.NewFetchResponseTopicPartition()
	oor.ErrorCode = kerr.OffsetOutOfRange.Code
	f.apply(k, fp, &oor)
	if !fp.truncate || fp.restart || !fp.retryAt.IsZero() {
		t.Fatalf("first OFFSET_OUT_OF_RANGE: truncate %v, restart %v, held back until %v; want truncation now", fp.truncate, fp.restart, fp.retryAt)
	}
	fp.truncate = false // as truncation leaves it
	f.apply(k, fp, &oor)
	if !fp.restart {
		t.Fatal("second OFFSET_OUT_OF_RANGE: the leader's log start is not asked for")
	}
	if restart, _, _, _ := f.ready(time.Now()); restart[k] != fp {
		t.Fatal("second OFFSET_OUT_OF_RANGE: not ready to restart")
	}
	// The leader's log start is past the follower's end: restart there.
	f.restartTo(k, fp, 0, 500)
	if fp.restart || fp.truncate || fp.p.LogEndOffset() != 500 || fp.p.LogStartOffset() != 500 || fp.p.HighWatermark() != 500 {
		t.Fatalf("after the restart: restart %v truncate %v, log %d..%d, hw %d; want an empty log at 500",
			fp.restart, fp.truncate, fp.p.LogStartOffset(), fp.p.LogEndOffset(), fp.p.HighWatermark())
	}
	// A log start not past the follower's end sends it back to
	// truncation.
	fp.restart = true
	f.restartTo(k, fp, 0, 200)
	if fp.restart || !fp.truncate || fp.p.LogEndOffset() != 500 {
		t.Fatalf("a log start below the end: restart %v truncate %v, log end %d", fp.restart, fp.truncate, fp.p.LogEndOffset())
	}
	ok := kmsg.NewFetchResponseTopicPartition()
	fp.truncate, fp.retryAt = false, time.Time{}
	f.apply(k, fp, &ok)
	f.apply(k, fp, &oor)
	if fp.restart {
		t.Fatal("an OFFSET_OUT_OF_RANGE after a good answer asked for the log start")
	}
}

// A partition error holds the partition back 10 ms at first, doubling
// with each error in a row up to replica.fetch.backoff.ms, and a good
// answer starts it over: a leader that has not yet applied a new topic
// or epoch applies it within milliseconds, and a whole second's wait
// held a fresh cluster's first acks=all produce that long.
func TestPartitionErrorsBackOffFromTenMilliseconds(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.Backoff = time.Second
	f := newFetcher(cfg, 2)
	fp := &followed{p: newFollower(t, "backoff", 2), epoch: 3}
	k := key{"backoff", 0}
	f.mu.parts[k] = fp
	notLeader := kmsg.NewFetchResponseTopicPartition()
	notLeader.ErrorCode = kerr.NotLeaderForPartition.Code
	// check applies an error and wants the partition held back want
	// from when the error was taken, somewhere within the call.
	check := func(what string, want time.Duration) {
		t.Helper()
		before := time.Now()
		f.apply(k, fp, &notLeader)
		after := time.Now()
		if fp.retryAt.Before(before.Add(want)) || fp.retryAt.After(after.Add(want)) {
			t.Fatalf("%s: held back until %v after the error, want %v", what, fp.retryAt.Sub(before), want)
		}
	}
	for i, want := range []time.Duration{10, 20, 40, 80, 160, 320, 640, 1000, 1000} {
		check(fmt.Sprintf("error %d in a row", i+1), want*time.Millisecond)
	}
	ok := kmsg.NewFetchResponseTopicPartition()
	f.apply(k, fp, &ok)
	check("the first error after a good answer", 10*time.Millisecond)
}
