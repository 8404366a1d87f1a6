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
//
// Lock order: an entry's lock, then the manager's; the manager's is never
// held while taking an entry's.
type Manager struct {
	cfg      Config
	now      func() time.Time
	Sessions *Sessions
	mu       struct {
		sync.Mutex
		m    map[Key]*entry
		wake map[string]chan struct{} // per group: closed, and replaced, when records may have become available
	}
}

// entry is one share-partition with its lock.
type entry struct {
	mu          sync.Mutex
	p           *Partition
	leaderEpoch int32
}

// NewManager makes a manager whose share-partitions follow cfg and whose
// locks are timed by now (the node's clock).
func NewManager(cfg Config, now func() time.Time, sessions *Sessions) *Manager {
	m := &Manager{cfg: cfg, now: now, Sessions: sessions}
	m.mu.m = make(map[Key]*entry)
	m.mu.wake = make(map[string]chan struct{})
	return m
}

// Now is the manager's clock.
func (m *Manager) Now() time.Time { return m.now() }

// LockDuration is how long an acquisition holds its records.
func (m *Manager) LockDuration() time.Duration { return m.cfg.LockDuration }

// Wake is a channel closed when records of group's share-partitions may
// have become available (an acknowledgement, a release, a lapsed lock): a
// fetch that found nothing takes it before it looks, and waits on it.
func (m *Manager) Wake(group string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := m.mu.wake[group]
	if ch == nil {
		ch = make(chan struct{})
		m.mu.wake[group] = ch
	}
	return ch
}

// wake closes group's Wake channel.
func (m *Manager) wake(group string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch := m.mu.wake[group]; ch != nil {
		close(ch)
		delete(m.mu.wake, group)
	}
}

// With runs fn on key's share-partition, creating it at start() when the
// node has none for this leader epoch (a share-partition of an earlier
// epoch is dropped: its state is not persisted yet). Before fn, locks that
// lapsed by now are given back and records below logStart dropped. fn
// reports whether it made records available, which wakes the group's
// waiting fetches. With returns the earliest lock deadline afterwards
// (zero when no record is acquired): when a waiting fetch should look
// again.
func (m *Manager) With(key Key, leaderEpoch int32, logStart int64, start func() int64, fn func(p *Partition, now time.Time) bool) time.Time {
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
		m.wake(key.Group)
	}
	deadline, _ := e.p.NextDeadline()
	return deadline
}

// entry is key's share-partition for leaderEpoch, made when missing.
func (m *Manager) entry(key Key, leaderEpoch int32, start func() int64) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.mu.m[key]
	if e == nil || e.leaderEpoch != leaderEpoch {
		e = &entry{p: NewPartition(m.cfg, start()), leaderEpoch: leaderEpoch}
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
	released := false
	for _, e := range es {
		e.mu.Lock()
		released = e.p.ReleaseMember(member) || released
		e.mu.Unlock()
	}
	if released {
		m.wake(group)
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
