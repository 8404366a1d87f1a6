package txn

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// endTxn ends id's transaction with EndTxn v4.
func endTxn(ctx context.Context, t *testing.T, c *Coordinator, id string, pid int64, epoch int16, commit bool) {
	t.Helper()
	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 4
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, commit
	if code := c.EndTxn(ctx, end).ErrorCode; code != 0 {
		t.Fatalf("end %s: %s", id, errName(code))
	}
}

// snapshotOf is the snapshot of id, and a description for WaitFor.
func snapshotOf(c *Coordinator, id string) (TxnSnapshot, string) {
	for _, s := range c.Snapshot() {
		if s.TransactionalID == id {
			return s, fmt.Sprintf("%s pending=%v markers=%+v", s.State, s.MarkersPending, s.Markers)
		}
	}
	return TxnSnapshot{}, id + " not listed"
}

// TestMarkerOutcomeCommit: a commit over two partitions shows both COMMIT
// markers written, once each, at the coordinator's clock; the next end
// replaces them; a new coordinator knows none (they are not persisted).
func TestMarkerOutcomeCommit(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx := testkit.Context(t)
	pid, epoch := beginTxn(ctx, t, e.c, "t1", 0, 1)
	if s, _ := snapshotOf(e.c, "t1"); len(s.Markers) != 0 {
		t.Fatalf("markers before the first end: %+v", s.Markers)
	}
	endTxn(ctx, t, e.c, "t1", pid, epoch, true)
	var s TxnSnapshot
	testkit.WaitFor(t, "the commit", func() (bool, string) {
		var desc string
		s, desc = snapshotOf(e.c, "t1")
		return s.State == StateCompleteCommit.String() && !s.MarkersPending, desc
	})
	now := e.clock.Now()
	want := []MarkerOutcome{
		{TopicPartition: TopicPartition{"foo", 0}, Commit: true, State: MarkerWritten, Attempts: 1, WrittenAt: now},
		{TopicPartition: TopicPartition{"foo", 1}, Commit: true, State: MarkerWritten, Attempts: 1, WrittenAt: now},
	}
	if fmt.Sprint(s.Markers) != fmt.Sprint(want) {
		t.Fatalf("markers of the commit:\n got %+v\nwant %+v", s.Markers, want)
	}

	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version = 3
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = "t1", pid, epoch
	add.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "bar", Partitions: []int32{0}}}
	if code := e.c.AddPartitionsToTxn(ctx, add).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("add: %s", errName(code))
	}
	if s, _ := snapshotOf(e.c, "t1"); len(s.Markers) != 2 {
		t.Fatalf("the last end's markers are kept while the next transaction runs: %+v", s.Markers)
	}
	e.clock.Advance(time.Second)
	endTxn(ctx, t, e.c, "t1", pid, epoch, false)
	testkit.WaitFor(t, "the abort", func() (bool, string) {
		var desc string
		s, desc = snapshotOf(e.c, "t1")
		return s.State == StateCompleteAbort.String() && !s.MarkersPending, desc
	})
	want = []MarkerOutcome{{TopicPartition: TopicPartition{"bar", 0}, State: MarkerWritten, Attempts: 1, WrittenAt: e.clock.Now()}}
	if fmt.Sprint(s.Markers) != fmt.Sprint(want) {
		t.Fatalf("markers of the abort:\n got %+v\nwant %+v", s.Markers, want)
	}

	e.restart()
	if s, _ := snapshotOf(e.c, "t1"); s.State != StateCompleteAbort.String() || len(s.Markers) != 0 {
		t.Fatalf("after a restart: %+v", s)
	}
}

// TestMarkerOutcomeUnavailable: while a partition's leader is unavailable
// its marker stays pending with the last error and counts its attempts,
// a fenced partition's is failed at once, and the others are written;
// once the leader is back the marker is written and the transaction
// completes.
func TestMarkerOutcomeUnavailable(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx := testkit.Context(t)
	errDown := errors.New("foo-1: NOT_LEADER_OR_FOLLOWER")
	e.markers.mu.Lock()
	e.markers.down = map[TopicPartition]error{{"foo", 1}: errDown}
	e.markers.fenced = map[TopicPartition]bool{{"foo", 2}: true}
	e.markers.mu.Unlock()
	pid, epoch := beginTxn(ctx, t, e.c, "t1", 0, 1, 2)
	endTxn(ctx, t, e.c, "t1", pid, epoch, true)

	var s TxnSnapshot
	testkit.WaitFor(t, "foo-1 retried", func() (bool, string) {
		var desc string
		s, desc = snapshotOf(e.c, "t1")
		return len(s.Markers) == 3 && s.Markers[1].Attempts >= 3, desc
	})
	if s.State != StatePrepareCommit.String() || !s.MarkersPending {
		t.Fatalf("with a marker pending: %s pending=%v", s.State, s.MarkersPending)
	}
	if m := s.Markers[0]; m.State != MarkerWritten || m.Attempts != 1 || m.Error != "" || m.WrittenAt.IsZero() || !m.Commit {
		t.Fatalf("foo-0: %+v", m)
	}
	if m := s.Markers[1]; m.State != MarkerPending || m.Error != errDown.Error() || !m.WrittenAt.IsZero() || !m.Commit {
		t.Fatalf("foo-1, its leader unavailable: %+v", m)
	}
	if m := s.Markers[2]; m.State != MarkerFailed || m.Attempts != 1 || m.Error != "foo-2: "+ErrMarkerFenced.Error() || !m.WrittenAt.IsZero() {
		t.Fatalf("foo-2, fenced: %+v", m)
	}

	e.markers.mu.Lock()
	e.markers.down = nil
	e.markers.mu.Unlock()
	testkit.WaitFor(t, "the commit", func() (bool, string) {
		var desc string
		s, desc = snapshotOf(e.c, "t1")
		return s.State == StateCompleteCommit.String() && !s.MarkersPending, desc
	})
	if m := s.Markers[1]; m.State != MarkerWritten || m.Attempts < 4 || m.Error != errDown.Error() || m.WrittenAt.IsZero() {
		t.Fatalf("foo-1 once its leader is back: %+v", m)
	}
	if m := s.Markers[2]; m.State != MarkerFailed || m.Attempts != 1 {
		t.Fatalf("foo-2 is not retried: %+v", m)
	}
}
