package log

import (
	"fmt"
	"testing"
)

// TestFollowerTruncation plays the follower's side of KIP-101/KIP-279
// against a leader's epoch cache: the follower asks for its latest epoch,
// truncates where FollowerTruncation says, drops the epochs the truncation
// removed, and asks again until done. Each case lists the (offset, done)
// of every round.
func TestFollowerTruncation(t *testing.T) {
	type cache = []EpochEntry
	for _, tc := range []struct {
		name           string
		leader         cache
		leaderEnd      int64
		follower       cache
		followerEnd    int64
		followerHW     int64
		rounds         string
		leaderAnswer   *[2]int64 // instead of the leader's cache: (epoch, end offset)
		wantFinalEpoch int32
	}{
		{
			// KIP-101 scenario 1: the follower wrote m2 (offset 1) as
			// leader of epoch 0 and restarted; the new leader (epoch 1)
			// never had it and wrote m3 at 1. Truncating to the HW (0)
			// would lose m1; the epoch says 1.
			name:   "KIP-101 lost tail of the old leader",
			leader: cache{{0, 0}, {1, 1}}, leaderEnd: 2,
			follower: cache{{0, 0}}, followerEnd: 2, followerHW: 0,
			rounds: "(1,true)", wantFinalEpoch: 0,
		},
		{
			// KIP-101 scenario 2: both logs hold the same epoch-0 data;
			// the follower's HW lagged. Nothing is truncated (the HW rule
			// would have thrown away offsets 1-2).
			name:   "KIP-101 no truncation below the HW rule",
			leader: cache{{0, 0}, {1, 3}}, leaderEnd: 5,
			follower: cache{{0, 0}}, followerEnd: 3, followerHW: 1,
			rounds: "(3,true)", wantFinalEpoch: 0,
		},
		{
			name:   "in sync in the leader's epoch",
			leader: cache{{0, 0}, {4, 10}}, leaderEnd: 20,
			follower: cache{{0, 0}, {4, 10}}, followerEnd: 15, followerHW: 12,
			rounds: "(15,true)", wantFinalEpoch: 4,
		},
		{
			// KIP-279 example 1: the follower led epoch 1 briefly and
			// wrote 3-5 that the leader never had; the leader's epoch 0
			// runs to 5. KIP-101 would truncate to 5 and keep the
			// follower's diverged 3-4; KIP-279 truncates to the end of
			// the follower's own epoch 0.
			name:   "KIP-279 follower's epoch unknown to the leader",
			leader: cache{{0, 0}, {2, 5}}, leaderEnd: 8,
			follower: cache{{0, 0}, {1, 3}}, followerEnd: 6, followerHW: 2,
			rounds: "(3,true)", wantFinalEpoch: 0,
		},
		{
			// KIP-279 example 2: the leader answers epoch 1 for the
			// follower's 2, and the follower has no epoch 1: it truncates
			// to the end of its largest epoch below (0, ending at 5),
			// asks again for 0 and learns the leader's epoch 0 ended at 4.
			name:   "KIP-279 leader's epoch unknown to the follower",
			leader: cache{{0, 0}, {1, 4}, {3, 7}}, leaderEnd: 9,
			follower: cache{{0, 0}, {2, 5}}, followerEnd: 8, followerHW: 3,
			rounds: "(5,false) (4,true)", wantFinalEpoch: 0,
		},
		{
			name:   "several rounds down to a common epoch",
			leader: cache{{0, 0}, {2, 4}, {5, 8}}, leaderEnd: 12,
			follower: cache{{0, 0}, {1, 2}, {3, 6}, {4, 7}}, followerEnd: 9, followerHW: 1,
			rounds: "(6,false) (2,true)", wantFinalEpoch: 0,
		},
		{
			name:   "follower without epochs truncates to its HW",
			leader: cache{{0, 0}}, leaderEnd: 9,
			follower: nil, followerEnd: 6, followerHW: 4,
			rounds: "(4,true)", wantFinalEpoch: -1,
		},
		{
			name:     "leader answers undefined: the HW",
			follower: cache{{3, 0}}, followerEnd: 6, followerHW: 2,
			leaderAnswer: &[2]int64{-1, -1},
			rounds:       "(2,true)", wantFinalEpoch: 3,
		},
		{
			name:     "leader answers the undefined epoch with an offset",
			follower: cache{{3, 0}}, followerEnd: 6, followerHW: 2,
			leaderAnswer: &[2]int64{-1, 4},
			rounds:       "(4,true)", wantFinalEpoch: 3,
		},
		{
			name:     "leader answers an epoch above the follower's",
			follower: cache{{3, 0}}, followerEnd: 6, followerHW: 2,
			leaderAnswer: &[2]int64{7, 5},
			rounds:       "(5,true)", wantFinalEpoch: 3,
		},
		{
			name:   "leader's first epoch above the follower's: the leader's start",
			leader: cache{{2, 3}}, leaderEnd: 9,
			follower: cache{{1, 0}}, followerEnd: 5, followerHW: 0,
			rounds: "(3,true)", wantFinalEpoch: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := append(cache(nil), tc.follower...)
			end := tc.followerEnd
			var rounds string
			for range 10 {
				var le int32
				var lo int64
				if tc.leaderAnswer != nil {
					le, lo = int32(tc.leaderAnswer[0]), tc.leaderAnswer[1]
				} else {
					le, lo = EndOffsetFor(tc.leader, LatestEpoch(es), tc.leaderEnd)
				}
				off, done := FollowerTruncation(es, end, tc.followerHW, le, lo)
				if rounds != "" {
					rounds += " "
				}
				rounds += fmt.Sprintf("(%d,%t)", off, done)
				if off > end {
					t.Fatalf("truncation to %d above the log end %d", off, end)
				}
				end = off
				for len(es) > 0 && es[len(es)-1].StartOffset >= end {
					es = es[:len(es)-1]
				}
				if done {
					break
				}
			}
			if rounds != tc.rounds {
				t.Errorf("rounds %s, want %s", rounds, tc.rounds)
			}
			if got := LatestEpoch(es); got != tc.wantFinalEpoch {
				t.Errorf("latest epoch after truncation %d, want %d", got, tc.wantFinalEpoch)
			}
		})
	}
}
