package share

import (
	"slices"
	"sync"
)

// The share session epochs with a meaning (Kafka's ShareRequestMetadata).
const (
	InitialEpoch int32 = 0
	FinalEpoch   int32 = -1
)

// TopicPartition names a partition by topic id, as share requests do.
type TopicPartition struct {
	TopicID   [16]byte
	Partition int32
}

// SessionKey names a share session: one per group and member on a node.
type SessionKey struct {
	Group, Member string
}

// session is one open share session.
type session struct {
	epoch int32 // the epoch the next request must carry
	parts []TopicPartition
	set   map[TopicPartition]struct{}
}

func newSession(epoch int32, parts []TopicPartition) *session {
	sess := &session{epoch: epoch, set: make(map[TopicPartition]struct{}, len(parts))}
	for _, tp := range parts {
		sess.parts = append(sess.parts, tp)
		sess.set[tp] = struct{}{}
	}
	return sess
}

// Sessions is the node's cache of share sessions, safe for concurrent
// use, holding at most max sessions of at most maxPartitions partitions
// each.
type Sessions struct {
	max, maxPartitions int
	mu                 struct {
		sync.Mutex
		m map[SessionKey]*session
	}
}

// NewSessions makes a cache of at most max sessions
// (group.share.max.share.sessions) of at most maxPartitions partitions.
func NewSessions(max, maxPartitions int) *Sessions {
	s := &Sessions{max: max, maxPartitions: maxPartitions}
	s.mu.m = make(map[SessionKey]*session)
	return s
}

// Open starts key's session afresh (epoch 0) on parts, replacing the one it
// had; the next request carries epoch 1. ErrSessionLimit when the cache is
// full of other sessions.
func (s *Sessions) Open(key SessionKey, parts []TopicPartition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.m[key]; !ok && len(s.mu.m) >= s.max {
		return ErrSessionLimit
	}
	sess := newSession(1, nil)
	if err := s.addLocked(sess, parts); err != nil {
		return err
	}
	s.mu.m[key] = sess
	return nil
}

// Next takes a ShareFetch's epoch within key's session, adds add and drops
// forget, and returns the session's partitions. ErrSessionNotFound,
// ErrInvalidSessionEpoch and ErrSessionTooLarge change nothing.
func (s *Sessions) Next(key SessionKey, epoch int32, add, forget []TopicPartition) ([]TopicPartition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, err := s.checkLocked(key, epoch)
	if err != nil {
		return nil, err
	}
	gone := make(map[TopicPartition]struct{}, len(forget))
	for _, tp := range forget {
		gone[tp] = struct{}{}
	}
	next := newSession(sess.epoch, slices.DeleteFunc(slices.Clone(sess.parts), func(tp TopicPartition) bool {
		_, ok := gone[tp]
		return ok
	}))
	if err := s.addLocked(next, add); err != nil {
		return nil, err
	}
	next.epoch = nextEpoch(sess.epoch)
	s.mu.m[key] = next
	return slices.Clone(next.parts), nil
}

// Ack takes a ShareAcknowledge's epoch within key's session: the next
// epoch advances it, FinalEpoch is let through (Close ends the session).
func (s *Sessions) Ack(key SessionKey, epoch int32) error {
	if epoch == InitialEpoch {
		return ErrInvalidSessionEpoch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch == FinalEpoch {
		if _, ok := s.mu.m[key]; !ok {
			return ErrSessionNotFound
		}
		return nil
	}
	sess, err := s.checkLocked(key, epoch)
	if err != nil {
		return err
	}
	sess.epoch = nextEpoch(sess.epoch)
	return nil
}

// Close ends key's session and returns its partitions;
// ErrSessionNotFound when it had none.
func (s *Sessions) Close(key SessionKey) ([]TopicPartition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.mu.m[key]
	if !ok {
		return nil, ErrSessionNotFound
	}
	delete(s.mu.m, key)
	return sess.parts, nil
}

// Exists reports whether key has a session.
func (s *Sessions) Exists(key SessionKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.mu.m[key]
	return ok
}

// Len is the number of open sessions.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.m)
}

func (s *Sessions) checkLocked(key SessionKey, epoch int32) (*session, error) {
	sess, ok := s.mu.m[key]
	if !ok {
		return nil, ErrSessionNotFound
	}
	if sess.epoch != epoch {
		return nil, ErrInvalidSessionEpoch
	}
	return sess, nil
}

// addLocked adds parts not yet in sess, within the partition bound.
func (s *Sessions) addLocked(sess *session, parts []TopicPartition) error {
	for _, tp := range parts {
		if _, ok := sess.set[tp]; ok {
			continue
		}
		if len(sess.parts) >= s.maxPartitions {
			return ErrSessionTooLarge
		}
		sess.parts = append(sess.parts, tp)
		sess.set[tp] = struct{}{}
	}
	return nil
}

// nextEpoch is the epoch after e, wrapping past the largest to 1, as
// Kafka's ShareRequestMetadata.nextEpoch.
func nextEpoch(e int32) int32 {
	if e < 0 || e == 1<<31-1 {
		return 1
	}
	return e + 1
}
