package share

import (
	"sync"
	"time"
)

// Key names a share-partition: a group's view of one partition.
type Key struct {
	Group     string
	TopicID   [16]byte
	Partition int32
}

// Manager holds the share-partitions this node serves as leader and its
// share sessions; it is safe for concurrent use. Each share-partition has
// its own lock, so requests of one group on different partitions, and of
// different groups, do not wait on each other.
type Manager struct {
	cfg      Config
	now      func() time.Time
	Sessions *Sessions
	mu       struct {
		sync.Mutex
		m map[Key]*entry
	}
}

// entry is one share-partition with its lock and its wake-up.
type entry struct {
	mu          sync.Mutex
	p           *Partition
	leaderEpoch int32
	wake        chan struct{} // closed, and replaced, when records may have become available
}

// NewManager makes a manager whose share-partitions follow cfg and whose
// locks are timed by now (the node's clock).
func NewManager(cfg Config, now func() time.Time, sessions *Sessions) *Manager {
	m := &Manager{cfg: cfg, now: now, Sessions: sessions}
	m.mu.m = make(map[Key]*entry)
	return m
}

// Now is the manager's clock.
func (m *Manager) Now() time.Time { return m.now() }

// LockDuration is how long an acquisition holds its records.
func (m *Manager) LockDuration() time.Duration { return m.cfg.LockDuration }

// View is what With reports of a share-partition after its function ran:
// a channel closed when records may have become available (an
// acknowledgement, a release, a lapsed lock), and the earliest lock
// deadline, when a waiting fetch should look again.
type View struct {
	Wake     <-chan struct{}
	Deadline time.Time // zero: no record is acquired
}

// With runs fn on key's share-partition, creating it at start() when the
// node has none for this leader epoch (a share-partition of an earlier
// epoch is dropped: its state is not persisted yet). Before fn, locks that
// lapsed by now are given back and records below logStart dropped. fn
// reports whether it made records available, which wakes waiting fetches.
func (m *Manager) With(key Key, leaderEpoch int32, logStart int64, start func() int64, fn func(p *Partition, now time.Time) bool) View {
	e := m.entry(key, leaderEpoch, start)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := m.now()
	changed := e.p.Expire(now)
	e.p.AdvanceLogStart(logStart)
	if fn != nil && fn(e.p, now) {
		changed = true
	}
	if changed {
		close(e.wake)
		e.wake = make(chan struct{})
	}
	v := View{Wake: e.wake}
	v.Deadline, _ = e.p.NextDeadline()
	return v
}

// entry is key's share-partition for leaderEpoch, made when missing.
func (m *Manager) entry(key Key, leaderEpoch int32, start func() int64) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.mu.m[key]
	if e == nil || e.leaderEpoch != leaderEpoch {
		e = &entry{p: NewPartition(m.cfg, start()), leaderEpoch: leaderEpoch, wake: make(chan struct{})}
		m.mu.m[key] = e
	}
	return e
}

// Lookup runs fn on key's share-partition if the node has one, under its
// lock, without changing it; for describing and tests.
func (m *Manager) Lookup(key Key, fn func(p *Partition)) bool {
	m.mu.Lock()
	e := m.mu.m[key]
	m.mu.Unlock()
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e.p)
	return true
}

// ReleaseMember gives back the records member of group holds on parts
// (every share-partition of the group when parts is nil), as a member's
// leaving or the close of its share session does.
func (m *Manager) ReleaseMember(group, member string, parts []TopicPartition) {
	m.mu.Lock()
	var es []*entry
	for k, e := range m.mu.m {
		if k.Group != group {
			continue
		}
		if parts != nil && !containsPartition(parts, TopicPartition{k.TopicID, k.Partition}) {
			continue
		}
		es = append(es, e)
	}
	m.mu.Unlock()
	for _, e := range es {
		e.mu.Lock()
		if e.p.ReleaseMember(member) {
			close(e.wake)
			e.wake = make(chan struct{})
		}
		e.mu.Unlock()
	}
}

// MemberGone is a member's leaving its group (or being fenced): its share
// session is closed and every record it holds given back.
func (m *Manager) MemberGone(group, member string) {
	_, _ = m.Sessions.Close(SessionKey{Group: group, Member: member})
	m.ReleaseMember(group, member, nil)
}

func containsPartition(parts []TopicPartition, tp TopicPartition) bool {
	for _, p := range parts {
		if p == tp {
			return true
		}
	}
	return false
}
