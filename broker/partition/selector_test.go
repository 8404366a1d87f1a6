package partition

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
)

// TestReadReplicas: the leader offers a consumer only the followers in
// the ISR whose log holds the fetch offset (Kafka's
// findPreferredReadReplica), each with its log end and time since caught
// up; a follower offers nothing.
func TestReadReplicas(t *testing.T) {
	clk := testkit.NewClock(time.UnixMilli(1_700_000_000_000))
	p := newReplicatedPartition(t, 1, clk)
	p.SetLeaderState(LeaderState{Leader: 1, Epoch: 3, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3}})
	for range 4 {
		if _, err := p.Append(batchAt(clk, 1)); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	for _, f := range []struct{ id, end, start int64 }{{2, 4, 0}, {3, 2, 1}, {4, 4, 0}} {
		if _, err := p.UpdateFollower(int32(f.id), f.end, f.start, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(250 * time.Millisecond)
	for _, tc := range []struct {
		offset int64
		want   []int32
	}{
		{0, []int32{2}},    // 3's log starts at 1; 4 is out of the ISR
		{1, []int32{2, 3}}, // both hold offset 1
		{3, []int32{2}},    // 3 ends at 2
		{4, []int32{2}},
		{5, nil},
	} {
		leader, followers, ok := p.ReadReplicas(tc.offset, clk.Now())
		if !ok || leader.ID != 1 || leader.LogEndOffset != 4 || leader.TimeSinceLastCaughtUpMs != 0 {
			t.Fatalf("offset %d: leader %+v, ok %v", tc.offset, leader, ok)
		}
		var ids []int32
		for _, r := range followers {
			ids = append(ids, r.ID)
			if r.ID == 2 && (r.LogEndOffset != 4 || r.TimeSinceLastCaughtUpMs != 250) {
				t.Errorf("offset %d: follower 2 as %+v, want log end 4 caught up 250 ms ago", tc.offset, r)
			}
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("fetch offset %d: read replicas %v, want %v", tc.offset, ids, tc.want)
		}
	}
	p.SetLeaderState(LeaderState{Leader: 2, Epoch: 4, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3}})
	if _, _, ok := p.ReadReplicas(0, clk.Now()); ok {
		t.Fatal("a follower offers read replicas")
	}
}

// TestSelectRackAware follows Kafka's RackAwareReplicaSelector: no client
// rack, no replica in it, or the leader in it keeps the leader (-1);
// otherwise the rack's most caught-up replica, by log end, then the
// shortest time since caught up, then the larger id.
func TestSelectRackAware(t *testing.T) {
	leader := ReplicaView{ID: 1, Rack: "a", LogEndOffset: 10}
	for _, tc := range []struct {
		name      string
		rack      string
		leader    ReplicaView
		followers []ReplicaView
		want      int32
	}{
		{"no client rack", "", leader, []ReplicaView{{ID: 2, Rack: ""}}, -1},
		{"no replica in the rack", "z", leader, []ReplicaView{{ID: 2, Rack: "b"}}, -1},
		{"leader in the rack", "a", leader, []ReplicaView{{ID: 2, Rack: "a", LogEndOffset: 10}}, -1},
		{"one follower in the rack", "b", leader, []ReplicaView{{ID: 2, Rack: "b", LogEndOffset: 3}, {ID: 3, Rack: "c", LogEndOffset: 10}}, 2},
		{"largest log end", "b", leader, []ReplicaView{{ID: 3, Rack: "b", LogEndOffset: 9}, {ID: 2, Rack: "b", LogEndOffset: 10, TimeSinceLastCaughtUpMs: 500}}, 2},
		{"caught up most recently", "b", leader, []ReplicaView{{ID: 2, Rack: "b", LogEndOffset: 10, TimeSinceLastCaughtUpMs: 50}, {ID: 3, Rack: "b", LogEndOffset: 10, TimeSinceLastCaughtUpMs: 40}}, 3},
		{"larger id", "b", leader, []ReplicaView{{ID: 3, Rack: "b", LogEndOffset: 10}, {ID: 2, Rack: "b", LogEndOffset: 10}}, 3},
		{"leader without a rack", "b", ReplicaView{ID: 1}, []ReplicaView{{ID: 2, Rack: "b"}}, 2},
	} {
		if got := SelectRackAware(tc.rack, tc.leader, tc.followers); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCheckEpochBeforeLeadership: a follower answers a stale or future
// leader epoch with FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH before
// NOT_LEADER_OR_FOLLOWER, in the order of Kafka's Partition.getLocalLog;
// a read any replica may serve checks the epoch only.
func TestCheckEpochBeforeLeadership(t *testing.T) {
	clk := testkit.NewClock(time.UnixMilli(1_700_000_000_000))
	p := newReplicatedPartition(t, 2, clk)
	p.SetLeaderState(LeaderState{Leader: 1, Epoch: 5, Replicas: []int32{1, 2}, ISR: []int32{1, 2}})
	if _, err := p.UpdateHighWatermarkFromLeader(0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		epoch           int32
		leader, replica error
	}{
		{-1, ErrNotLeader, nil},
		{4, ErrFencedLeaderEpoch, ErrFencedLeaderEpoch},
		{5, ErrNotLeader, nil},
		{6, ErrUnknownLeaderEpoch, ErrUnknownLeaderEpoch},
	} {
		if err := p.CheckLeader(tc.epoch); !errors.Is(err, tc.leader) || (tc.leader == nil) != (err == nil) {
			t.Errorf("CheckLeader(%d) on a follower: %v, want %v", tc.epoch, err, tc.leader)
		}
		if err := p.CheckReplica(tc.epoch); !errors.Is(err, tc.replica) || (tc.replica == nil) != (err == nil) {
			t.Errorf("CheckReplica(%d) on a follower: %v, want %v", tc.epoch, err, tc.replica)
		}
	}
}

// TestFollowerServesOnceHighWatermarkKnown: a follower whose log was just
// opened has only its log end for a high watermark, which may hold records
// never committed, so it refuses consumers (ErrHighWatermarkUnknown, an
// ErrNotLeader) until the leader gives it one; a replica that led knows
// its own.
func TestFollowerServesOnceHighWatermarkKnown(t *testing.T) {
	clk := testkit.NewClock(time.UnixMilli(1_700_000_000_000))
	follower := newReplicatedPartition(t, 2, clk)
	st := LeaderState{Leader: 1, Epoch: 5, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}
	follower.SetLeaderState(st)
	if err := follower.CheckReplica(5); !errors.Is(err, ErrHighWatermarkUnknown) || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("fresh follower: %v", err)
	}
	follower.SetLeaderState(st) // an ISR change, say: still unknown
	if err := follower.CheckReplica(-1); !errors.Is(err, ErrHighWatermarkUnknown) {
		t.Fatalf("fresh follower, same state again: %v", err)
	}
	if _, err := follower.UpdateHighWatermarkFromLeader(0); err != nil {
		t.Fatal(err)
	}
	if err := follower.CheckReplica(5); err != nil {
		t.Fatalf("follower told its HW: %v", err)
	}

	former := newReplicatedPartition(t, 1, clk)
	former.SetLeaderState(st)
	former.SetLeaderState(LeaderState{Leader: 2, Epoch: 6, Replicas: []int32{1, 2}, ISR: []int32{1, 2}})
	if err := former.CheckReplica(6); err != nil {
		t.Fatalf("former leader, now a follower: %v", err)
	}
}
