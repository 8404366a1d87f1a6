package partition

import (
	"slices"
	"time"
)

// DefaultReplicaLagTimeMaxMs is replica.lag.time.max.ms's default: a
// follower that has not caught up with the leader's log end for this long
// leaves the ISR.
const DefaultReplicaLagTimeMaxMs = 30000

// ReplicaState is what a leader knows of one follower, from its fetches:
// Kafka's ReplicaState.
type ReplicaState struct {
	ID int32
	// LogEndOffset is the follower's log end offset, the offset of its
	// last fetch; -1 before its first fetch under this leader.
	LogEndOffset int64
	// LogStartOffset is the follower's log start offset as its last
	// fetch gave it; -1 before its first fetch under this leader.
	LogStartOffset int64
	// LastCaughtUpMs is the last time (ms) the follower was known to hold
	// everything the leader had: the time of a fetch at the leader's log
	// end, or of the fetch before one that reached the leader's log end
	// of that earlier fetch. 0 when never.
	LastCaughtUpMs int64
	// LastFetchLeaderLogEndOffset and LastFetchMs are the leader's log
	// end offset at the follower's last fetch, and its time.
	LastFetchLeaderLogEndOffset int64
	LastFetchMs                 int64
}

// fetched is the state after a fetch at fetchOffset at nowMs while the
// leader's log ended at leaderEnd, as Kafka's Replica.updateFetchState
// computes it: a fetch at the leader's log end means caught up now; a
// fetch at or past the leader's log end of the previous fetch means
// caught up as of that previous fetch.
func (r ReplicaState) fetched(fetchOffset, logStart, leaderEnd, nowMs int64) ReplicaState {
	switch {
	case fetchOffset >= leaderEnd:
		r.LastCaughtUpMs = max(r.LastCaughtUpMs, nowMs)
	case fetchOffset >= r.LastFetchLeaderLogEndOffset:
		r.LastCaughtUpMs = max(r.LastCaughtUpMs, r.LastFetchMs)
	}
	r.LogEndOffset = fetchOffset
	r.LogStartOffset = logStart
	r.LastFetchLeaderLogEndOffset = leaderEnd
	r.LastFetchMs = nowMs
	return r
}

// CaughtUp reports whether the follower holds the leader's log end
// (leaderEnd), or did within maxLagMs of nowMs: Kafka's
// ReplicaState.isCaughtUp.
func (r ReplicaState) CaughtUp(leaderEnd, nowMs, maxLagMs int64) bool {
	return r.LogEndOffset == leaderEnd || nowMs-r.LastCaughtUpMs <= maxLagMs
}

// OutOfSync returns the followers of isr (all but leader) that have not
// caught up within maxLagMs at nowMs, in isr order, as Kafka's
// Partition.getOutOfSyncReplicas: the ones an ISR shrink removes. A
// follower the leader has no state for counts as out of sync.
func OutOfSync(isr []int32, leader int32, followers []ReplicaState, leaderEnd, nowMs, maxLagMs int64) []int32 {
	var out []int32
	for _, id := range isr {
		if id == leader {
			continue
		}
		r, ok := findReplica(followers, id)
		if !ok || !r.CaughtUp(leaderEnd, nowMs, maxLagMs) {
			out = append(out, id)
		}
	}
	return out
}

// CanJoinISR reports whether a follower not in the ISR may join it, as
// Kafka's Partition.isFollowerInSync: its log end has reached the high
// watermark and the start of the leader's epoch (epochStart, the leader's
// log end when it took the epoch), so it holds everything committed and
// has truncated to this leader's log.
func CanJoinISR(r ReplicaState, highWatermark, epochStart int64) bool {
	return r.LogEndOffset >= 0 && r.LogEndOffset >= highWatermark && r.LogEndOffset >= epochStart
}

// HighWatermark is the high watermark the leader's log end and its
// followers' fetches allow, as Kafka's Partition.maybeIncrementLeaderHW:
// the smallest log end offset among the leader and the followers in the
// ISR or caught up within maxLagMs and eligible (not in ineligible: they
// are about to join it). The caller never moves the high watermark
// backwards.
func HighWatermark(leaderEnd int64, isr, ineligible []int32, followers []ReplicaState, nowMs, maxLagMs int64) int64 {
	hw := leaderEnd
	for _, r := range followers {
		joining := r.CaughtUp(leaderEnd, nowMs, maxLagMs) && !slices.Contains(ineligible, r.ID)
		if r.LogEndOffset < hw && (slices.Contains(isr, r.ID) || joining) {
			hw = r.LogEndOffset
		}
	}
	return hw
}

func findReplica(rs []ReplicaState, id int32) (ReplicaState, bool) {
	for _, r := range rs {
		if r.ID == id {
			return r, true
		}
	}
	return ReplicaState{}, false
}

// resetFollowersLocked rebuilds the follower states for leader state st
// at nowMs, as Kafka's Partition.makeLeader and Replica.resetReplicaState
// do: on a new leader epoch every follower's last caught-up time becomes
// now if it is in the ISR and never otherwise (so that one out of the ISR
// does not hold the high watermark back), and a replica that was not
// leading before forgets everything else it knew (log end offsets
// unknown). Within one epoch the states are kept; a newly assigned
// replica starts unknown, and a follower the controller took out of the
// ISR (prevISR) forgets when it last caught up: its broker was fenced,
// is shutting down or lagged, and Kafka's maybeIncrementLeaderHW lets
// such a replica hold the high watermark back only while it is ISR
// eligible (isReplicaIsrEligible: not fenced, not in controlled
// shutdown). It counts again once a fetch catches it up. wasLeader is
// whether this replica led before st. p.mu is held.
func (p *Partition) resetFollowersLocked(st *LeaderState, prevISR []int32, wasLeader, newEpoch bool, nowMs int64) {
	if !p.leads(st) {
		p.mu.followers = nil
		return
	}
	next := make([]ReplicaState, 0, len(st.Replicas))
	for _, id := range st.Replicas {
		if id == p.replicaID {
			continue
		}
		r, known := findReplica(p.mu.followers, id)
		if !wasLeader || !known {
			r = ReplicaState{ID: id, LogEndOffset: -1, LogStartOffset: -1, LastFetchLeaderLogEndOffset: -1}
		}
		switch {
		case newEpoch || !known:
			r.LastCaughtUpMs = 0
			if slices.Contains(st.ISR, id) {
				r.LastCaughtUpMs = nowMs
			}
		case slices.Contains(prevISR, id) && !slices.Contains(st.ISR, id):
			r.LastCaughtUpMs = 0
		}
		next = append(next, r)
	}
	p.mu.followers = next
}

// FollowerUpdate is what a follower's fetch changed at the leader.
type FollowerUpdate struct {
	// HighWatermark is the high watermark after the fetch, and
	// HighWatermarkAdvanced whether the fetch moved it (acks=-1 waiters
	// were woken).
	HighWatermark         int64
	HighWatermarkAdvanced bool
	// ProposedISR is the ISR with the follower added, when the fetch made
	// it eligible to join (CanJoinISR); nil otherwise. Proposing it to
	// the controller (AlterPartition) is the caller's.
	ProposedISR []int32
}

// UpdateFollower records a follower's fetch at fetchOffset (its log end
// offset), with its log start offset logStart, at now, as the leader's
// Fetch path does for a replica fetch
// (Kafka's Partition.updateFollowerFetchState): the follower's state,
// then the high watermark, which may advance and wake waiters (as a higher
// log start does, for DeleteRecords' low watermark). It fails
// with ErrNotLeader unless this replica leads and ErrUnknownReplica for a
// replica that is not assigned.
func (p *Partition) UpdateFollower(replicaID int32, fetchOffset, logStart int64, now time.Time) (FollowerUpdate, error) {
	nowMs := now.UnixMilli()
	p.mu.Lock()
	st := p.state.Load()
	switch {
	case p.mu.closed:
		p.mu.Unlock()
		return FollowerUpdate{}, ErrClosed
	case !p.leads(st):
		p.mu.Unlock()
		return FollowerUpdate{}, ErrNotLeader
	}
	i := slices.IndexFunc(p.mu.followers, func(r ReplicaState) bool { return r.ID == replicaID })
	if i < 0 {
		p.mu.Unlock()
		return FollowerUpdate{}, ErrUnknownReplica
	}
	end := p.log.EndOffset()
	prevStart := p.mu.followers[i].LogStartOffset
	r := p.mu.followers[i].fetched(fetchOffset, logStart, end, nowMs)
	p.mu.followers[i] = r
	advanced := p.maybeAdvanceHWLocked(st, p.leaderEnd(), nowMs)
	res := FollowerUpdate{HighWatermark: p.hw.Load(), HighWatermarkAdvanced: advanced}
	if !slices.Contains(st.ISR, replicaID) && !slices.Contains(st.Ineligible, replicaID) && CanJoinISR(r, res.HighWatermark, p.mu.epochStart) {
		res.ProposedISR = append(slices.Clone(st.ISR), replicaID)
		slices.Sort(res.ProposedISR)
	}
	var waiters []chan<- struct{}
	if advanced || logStart > prevStart {
		// A higher follower log start may raise the low watermark a
		// DeleteRecords waits for (WaitLowWatermark).
		waiters = p.takeWaitersLocked()
	}
	p.mu.Unlock()
	wake(waiters)
	return res, nil
}

// maybeAdvanceHWLocked moves the high watermark to what the log end end
// and the followers allow, never backwards; it reports whether it moved.
func (p *Partition) maybeAdvanceHWLocked(st *LeaderState, end, nowMs int64) bool {
	hw := end
	if len(p.mu.followers) > 0 {
		hw = HighWatermark(end, st.ISR, st.Ineligible, p.mu.followers, nowMs, p.lagMaxMs)
	}
	if hw <= p.hw.Load() {
		return false
	}
	p.hw.Store(hw)
	return true
}

// ProposedISRShrink returns the ISR without the followers out of sync at
// now (OutOfSync over replica.lag.time.max.ms) and those removed; ok is
// false when this replica does not lead or every follower is in sync.
// Proposing it to the controller is the caller's.
func (p *Partition) ProposedISRShrink(now time.Time) (isr, removed []int32, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.state.Load()
	if !p.leads(st) {
		return nil, nil, false
	}
	removed = OutOfSync(st.ISR, p.replicaID, p.mu.followers, p.log.EndOffset(), now.UnixMilli(), p.lagMaxMs)
	if len(removed) == 0 {
		return nil, nil, false
	}
	for _, id := range st.ISR {
		if !slices.Contains(removed, id) {
			isr = append(isr, id)
		}
	}
	return isr, removed, true
}

// Followers returns the leader's state of each follower, in replica
// order; nil when this replica does not lead.
func (p *Partition) Followers() []ReplicaState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.mu.followers)
}

// AppendReplicated appends batches fetched from the leader, with the
// leader's offsets and epochs (store/log.Log.AppendReplicated), on a
// replica that does not lead; ErrNotLeader's counterpart is
// ErrNotFollower. Waiting fetches are woken; the high watermark moves
// only with UpdateHighWatermarkFromLeader.
func (p *Partition) AppendReplicated(batches []byte) error {
	p.mu.Lock()
	st := p.state.Load()
	var err error
	switch {
	case p.mu.closed:
		err = ErrClosed
	case p.leads(st):
		err = ErrNotFollower
	default:
		_, err = p.log.AppendReplicated(batches)
	}
	if err != nil {
		p.mu.Unlock()
		return err
	}
	waiters := p.takeWaitersLocked()
	p.mu.Unlock()
	wake(waiters)
	return nil
}

// UpdateHighWatermarkFromLeader sets a follower's high watermark from
// the leader's fetch response: the leader's high watermark, within the
// follower's log start and end, as Kafka's UnifiedLog.updateHighWatermark
// (so it may move back, after a truncation). It returns the new high
// watermark, or ErrNotFollower on the leader.
func (p *Partition) UpdateHighWatermarkFromLeader(leaderHW int64) (int64, error) {
	p.mu.Lock()
	st := p.state.Load()
	if p.leads(st) {
		p.mu.Unlock()
		return p.hw.Load(), ErrNotFollower
	}
	hw := min(max(leaderHW, p.log.StartOffset()), p.log.EndOffset())
	advanced := hw > p.hw.Load()
	p.hw.Store(hw)
	p.hwKnown.Store(true)
	var waiters []chan<- struct{}
	if advanced {
		waiters = p.takeWaitersLocked()
	}
	p.mu.Unlock()
	wake(waiters)
	return hw, nil
}

// asFollower runs change with p.mu held if p is open and follows: the
// log changes a follower's fetcher makes. It returns ErrClosed or
// ErrNotFollower otherwise.
func (p *Partition) asFollower(change func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return ErrClosed
	case p.leads(p.state.Load()):
		return ErrNotFollower
	}
	return change()
}

// RestartAt empties a follower's log and restarts it at offset, its
// leader's log start, when its log end fell below it (Kafka's
// truncateFullyAndStartAt); the high watermark restarts there too. It
// returns ErrNotFollower on the leader.
func (p *Partition) RestartAt(offset int64) error {
	return p.asFollower(func() error {
		if err := p.log.Reset(offset); err != nil {
			return err
		}
		p.hw.Store(offset)
		return nil
	})
}

// AdvanceLogStart raises a follower's log start to its leader's, as far as
// its own high watermark (Kafka's follower does so after each fetch), so
// that what retention or DeleteRecords removed on the leader goes here
// too. A lower start is a no-op. It returns ErrNotFollower on the leader.
func (p *Partition) AdvanceLogStart(leaderStart int64) error {
	return p.asFollower(func() error {
		start := min(leaderStart, p.hw.Load())
		if start <= p.log.StartOffset() {
			return nil
		}
		return p.log.SetStartOffset(start)
	})
}

// TruncateTo truncates a follower's log to offset (where
// store/log.FollowerTruncation says, from the leader's
// OffsetForLeaderEpoch answer) before it fetches; the high watermark
// follows the log end down. It returns ErrNotFollower on the leader.
func (p *Partition) TruncateTo(offset int64) error {
	return p.asFollower(func() error {
		if err := p.log.Truncate(offset); err != nil {
			return err
		}
		p.hw.Store(min(p.hw.Load(), p.log.EndOffset()))
		return nil
	})
}
