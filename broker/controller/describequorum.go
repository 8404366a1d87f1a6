package controller

// The quorum's state for DescribeQuorum (key 55): who leads at which term,
// the commit index as high watermark, and each voter's and observer's log
// end offset with the last times the leader heard from it and found it
// caught up. hashicorp/raft keeps its followers' match indexes to itself,
// so the leader learns them from the heartbeats every node sends anyway
// (liveness.go): each carries the index the node has applied. A node's
// log end offset is therefore its applied index as of its last heartbeat
// (every broker.heartbeat.interval.ms), not Raft's replication state, and
// "caught up" means that index had reached the leader's when it arrived.
// Offsets are Raft log indexes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ReplicaState is one quorum member's replication state.
type ReplicaState struct {
	ID int32 `json:"id"`
	// LogEndOffset is the member's last known log index; -1 if unknown.
	LogEndOffset int64 `json:"logEndOffset"`
	// LastFetch and LastCaughtUp are Unix milliseconds; -1 if unknown.
	LastFetch    int64 `json:"lastFetch"`
	LastCaughtUp int64 `json:"lastCaughtUp"`
}

// QuorumState is the metadata quorum as the active controller sees it.
type QuorumState struct {
	LeaderID      int32          `json:"leaderID"`
	LeaderEpoch   int32          `json:"leaderEpoch"`
	HighWatermark int64          `json:"highWatermark"`
	Voters        []ReplicaState `json:"voters"`
	Observers     []ReplicaState `json:"observers"`
}

// progress is what the active controller last heard of a node's log.
type progress struct {
	index     uint64
	caughtUp  time.Time
	heardFrom time.Time
}

// noteProgress records a heartbeat's applied index, on the leader.
func (c *Controller) noteProgress(id int32, index uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.mu.progress[id]
	p.index, p.heardFrom = index, now
	if index >= c.Image().Index {
		p.caughtUp = now
	}
	c.mu.progress[id] = p
}

// DescribeQuorum returns the quorum's state from the active controller:
// this node's own view when it leads (or is the single-node quorum),
// otherwise the leader's, asked over forwarding.
func (c *Controller) DescribeQuorum(ctx context.Context) (QuorumState, error) {
	if c.IsLeader() {
		return c.quorumState()
	}
	if c.net == nil {
		return QuorumState{}, ErrNotController
	}
	out, err := c.forward(ctx, forwardDescribeQuorum, nil)
	if errors.Is(err, errLeaderIsSelf) {
		return c.quorumState()
	}
	if err != nil {
		return QuorumState{}, err
	}
	var qs QuorumState
	if err := json.Unmarshal(out, &qs); err != nil {
		return QuorumState{}, fmt.Errorf("controller: quorum state: %w", err)
	}
	return qs, nil
}

// quorumState builds the state on the leader.
func (c *Controller) quorumState() (QuorumState, error) {
	f := c.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return QuorumState{}, fmt.Errorf("controller: read raft configuration: %w", err)
	}
	now := time.Now()
	qs := QuorumState{
		LeaderID:      c.cfg.NodeID,
		LeaderEpoch:   int32(min(c.raft.CurrentTerm(), 1<<31-1)),
		HighWatermark: int64(c.raft.CommitIndex()),
		Voters:        []ReplicaState{},
		Observers:     []ReplicaState{},
	}
	voters, observers := members(f.Configuration())
	c.mu.Lock()
	defer c.mu.Unlock()
	state := func(m QuorumMember) ReplicaState {
		rs := ReplicaState{ID: m.ID, LogEndOffset: -1, LastFetch: -1, LastCaughtUp: -1}
		if m.ID == c.cfg.NodeID {
			rs.LogEndOffset, rs.LastFetch, rs.LastCaughtUp = int64(c.raft.LastIndex()), now.UnixMilli(), now.UnixMilli()
		} else if p, ok := c.mu.progress[m.ID]; ok {
			rs.LogEndOffset, rs.LastFetch = int64(p.index), p.heardFrom.UnixMilli()
			if !p.caughtUp.IsZero() {
				rs.LastCaughtUp = p.caughtUp.UnixMilli()
			}
		}
		return rs
	}
	for _, m := range voters {
		qs.Voters = append(qs.Voters, state(m))
	}
	for _, m := range observers {
		qs.Observers = append(qs.Observers, state(m))
	}
	return qs, nil
}

// VoterAddrs returns the configured voters' quorum addresses by ID (empty
// for the single-node quorum).
func (c *Controller) VoterAddrs() map[int32]string {
	m := make(map[int32]string, len(c.cfg.Voters))
	for _, v := range c.cfg.Voters {
		m[v.ID] = v.Addr()
	}
	return m
}
