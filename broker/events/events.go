// Package events is a node's recent-events ring: a bounded record of what
// the node saw happen (ISR shrinks and expansions, leader changes of its
// replicas, segment rolls, cleaning passes, group rebalances, denied
// requests and failed logins), for the admin API's GET /v1/events, klog
// events and the TUI's timeline.
//
// The ring holds a fixed number of events; appending to a full ring drops
// the oldest. Each event has a sequence number, one more than the one
// before, so that a reader asking for the events after the last one it saw
// knows how many it missed when the ring dropped them first. Numbers start
// at 1 with each Ring: Run tells one node run's numbers from the next's.
//
// A reader waits for new events on a channel (Changed) that the next
// Append closes: waiting costs the waiter nothing but its select, and the
// ring keeps no list of waiters.
//
// It imports nothing of the rest of klog; the node appends from wherever an
// event happens, with the caller's locks held, so Append only takes the
// ring's own mutex for a copy.
package events

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultCapacity is the number of events a node keeps.
const DefaultCapacity = 1024

// maxString bounds each string an event keeps (a group id, a reason), so
// that a full ring's memory stays bounded whatever names clients choose.
const maxString = 256

// Kind names what happened.
type Kind string

// The kinds of event.
const (
	// ISRShrink: replicas left a partition's ISR (detail: old_isr,
	// new_isr, removed, leader_epoch, partition_epoch).
	ISRShrink Kind = "isr_shrink"
	// ISRExpand: replicas joined a partition's ISR (detail: old_isr,
	// new_isr, added, leader_epoch, partition_epoch).
	ISRExpand Kind = "isr_expand"
	// LeaderChange: the node's replica of a partition got a new leader or
	// leader epoch: it became leader, or follower of another node, or the
	// partition has no leader (detail: leader, old_leader, leader_epoch,
	// role).
	LeaderChange Kind = "leader_change"
	// SegmentRoll: a partition's active segment was rolled (detail:
	// reason, old_base, new_base).
	SegmentRoll Kind = "segment_roll"
	// Cleaning: the log cleaner cleaned a partition (detail: trigger,
	// first_dirty, end, bytes_removed, records_removed, segments_before,
	// segments_after).
	Cleaning Kind = "cleaning"
	// Rebalance: a consumer group's generation or epoch changed, or a
	// classic group began a rebalance (detail: state, generation,
	// members, protocol, reason).
	Rebalance Kind = "rebalance"
	// AuthorizationDenied: the authorizer denied a request (detail:
	// principal, client_id, address, api, operation, resource_type,
	// resource_name, pattern_type, rule, reason, acl when an ACL
	// decided). Repeats are coalesced by the node: an event with
	// repeats=N stands for itself and N more of the same, not recorded
	// each; suppressed=N counts the security events a flood had
	// dropped before it.
	AuthorizationDenied Kind = "authorization_denied"
	// AuthenticationFailed: a SASL authentication failed (detail:
	// principal, the user the client claimed when it named one;
	// client_id, address, listener, api, mechanism, error, what the
	// client was told; reason, why), or an SSL or SASL_SSL listener
	// refused a connection at its TLS handshake (mechanism TLS;
	// principal "subject S" when the client sent a certificate; no
	// client_id or api), coalesced and counted as denials are.
	AuthenticationFailed Kind = "authentication_failed"
)

// Event is one thing that happened. Detail's values are strings, integers,
// bools or []int32. Append takes Detail over: neither its caller nor the
// readers change it afterwards.
type Event struct {
	// Seq and Time are set by Append.
	Seq  uint64
	Time time.Time
	Kind Kind
	// Topic and Partition name the partition of a partition's event;
	// Partition is -1 otherwise.
	Topic     string
	Partition int32
	// Group names the group of a rebalance.
	Group  string
	Detail map[string]any
}

// Ring is a bounded, concurrency-safe ring of events.
type Ring struct {
	run string
	now func() time.Time

	mu struct {
		sync.Mutex
		buf []Event
		// next is the sequence number of the next event; buf holds
		// those from max(1, next-len(buf)) to next-1, seq s at
		// (s-1)%len(buf).
		next uint64
		// changed is closed by the next Append; nil while nobody waits.
		changed chan struct{}
	}
}

// New returns an empty ring of capacity events (DefaultCapacity when
// capacity <= 0); now is its clock, nil for time.Now.
func New(capacity int, now func() time.Time) *Ring {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	if now == nil {
		now = time.Now
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r := &Ring{run: hex.EncodeToString(id[:]), now: now}
	r.mu.buf = make([]Event, capacity)
	r.mu.next = 1
	return r
}

// Run identifies this ring among a node's runs: sequence numbers restart
// at 1 with each.
func (r *Ring) Run() string { return r.run }

// Capacity is how many events the ring holds.
func (r *Ring) Capacity() int { return len(r.mu.buf) }

// Append records e, setting its sequence number and, when zero, its time,
// and wakes the waiters. A nil Ring records nothing.
func (r *Ring) Append(e Event) {
	if r == nil {
		return
	}
	e.Clip()
	r.mu.Lock()
	if e.Time.IsZero() {
		// Under the lock, so that the ring's own times follow its
		// sequence numbers.
		e.Time = r.now()
	}
	e.Seq = r.mu.next
	r.mu.buf[(e.Seq-1)%uint64(len(r.mu.buf))] = e
	r.mu.next++
	ch := r.mu.changed
	r.mu.changed = nil
	r.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// Clip cuts e's strings as the ring keeps them (Clip), its Detail's in
// place: for one who holds an event before appending it.
func (e *Event) Clip() {
	e.Topic, e.Group = Clip(e.Topic), Clip(e.Group)
	for k, v := range e.Detail {
		if s, ok := v.(string); ok && len(s) > maxString {
			e.Detail[k] = Clip(s)
		}
	}
}

// Page is what Since returns.
type Page struct {
	Events []Event
	// First is the sequence number of the oldest event held, Last of the
	// newest (0 and 0 while the ring is empty).
	First, Last uint64
	// Missed counts the events after the asked-for sequence number that
	// the ring dropped before they were read.
	Missed uint64
	// More says that limit cut the page short: ask again after the last
	// event returned.
	More bool
}

// Since returns the events after seq, oldest first, at most limit of them
// (limit <= 0: all held).
func (r *Ring) Since(seq uint64, limit int) Page {
	r.mu.Lock()
	defer r.mu.Unlock()
	var p Page
	next := r.mu.next
	if next == 1 {
		return p
	}
	p.Last = next - 1
	p.First = 1
	if held := uint64(len(r.mu.buf)); next-1 > held {
		p.First = next - held
	}
	from := seq + 1
	if from < p.First {
		p.Missed = p.First - from
		from = p.First
	}
	if from > p.Last {
		return p
	}
	n := p.Last - from + 1
	if limit > 0 && n > uint64(limit) {
		n, p.More = uint64(limit), true
	}
	p.Events = make([]Event, 0, n)
	for s := from; s < from+n; s++ {
		p.Events = append(p.Events, r.mu.buf[(s-1)%uint64(len(r.mu.buf))])
	}
	return p
}

// Changed returns a channel closed once the ring holds an event after
// seq: already closed when it does.
func (r *Ring) Changed(seq uint64) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.next-1 > seq {
		return closed
	}
	if r.mu.changed == nil {
		r.mu.changed = make(chan struct{})
	}
	return r.mu.changed
}

// Waiting reports whether a reader waits for the next event: whether
// Changed handed out a channel that no Append has closed yet.
func (r *Ring) Waiting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.changed != nil
}

var closed = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Clip cuts s to maxString bytes, at a rune boundary.
func Clip(s string) string {
	if len(s) <= maxString {
		return s
	}
	n := maxString
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
