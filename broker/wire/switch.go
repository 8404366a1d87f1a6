package wire

import (
	"errors"
	"io"
	"sync"
)

// ErrIsolated is a connection refused or cut by an isolated Switch.
var ErrIsolated = errors.New("wire: isolated from the other nodes")

// Switch is a fault switch over a set of connections, for isolation
// tests and `klog node isolate`: it tracks the connections given to it,
// and Isolate closes them all and refuses new ones until Heal. A nil
// Switch tracks nothing and is never isolated.
type Switch struct {
	mu struct {
		sync.Mutex
		isolated bool
		conns    map[io.Closer]struct{}
	}
}

// Track adds c to the connections Isolate closes; untrack takes it off
// again (call it when c is closed). While the switch is isolated c is not
// tracked and Track returns ErrIsolated: the caller closes c. Checked
// under the lock Isolate cuts under, a connection made while it cuts is
// refused, never left open behind the cut.
func (s *Switch) Track(c io.Closer) (untrack func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.isolated {
		return nil, ErrIsolated
	}
	if s.mu.conns == nil {
		s.mu.conns = make(map[io.Closer]struct{})
	}
	s.mu.conns[c] = struct{}{}
	return func() {
		s.mu.Lock()
		delete(s.mu.conns, c)
		s.mu.Unlock()
	}, nil
}

// Isolated reports whether the switch refuses connections.
func (s *Switch) Isolated() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.isolated
}

// Isolate closes every tracked connection and refuses new ones until
// Heal. It returns how many it closed.
func (s *Switch) Isolate() int {
	s.mu.Lock()
	s.mu.isolated = true
	conns := s.mu.conns
	s.mu.conns = nil
	s.mu.Unlock()
	for c := range conns {
		c.Close()
	}
	return len(conns)
}

// Heal ends Isolate.
func (s *Switch) Heal() {
	s.mu.Lock()
	s.mu.isolated = false
	s.mu.Unlock()
}
