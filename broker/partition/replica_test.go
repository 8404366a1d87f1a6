package partition

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/vfs"
)

// TestReplicaFetched: Kafka's Replica.updateFetchState rule for the last
// caught-up time, one fetch at a time.
func TestReplicaFetched(t *testing.T) {
	start := ReplicaState{ID: 2, LogEndOffset: -1, LastFetchLeaderLogEndOffset: -1}
	type fetch struct {
		offset, leaderEnd, now int64
		wantCaughtUp           int64
	}
	for _, tc := range []struct {
		name    string
		fetches []fetch
	}{
		{"at the leader's end: caught up now", []fetch{{10, 10, 100, 100}}},
		{"past the leader's end (a truncating leader): caught up now", []fetch{{12, 10, 100, 100}}},
		{"behind, first fetch: caught up as of the last fetch (never)", []fetch{{5, 10, 100, 0}}},
		{
			// The second fetch reaches what the leader had at the first:
			// the follower was caught up as of the first fetch.
			"reaches the leader's end of the previous fetch",
			[]fetch{{5, 10, 100, 0}, {10, 14, 200, 100}, {14, 20, 300, 200}},
		},
		{
			"falls further behind: keeps the old time",
			[]fetch{{10, 10, 100, 100}, {11, 20, 200, 100}, {15, 30, 300, 100}},
		},
		{
			"never moves back",
			[]fetch{{10, 10, 500, 500}, {10, 10, 400, 500}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := start
			for i, f := range tc.fetches {
				r = r.fetched(f.offset, 0, f.leaderEnd, f.now)
				if r.LastCaughtUpMs != f.wantCaughtUp || r.LogEndOffset != f.offset {
					t.Fatalf("fetch %d: caught up at %d, LEO %d; want %d, %d", i, r.LastCaughtUpMs, r.LogEndOffset, f.wantCaughtUp, f.offset)
				}
			}
		})
	}
}

// TestISRDecisions: which followers leave the ISR, which may join it, and
// the high watermark they allow.
func TestISRDecisions(t *testing.T) {
	const lag = 30000
	const now = 100000
	rs := []ReplicaState{
		{ID: 2, LogEndOffset: 50, LastCaughtUpMs: now - 1000},    // behind, caught up lately
		{ID: 3, LogEndOffset: 40, LastCaughtUpMs: now - 30001},   // behind too long
		{ID: 4, LogEndOffset: 60, LastCaughtUpMs: now - 90000},   // at the leader's end
		{ID: 5, LogEndOffset: -1, LastCaughtUpMs: 0},             // never fetched
		{ID: 6, LogEndOffset: 30, LastCaughtUpMs: now - lag},     // exactly at the limit
		{ID: 7, LogEndOffset: 45, LastCaughtUpMs: now - 2*lag},   // not in the ISR, lagging
		{ID: 8, LogEndOffset: 35, LastCaughtUpMs: now - lag + 1}, // not in the ISR, caught up
	}
	for _, tc := range []struct {
		name string
		isr  []int32
		want []int32
	}{
		{"leader alone", []int32{1}, nil},
		{"mixed", []int32{1, 2, 3, 4, 5, 6}, []int32{3, 5}},
		{"a follower the leader has no state for", []int32{1, 9}, []int32{9}},
	} {
		if got := OutOfSync(tc.isr, 1, rs, 60, now, lag); !slices.Equal(got, tc.want) {
			t.Errorf("OutOfSync %s: %v, want %v", tc.name, got, tc.want)
		}
	}

	for _, tc := range []struct {
		name            string
		leo, hw, estart int64
		want            bool
	}{
		{"at the HW and past the epoch start", 20, 20, 10, true},
		{"below the HW", 19, 20, 10, false},
		{"at the HW, below the epoch start (not truncated yet)", 20, 20, 25, false},
		{"never fetched, HW 0", -1, 0, 0, false},
		{"empty log, empty leader", 0, 0, 0, true},
	} {
		if got := CanJoinISR(ReplicaState{LogEndOffset: tc.leo}, tc.hw, tc.estart); got != tc.want {
			t.Errorf("CanJoinISR %s: %t", tc.name, got)
		}
	}

	behind := ReplicaState{ID: 2, LogEndOffset: 50, LastCaughtUpMs: now - 1000}
	atEnd := ReplicaState{ID: 4, LogEndOffset: 60, LastCaughtUpMs: now - 90000}
	unfetched := ReplicaState{ID: 5, LogEndOffset: -1}
	lagging := ReplicaState{ID: 7, LogEndOffset: 45, LastCaughtUpMs: now - 2*lag}
	joining := ReplicaState{ID: 8, LogEndOffset: 35, LastCaughtUpMs: now - lag + 1}
	for _, tc := range []struct {
		name       string
		isr        []int32
		followers  []ReplicaState
		ineligible []int32
		want       int64
	}{
		{"leader alone", []int32{1}, nil, nil, 60},
		{"ISR member behind", []int32{1, 2, 4}, []ReplicaState{behind, atEnd}, nil, 50},
		{"an unfetched ISR member holds it at -1 (the caller keeps the old HW)", []int32{1, 5}, []ReplicaState{unfetched}, nil, -1},
		{"a lagging replica outside the ISR does not count", []int32{1, 4}, []ReplicaState{atEnd, lagging}, nil, 60},
		{"a caught-up replica outside the ISR (about to join) counts", []int32{1, 4}, []ReplicaState{atEnd, lagging, joining}, nil, 35},
		{"unless its broker is fenced or shutting down", []int32{1, 4}, []ReplicaState{atEnd, lagging, joining}, []int32{8}, 60},
		{"an ISR member counts even so", []int32{1, 2, 4}, []ReplicaState{behind, atEnd}, []int32{2}, 50},
	} {
		if got := HighWatermark(60, tc.isr, tc.ineligible, tc.followers, now, lag); got != tc.want {
			t.Errorf("HighWatermark %s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// newReplicatedPartition is replica id of t-0 over a fresh log, with a
// test clock.
func newReplicatedPartition(t *testing.T, id int32, clk *testkit.Clock) *Partition {
	t.Helper()
	l, err := log.Open(vfs.NewMem(), "/t-0", log.DefaultConfig(), log.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return New("t", 0, [16]byte{1}, l, Options{ReplicaID: id, Now: clk.Now, ReplicaLagTimeMaxMs: 10000})
}

// TestLeaderTracksFollowers: a leader of three replicas moves its high
// watermark with the ISR's fetches (never back), wakes acks=-1 waiters
// when it advances, proposes to drop a follower that lags past
// replica.lag.time.max.ms and to add back one that caught up to the HW.
func TestLeaderTracksFollowers(t *testing.T) {
	clk := testkit.NewClock(time.UnixMilli(1_700_000_000_000))
	p := newReplicatedPartition(t, 1, clk)
	st := LeaderState{Leader: 1, Epoch: 3, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	p.SetLeaderState(st)
	for range 4 {
		if _, err := p.AppendWith(parsed(batchAt(clk, 1)), AppendOptions{MinInSyncReplicas: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if p.HighWatermark() != 0 || p.LogEndOffset() != 4 {
		t.Fatalf("HW %d, LEO %d before any follower fetched", p.HighWatermark(), p.LogEndOffset())
	}
	// An acks=-1 producer waits for the HW to pass offset 3.
	acked := make(chan struct{}, 1)
	if !p.Wait(acked, 3, ReadUncommitted) {
		t.Fatal("nothing to wait for")
	}
	up := func(id int32, off int64) FollowerUpdate {
		t.Helper()
		u, err := p.UpdateFollower(id, off, 0, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if u := up(2, 4); u.HighWatermarkAdvanced || u.HighWatermark != 0 {
		t.Fatalf("one of two followers fetched: %+v", u)
	}
	clk.Advance(time.Second)
	if u := up(3, 2); !u.HighWatermarkAdvanced || u.HighWatermark != 2 {
		t.Fatalf("second follower at 2: %+v", u)
	}
	select {
	case <-acked:
	default:
		t.Fatal("waiter not woken by the HW advancing")
	}
	if !p.Wait(acked, 3, ReadUncommitted) {
		t.Fatal("HW already past 3")
	}
	if u := up(3, 4); u.HighWatermark != 4 {
		t.Fatalf("both at 4: %+v", u)
	}
	<-acked
	// A follower that restarted and truncated fetches from lower: the
	// HW does not move back.
	if u := up(3, 1); u.HighWatermark != 4 || p.HighWatermark() != 4 {
		t.Fatalf("follower back at 1: %+v, HW %d", u, p.HighWatermark())
	}
	if _, _, ok := p.ProposedISRShrink(clk.Now()); ok {
		t.Fatal("shrink proposed right after both caught up")
	}
	// 3 stays behind; 2 keeps fetching at the log end.
	for range 11 {
		clk.Advance(time.Second)
		if _, err := p.Append(batchAt(clk, 1)); err != nil {
			t.Fatal(err)
		}
		up(2, p.LogEndOffset())
	}
	isr, removed, ok := p.ProposedISRShrink(clk.Now())
	if !ok || !slices.Equal(isr, []int32{1, 2}) || !slices.Equal(removed, []int32{3}) {
		t.Fatalf("shrink after 11s of lag: %v without %v (%t)", isr, removed, ok)
	}
	if p.LeaderState().PartitionEpoch != 7 || len(p.LeaderState().ISR) != 3 {
		t.Fatal("the proposal changed the leader state")
	}
	if s := p.Snapshot(); len(s.Followers) != 2 || s.Followers[0].ID != 2 || s.Followers[0].LogEndOffset != p.LogEndOffset() || s.Followers[1].LogEndOffset != 1 {
		t.Fatalf("snapshot followers %+v", s.Followers)
	}
	// The controller accepts the shrink; the HW now follows 2 alone. The
	// epoch is the same: the follower states are kept as they were, but
	// for the removed follower's last caught-up time.
	before := p.Followers()
	before[1].LastCaughtUpMs = 0
	st.ISR, st.PartitionEpoch = []int32{1, 2}, 8
	p.SetLeaderState(st)
	if got := p.Followers(); !slices.Equal(got, before) {
		t.Fatalf("follower states after an ISR change: %+v, want %+v", got, before)
	}
	if p.HighWatermark() != p.LogEndOffset() {
		t.Fatalf("HW %d after the shrink, LEO %d", p.HighWatermark(), p.LogEndOffset())
	}
	// 3 catches up to the HW: the leader proposes it back.
	if u := up(3, 10); u.ProposedISR != nil {
		t.Fatalf("3 below the HW proposed: %v", u.ProposedISR)
	}
	if u := up(3, p.HighWatermark()); !slices.Equal(u.ProposedISR, []int32{1, 2, 3}) {
		t.Fatalf("3 at the HW: proposed %v", u.ProposedISR)
	}
	if _, err := p.UpdateFollower(9, 0, 0, clk.Now()); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("unassigned replica: %v", err)
	}
	// Re-elected at a new epoch: the followers keep their log ends; the
	// one in the ISR counts as caught up now, the other as never.
	end := p.LogEndOffset()
	st.Epoch, st.ISR = 4, []int32{1, 2}
	clk.Advance(time.Second)
	p.SetLeaderState(st)
	if got := p.Followers(); len(got) != 2 || got[1].LogEndOffset != end || got[0].LastCaughtUpMs != clk.Now().UnixMilli() || got[1].LastCaughtUpMs != 0 {
		t.Fatalf("follower states after a new epoch: %+v", got)
	}
	if _, err := p.Append(batchAt(clk, 1)); err != nil {
		t.Fatal(err)
	}
	if u := up(3, end-1); u.ProposedISR != nil {
		t.Fatalf("3 below the epoch start %d proposed: %v", end, u.ProposedISR)
	}
	if u := up(3, end); !slices.Equal(u.ProposedISR, []int32{1, 2, 3}) || u.HighWatermark != end {
		t.Fatalf("3 at the epoch start: %+v", u)
	}

	// A write waiting for the HW learns at once that the replica stopped
	// leading.
	if !p.Wait(acked, p.LogEndOffset(), ReadUncommitted) {
		t.Fatal("nothing to wait for past the log end")
	}
	p.SetLeaderState(LeaderState{Leader: 2, Epoch: 5, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}})
	select {
	case <-acked:
	default:
		t.Fatal("waiter not woken by the loss of leadership")
	}
	if _, err := p.UpdateFollower(3, 0, 0, clk.Now()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower fetch at a follower: %v", err)
	}
	if p.Followers() != nil {
		t.Fatal("a follower keeps follower states")
	}
}

// TestRemovedFollowerReleasesTheHighWatermark: a follower that was caught
// up when the controller took it out of the ISR (its broker fenced or
// shutting down) stops holding the high watermark back at once, as
// Kafka's maybeIncrementLeaderHW counts a caught-up replica outside the
// ISR only while it is ISR eligible; it was held for
// replica.lag.time.max.ms before. A fetch that catches it up makes it
// count again.
func TestRemovedFollowerReleasesTheHighWatermark(t *testing.T) {
	clk := testkit.NewClock(time.UnixMilli(1_700_000_000_000))
	p := newReplicatedPartition(t, 1, clk)
	st := LeaderState{Leader: 1, Epoch: 1, PartitionEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	p.SetLeaderState(st)
	for _, id := range []int32{2, 3} {
		if _, err := p.UpdateFollower(id, 0, 0, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Append(batchAt(clk, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpdateFollower(2, 1, 0, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("HW %d with follower 3 in the ISR at 0", hw)
	}
	// Broker 3 dies and is fenced a second later: the controller drops
	// it from the ISR within the leader's epoch.
	clk.Advance(time.Second)
	st.ISR, st.PartitionEpoch = []int32{1, 2}, 2
	p.SetLeaderState(st)
	if hw := p.HighWatermark(); hw != 1 {
		t.Fatalf("HW %d after 3 left the ISR, want 1", hw)
	}
	if _, err := p.Append(batchAt(clk, 1)); err != nil {
		t.Fatal(err)
	}
	// 3 comes back and fetches to the log end: it holds the HW again
	// until it joins the ISR.
	if _, err := p.UpdateFollower(3, 2, 0, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(batchAt(clk, 1)); err != nil {
		t.Fatal(err)
	}
	if u, err := p.UpdateFollower(2, 3, 0, clk.Now()); err != nil || u.HighWatermark != 2 {
		t.Fatalf("HW %d (%v) with caught-up 3 at 2, want 2", u.HighWatermark, err)
	}
}

// TestFollowerReplicates: a follower appends its leader's bytes, takes its
// high watermark from the leader's (capped by its own log end), truncates,
// and refuses the leader's operations; the leader refuses the follower's.
func TestFollowerReplicates(t *testing.T) {
	clk := testkit.NewClock(time.UnixMilli(1_700_000_000_000))
	leader, follower := newReplicatedPartition(t, 1, clk), newReplicatedPartition(t, 2, clk)
	st := LeaderState{Leader: 1, Epoch: 2, PartitionEpoch: 2, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}
	leader.SetLeaderState(st)
	follower.SetLeaderState(st)
	for range 3 {
		if _, err := leader.Append(batchAt(clk, 2)); err != nil {
			t.Fatal(err)
		}
	}
	fetch := func(maxBytes int) {
		t.Helper()
		off := follower.LogEndOffset()
		u, err := leader.UpdateFollower(2, off, 0, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		res, err := leader.Fetch(nil, off, maxBytes, ReadReplica, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) > 0 {
			if err := follower.AppendReplicated(res.Records); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := follower.UpdateHighWatermarkFromLeader(u.HighWatermark); err != nil {
			t.Fatal(err)
		}
	}
	fetch(1) // one batch: follower at 2, leader HW still 0
	if follower.LogEndOffset() != 2 || follower.HighWatermark() != 0 {
		t.Fatalf("follower LEO %d HW %d", follower.LogEndOffset(), follower.HighWatermark())
	}
	fetch(1 << 20) // the rest; the leader's HW was 2 at this fetch
	if follower.LogEndOffset() != 6 || follower.HighWatermark() != 2 {
		t.Fatalf("follower LEO %d HW %d", follower.LogEndOffset(), follower.HighWatermark())
	}
	fetch(1 << 20) // nothing new: the leader's HW reaches 6
	if follower.HighWatermark() != 6 || leader.HighWatermark() != 6 {
		t.Fatalf("follower HW %d, leader HW %d", follower.HighWatermark(), leader.HighWatermark())
	}
	if e, off := follower.EndOffsetForEpoch(2); e != 2 || off != 6 {
		t.Fatalf("follower's epoch 2 ends at %d (epoch %d)", off, e)
	}
	// A leader's HW above the follower's log end is capped.
	if hw, err := follower.UpdateHighWatermarkFromLeader(100); err != nil || hw != 6 {
		t.Fatalf("HW from a leader ahead: %d, %v", hw, err)
	}
	if err := follower.TruncateTo(4); err != nil || follower.LogEndOffset() != 4 || follower.HighWatermark() != 4 {
		t.Fatalf("truncate: %v, LEO %d HW %d", err, follower.LogEndOffset(), follower.HighWatermark())
	}
	if _, err := follower.Append(batchAt(clk, 1)); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("produce at the follower: %v", err)
	}
	if err := leader.AppendReplicated(batchAt(clk, 1)); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("replicated append at the leader: %v", err)
	}
	if _, err := leader.UpdateHighWatermarkFromLeader(3); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("leader HW from a leader: %v", err)
	}
	if err := leader.TruncateTo(0); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("truncating the leader: %v", err)
	}
	if err := follower.AppendReplicated(batchAt(clk, 1)); !errors.Is(err, log.ErrUnexpectedAppendOffset) {
		t.Fatalf("batch at offset 0 on a log ending at 4: %v", err)
	}

	// The follower fetches 4-5 again and becomes leader (epoch 3) before
	// its HW (4) reached its log end (6). The old leader, now a follower
	// outside the ISR, may join only once it holds this leader's log up
	// to the start of epoch 3: at the HW is not enough.
	res, err := leader.Fetch(nil, 4, 1<<20, ReadReplica, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := follower.AppendReplicated(res.Records); err != nil {
		t.Fatal(err)
	}
	follower.SetLeaderState(LeaderState{Leader: 2, Epoch: 3, PartitionEpoch: 3, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3}})
	if follower.HighWatermark() != 4 || follower.LogEndOffset() != 6 {
		t.Fatalf("new leader: HW %d, LEO %d", follower.HighWatermark(), follower.LogEndOffset())
	}
	// A replica that was not leading knows nothing of its followers.
	want := []ReplicaState{
		{ID: 1, LogEndOffset: -1, LogStartOffset: -1, LastFetchLeaderLogEndOffset: -1},
		{ID: 3, LogEndOffset: -1, LogStartOffset: -1, LastFetchLeaderLogEndOffset: -1, LastCaughtUpMs: clk.Now().UnixMilli()},
	}
	if got := follower.Followers(); !slices.Equal(got, want) {
		t.Fatalf("new leader's followers %+v, want %+v", got, want)
	}
	if u, err := follower.UpdateFollower(1, 5, 0, clk.Now()); err != nil || u.ProposedISR != nil {
		t.Fatalf("replica 1 past the HW, below the epoch start: %+v, %v", u, err)
	}
	if u, err := follower.UpdateFollower(1, 6, 0, clk.Now()); err != nil || !slices.Equal(u.ProposedISR, []int32{1, 2, 3}) {
		t.Fatalf("replica 1 at the epoch start: %+v, %v", u, err)
	}
}

// batchAt is a batch of n records timestamped at the clock's time.
func batchAt(clk *testkit.Clock, n int) []byte {
	return logtest.BatchWith(logtest.Options{BaseTimestamp: clk.Now().UnixMilli()}, logtest.Values(n, 10)...)
}
