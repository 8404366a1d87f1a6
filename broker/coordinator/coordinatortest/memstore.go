// Package coordinatortest holds what the tests of coordinators on the
// runtime share: an in-memory Store.
package coordinatortest

import (
	"context"
	"sync"

	"github.com/klogdev/klog/broker/coordinator"
)

// MemStore is an in-memory coordinator.Store.
type MemStore struct {
	// Gate, when set before the store is used, holds every Replay until
	// it is closed (or the replay's context ends).
	Gate chan struct{}

	mu    sync.Mutex
	parts map[int32][]coordinator.Record
	fail  error // returned by Append when set
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{parts: make(map[int32][]coordinator.Record)}
}

// Append appends records to partition p, unless SetFail set an error or
// ctx has ended.
func (s *MemStore) Append(ctx context.Context, p int32, records []coordinator.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.parts[p] = append(s.parts[p], records...)
	return nil
}

// Replay calls fn with the records of partition p, in order.
func (s *MemStore) Replay(ctx context.Context, p int32, fn func(coordinator.Record) error) error {
	if s.Gate != nil {
		select {
		case <-s.Gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, r := range s.Records(p) {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Write appends records to partition p as they are, whatever SetFail
// set: the records a test writes itself (markers, replayed state).
func (s *MemStore) Write(p int32, records ...coordinator.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parts[p] = append(s.parts[p], records...)
}

// Records returns a copy of the records of partition p.
func (s *MemStore) Records(p int32) []coordinator.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]coordinator.Record(nil), s.parts[p]...)
}

// SetFail makes Append return err from now on; nil makes it succeed.
func (s *MemStore) SetFail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// Failure is the error SetFail set.
func (s *MemStore) Failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail
}
