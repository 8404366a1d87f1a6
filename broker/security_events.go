package broker

import (
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/broker/wire"
)

// Security events: the requests the authorizer denied (authorize.go) and
// the failed authentications (SaslHandshake, SaslAuthenticate) go to the
// event ring, for klog events and the TUI, so that a developer sees why
// an application was refused. A client retrying in a loop, or a flood of
// failed logins, must not push every other event out of the ring, so they
// are bounded twice:
//
//   - coalesced: the first of a kind of event (the same principal, host,
//     client id, API, operation and resource for a denial; principal,
//     host, client id, mechanism and reason for a failed login) is
//     recorded at once; its repeats in the securityWindow that follows are
//     counted, and at the window's end (the node's maintenance tick, or
//     AdvanceClock) one event, the last repeat's, records them. Each
//     event stands for itself and the detail "repeats" more (the
//     repeats not recorded each): a thousand denials of one request make
//     two events, the second with repeats=998.
//   - rate-limited: the events recorded, first ones and counts alike,
//     spend a budget of securityBurst that refills by one each
//     securityRefill; those the budget refuses are counted and the count
//     goes to the next event recorded (detail "suppressed"). Distinct
//     denials and logins (a user name a try) add at most one event a
//     second to the ring after the first securityBurst.
//
// At most maxSecurityKeys kinds are remembered, each with one event's
// detail (its strings bounded as the ring bounds them).
//
// Times are the node's clock's (Config.Clock), so that tests advance
// through a window without waiting it out.

const (
	securityWindow  = 10 * time.Second
	securityBurst   = 50
	securityRefill  = time.Second
	maxSecurityKeys = 1024
)

// securityKey is what makes two security events repeats of one another.
type securityKey struct {
	kind                      events.Kind
	principal, host, clientID string
	api                       int16
	op                        kmsg.ACLOperation
	rt                        kmsg.ACLResourceType
	// name is a denial's resource name, a failed login's mechanism;
	// reason a failed login's reason.
	name, reason string
}

// securityEvents coalesces and rate-limits the security events.
type securityEvents struct {
	mu struct {
		sync.Mutex
		seen map[securityKey]*securitySeen
		// tokens is the budget left at refilled.
		tokens     int
		refilled   time.Time
		suppressed int64
	}
}

// securitySeen is one kind of event in its window.
type securitySeen struct {
	at      time.Time    // when the window began: its first event was recorded
	repeats int64        // seen since, not recorded
	last    events.Event // the last repeat
}

// spendLocked takes one event from the budget at now; false when it is
// spent.
func (s *securityEvents) spendLocked(now time.Time) bool {
	if s.mu.refilled.IsZero() {
		s.mu.tokens, s.mu.refilled = securityBurst, now
	}
	if gained := int(now.Sub(s.mu.refilled) / securityRefill); gained > 0 {
		s.mu.tokens = min(securityBurst, s.mu.tokens+gained)
		s.mu.refilled = s.mu.refilled.Add(time.Duration(gained) * securityRefill)
	}
	if s.mu.tokens == 0 {
		return false
	}
	s.mu.tokens--
	return true
}

// emitLocked is e ready for the ring: the count of suppressed events
// added to it.
func (s *securityEvents) emitLocked(e events.Event) events.Event {
	if s.mu.suppressed > 0 {
		e.Detail["suppressed"] = s.mu.suppressed
		s.mu.suppressed = 0
	}
	return e
}

// admit is what to record of event e of kind k seen at now: e itself when
// it is the first of its kind in a window, nothing when it repeats one
// (it is counted), nothing when the budget refuses it.
func (s *securityEvents) admit(k securityKey, e events.Event, now time.Time) (events.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.seen == nil {
		s.mu.seen = map[securityKey]*securitySeen{}
	}
	if seen := s.mu.seen[k]; seen != nil && now.Sub(seen.at) < securityWindow {
		e.Clip()
		seen.repeats++
		seen.last = e
		return events.Event{}, false
	}
	if len(s.mu.seen) >= maxSecurityKeys {
		s.pruneLocked(now)
	}
	if !s.spendLocked(now) {
		s.mu.suppressed++
		return events.Event{}, false
	}
	if seen := s.mu.seen[k]; seen != nil && seen.repeats > 0 {
		// A window ended with repeats the tick has not recorded yet.
		e.Detail["repeats"] = seen.repeats
	}
	if len(s.mu.seen) < maxSecurityKeys || s.mu.seen[k] != nil {
		s.mu.seen[k] = &securitySeen{at: now}
	}
	return s.emitLocked(e), true
}

// pruneLocked forgets the kinds whose window ended with no repeat to
// record.
func (s *securityEvents) pruneLocked(now time.Time) {
	for k, seen := range s.mu.seen {
		if seen.repeats == 0 && now.Sub(seen.at) >= securityWindow {
			delete(s.mu.seen, k)
		}
	}
}

// flush returns the events that record the repeats of the windows ended
// by now, as far as the budget allows (the others wait for the next
// flush), and forgets the kinds whose window ended quiet.
func (s *securityEvents) flush(now time.Time) []events.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []events.Event
	for k, seen := range s.mu.seen {
		switch {
		case now.Sub(seen.at) < securityWindow:
		case seen.repeats == 0:
			delete(s.mu.seen, k)
		case s.spendLocked(now):
			e := seen.last
			e.Time = time.Time{}
			if seen.repeats > 1 {
				e.Detail["repeats"] = seen.repeats - 1
			}
			out = append(out, s.emitLocked(e))
			seen.at, seen.repeats, seen.last = now, 0, events.Event{}
		default:
			// The budget is spent: the repeats wait for the next flush.
		}
	}
	return out
}

// recordSecurity records security event e of kind k in the ring, unless
// it repeats one recorded in the last securityWindow or the budget
// refuses it.
func (n *Node) recordSecurity(k securityKey, e events.Event) {
	if e, ok := n.security.admit(k, e, n.clock.Now()); ok {
		n.events.Append(e)
	}
}

// flushSecurityEvents records the counts of the security events repeated
// in the windows that ended.
func (n *Node) flushSecurityEvents() {
	for _, e := range n.security.flush(n.clock.Now()) {
		n.events.Append(e)
	}
}

// recordAuthFailure records a failed authentication in the event ring:
// user is the principal the client claimed ("" when it named none), msg
// what it was told, reason why.
func (n *Node) recordAuthFailure(rc *wire.RequestContext, mechanism, user, msg, reason string) {
	_, host := n.principal(rc)
	e := events.Event{Kind: events.AuthenticationFailed, Partition: -1, Detail: map[string]any{
		"principal": user, "client_id": rc.ClientID, "address": rc.Remote, "listener": rc.Listener,
		"api": kmsg.NameForKey(rc.Header.Key), "mechanism": mechanism, "error": msg, "reason": reason,
	}}
	n.recordSecurity(securityKey{
		kind: events.AuthenticationFailed, principal: events.Clip(user), host: host, clientID: events.Clip(rc.ClientID),
		api: rc.Header.Key, name: events.Clip(mechanism), reason: events.Clip(reason),
	}, e)
}

// recordTLSFailure records a connection that listener refused at its TLS
// handshake: an authentication that failed before any request, its
// mechanism "TLS".
func (n *Node) recordTLSFailure(listener, remote string, f wire.TLSFailure) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	n.logger.Debug("TLS handshake failed", "listener", listener, "remote", remote, "reason", f.Reason, "err", f.Err)
	principal := ""
	if f.Subject != "" {
		principal = "subject " + f.Subject
	}
	e := events.Event{Kind: events.AuthenticationFailed, Partition: -1, Detail: map[string]any{
		"principal": principal, "address": remote, "listener": listener,
		"mechanism": "TLS", "error": f.Err.Error(), "reason": f.Reason,
	}}
	n.recordSecurity(securityKey{
		kind: events.AuthenticationFailed, principal: events.Clip(principal), host: host,
		api: -1, name: "TLS", reason: f.Reason,
	}, e)
}
