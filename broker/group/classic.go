package group

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// protocol is one assignment protocol a classic member supports.
type protocol struct {
	name     string
	metadata []byte
}

// member is one member of a classic group.
type member struct {
	id                string
	instanceID        *string
	clientID          string
	clientHost        string
	principal         string // WithPrincipal's; "" when unknown
	sessionTimeout    time.Duration
	rebalanceTimeout  time.Duration
	protocolType      string
	protocols         []protocol
	assignment        []byte
	heartbeatDeadline time.Time
	synced            bool // has synced (or been assigned) in this generation

	joinCh chan joinResult // non-nil while a JoinGroup waits
	syncCh chan syncResult // non-nil while a SyncGroup waits
}

// joinResult is the answer to one JoinGroup.
type joinResult struct {
	code           int16
	generation     int32
	protocolType   string
	protocol       string
	leader         string
	memberID       string
	members        []kmsg.JoinGroupResponseMember
	skipAssignment bool
}

// syncResult is the answer to one SyncGroup.
type syncResult struct {
	code         int16
	protocolType string
	protocol     string
	assignment   []byte
}

func (m *member) answerJoin(r joinResult) {
	if m.joinCh != nil {
		m.joinCh <- r // one-slot buffer, one answer per channel
		m.joinCh = nil
	}
}

func (m *member) answerSync(r syncResult) {
	if m.syncCh != nil {
		m.syncCh <- r
		m.syncCh = nil
	}
}

func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

// matches reports whether the member's protocols equal ps, in order.
func (m *member) matches(ps []kmsg.JoinGroupRequestProtocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i, p := range ps {
		if p.Name != m.protocols[i].name || !bytes.Equal(p.Metadata, m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

func toProtocols(ps []kmsg.JoinGroupRequestProtocol) []protocol {
	out := make([]protocol, len(ps))
	for i, p := range ps {
		out[i] = protocol{name: p.Name, metadata: p.Metadata}
	}
	return out
}

func (g *group) sortedMembers() []*member { return byKey(g.members) }

// byKey lists m's values in key order: a group's members by member id.
func byKey[T any](m map[string]T) []T {
	out := make([]T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func (g *group) maxRebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

func (g *group) full() bool { return len(g.members)+len(g.pending) >= g.c.cfg.MaxSize }

// JoinGroup joins a member to a classic group; it returns when the join
// phase of the rebalance completes (or at once with an error).
func (c *Coordinator) JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	return c.startJoin(ctx, req).wait(ctx)
}

// joinWait is a JoinGroup handed to its group, waiting for its answer.
// answer is a JoinGroup's or SyncGroup's result to come: now if the
// coordinator answered at once, else from ch once the group's state
// machine gives it, or NOT_COORDINATOR if the group's actor ends first
// (done), or REBALANCE_IN_PROGRESS if the request's time runs out.
type answer[R any] struct {
	done <-chan struct{}
	ch   chan R
	now  *R
}

// wait blocks for the result; gone and expired are the results of an
// ended actor and of an expired request.
func (a *answer[R]) wait(ctx context.Context, gone, expired R) R {
	if a.now != nil {
		return *a.now
	}
	select {
	case r := <-a.ch:
		return r
	case <-a.done:
		return gone
	case <-ctx.Done():
		return expired
	}
}

// poll returns the result if it is there.
func (a *answer[R]) poll() (R, bool) {
	if a.now != nil {
		return *a.now, true
	}
	select {
	case r := <-a.ch:
		a.now = &r
		return r, true
	default:
		var zero R
		return zero, false
	}
}

type joinWait struct {
	req *kmsg.JoinGroupRequest
	answer[joinResult]
}

func (c *Coordinator) startJoin(ctx context.Context, req *kmsg.JoinGroupRequest) *joinWait {
	w := &joinWait{req: req}
	switch {
	case req.Group == "":
		w.now = errJoin(kerr.InvalidGroupID)
		return w
	case !c.validSession(req.SessionTimeoutMillis):
		w.now = errJoin(kerr.InvalidSessionTimeout)
		return w
	}
	ci := clientFrom(ctx)
	done, code := c.run(ctx, req.Group, req.MemberID == "", func(g *group) {
		if g == nil {
			w.now = unknownJoiner(req.MemberID)
			return
		}
		w.ch, w.now = g.join(req, ci)
	})
	if code != 0 && code != errGroupMissing {
		w.now = &joinResult{code: code}
	}
	w.done = done
	return w
}

func (w *joinWait) wait(ctx context.Context) *kmsg.JoinGroupResponse {
	return w.fill(w.answer.wait(ctx,
		joinResult{code: kerr.NotCoordinator.Code}, joinResult{code: kerr.RebalanceInProgress.Code}))
}

// poll returns the answer if it is there.
func (w *joinWait) poll() (*kmsg.JoinGroupResponse, bool) {
	r, ok := w.answer.poll()
	if !ok {
		return nil, false
	}
	return w.fill(r), true
}

func (w *joinWait) fill(r joinResult) *kmsg.JoinGroupResponse {
	resp := w.req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode = r.code
	resp.Generation = -1
	resp.MemberID = w.req.MemberID
	if r.memberID != "" {
		resp.MemberID = r.memberID
	}
	if r.code != 0 {
		if r.code == kerr.UnknownMemberID.Code && r.memberID == "" {
			resp.MemberID = "" // a member removed while it waited
		}
		return resp
	}
	resp.Generation = r.generation
	pt, p := r.protocolType, r.protocol
	resp.ProtocolType, resp.Protocol = &pt, &p
	resp.LeaderID = r.leader
	resp.SkipAssignment = r.skipAssignment
	resp.Members = r.members
	return resp
}

func (c *Coordinator) validSession(ms int32) bool {
	d := time.Duration(ms) * time.Millisecond
	return d >= c.cfg.MinSessionTimeout && d <= c.cfg.MaxSessionTimeout
}

func errJoin(code *kerr.Error) *joinResult { return &joinResult{code: code.Code} }

// unknownJoiner answers a JoinGroup naming a member the group does not
// have (or a group that does not exist): UNKNOWN_MEMBER_ID with the
// member id it sent, as Kafka's GroupMetadataManager answers it.
func unknownJoiner(id string) *joinResult {
	return &joinResult{code: kerr.UnknownMemberID.Code, memberID: id}
}

// join handles a JoinGroup inside the actor: either an answer now, or a
// channel that gets the answer when the join phase completes.
func (g *group) join(req *kmsg.JoinGroupRequest, ci clientInfo) (chan joinResult, *joinResult) {
	if g.typ == typeShare {
		return nil, errJoin(kerr.InconsistentGroupProtocol)
	}
	if g.typ == typeConsumer {
		if !g.cg.empty() {
			return nil, errJoin(kerr.InconsistentGroupProtocol)
		}
		g.typ, g.cg = typeClassic, nil
	}
	if g.state == stateDead {
		return nil, errJoin(kerr.CoordinatorNotAvailable)
	}
	if !g.supportsProtocols(req.ProtocolType, req.Protocols) {
		return nil, errJoin(kerr.InconsistentGroupProtocol)
	}
	if req.MemberID == "" {
		return g.joinUnknown(req, ci)
	}
	return g.joinKnown(req, ci)
}

// supportsProtocols reports whether a member of protocol type pt with
// protocols ps can join: the group's type, and a protocol every member
// supports.
func (g *group) supportsProtocols(pt string, ps []kmsg.JoinGroupRequestProtocol) bool {
	if pt == "" || len(ps) == 0 {
		return false
	}
	if len(g.members) == 0 {
		return true
	}
	if pt != g.protocolType {
		return false
	}
	for name := range g.candidates() {
		for _, p := range ps {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

// candidates returns the protocols every member supports.
func (g *group) candidates() map[string]bool {
	var set map[string]bool
	for _, m := range g.members {
		ms := make(map[string]bool, len(m.protocols))
		for _, p := range m.protocols {
			if set == nil || set[p.name] {
				ms[p.name] = true
			}
		}
		set = ms
	}
	return set
}

// selectProtocol picks the protocol for the next generation: among the
// protocols every member supports, the one most members prefer (each votes
// for its first supported candidate); ties go to the smaller name.
func (g *group) selectProtocol() string {
	cands := g.candidates()
	votes := make(map[string]int)
	for _, m := range g.members {
		for _, p := range m.protocols {
			if cands[p.name] {
				votes[p.name]++
				break
			}
		}
	}
	best, n := "", -1
	for name, v := range votes {
		if v > n || v == n && name < best {
			best, n = name, v
		}
	}
	return best
}

func (g *group) joinUnknown(req *kmsg.JoinGroupRequest, ci clientInfo) (chan joinResult, *joinResult) {
	newID := newMemberID(ci.id)
	if req.InstanceID != nil {
		if oldID, ok := g.statics[*req.InstanceID]; ok && g.members[oldID] != nil {
			return g.replaceStatic(g.members[oldID], newID, req)
		}
		if g.full() {
			return nil, errJoin(kerr.GroupMaxSizeReached)
		}
		return g.addMember(newID, req, ci), nil
	}
	if g.full() {
		return nil, errJoin(kerr.GroupMaxSizeReached)
	}
	if req.Version >= 4 {
		g.pending[newID] = g.now().Add(time.Duration(req.SessionTimeoutMillis) * time.Millisecond)
		return nil, &joinResult{code: kerr.MemberIDRequired.Code, memberID: newID}
	}
	return g.addMember(newID, req, ci), nil
}

func (g *group) joinKnown(req *kmsg.JoinGroupRequest, ci clientInfo) (chan joinResult, *joinResult) {
	id := req.MemberID
	if _, ok := g.pending[id]; ok {
		delete(g.pending, id)
		return g.addMember(id, req, ci), nil
	}
	if code := g.validateMember(id, req.InstanceID); code != 0 {
		if code == kerr.UnknownMemberID.Code {
			return nil, unknownJoiner(id)
		}
		return nil, &joinResult{code: code}
	}
	m := g.members[id]
	m.notePrincipal(ci.principal)
	switch g.state {
	case statePreparingRebalance:
		ch := g.updateMember(m, req)
		g.maybeCompleteJoin()
		return ch, nil
	case stateCompletingRebalance:
		if m.matches(req.Protocols) {
			r := g.currentJoin(m)
			return nil, &r
		}
		ch := g.updateMember(m, req)
		g.prepareRebalance("member changed protocols")
		return ch, nil
	case stateStable:
		if m.id == g.leader || !m.matches(req.Protocols) {
			ch := g.updateMember(m, req)
			g.prepareRebalance("member rejoined")
			return ch, nil
		}
		r := g.currentJoin(m)
		return nil, &r
	default:
		return nil, errJoin(kerr.UnknownMemberID)
	}
}

// validateMember checks that id is a member and that its instance id, if
// any, still belongs to it.
func (g *group) validateMember(id string, instanceID *string) int16 {
	if instanceID != nil {
		if mid, ok := g.statics[*instanceID]; ok && mid != id {
			return kerr.FencedInstanceID.Code
		}
	}
	if g.members[id] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// currentJoin is the JoinGroup answer for the current generation.
func (g *group) currentJoin(m *member) joinResult {
	r := joinResult{
		generation:   g.generation,
		protocolType: g.protocolType,
		protocol:     g.protocol,
		leader:       g.leader,
		memberID:     m.id,
	}
	if m.id == g.leader {
		r.members = g.joinMembers()
	}
	return r
}

func (g *group) joinMembers() []kmsg.JoinGroupResponseMember {
	var out []kmsg.JoinGroupResponseMember
	for _, m := range g.sortedMembers() {
		out = append(out, kmsg.JoinGroupResponseMember{MemberID: m.id, InstanceID: m.instanceID, ProtocolMetadata: m.metadataFor(g.protocol)})
	}
	return out
}

func (g *group) addMember(id string, req *kmsg.JoinGroupRequest, ci clientInfo) chan joinResult {
	m := &member{id: id, clientID: ci.id, clientHost: ci.host, principal: ci.principal, protocolType: req.ProtocolType}
	if req.InstanceID != nil {
		iid := *req.InstanceID
		m.instanceID = &iid
		g.statics[iid] = id
	}
	if len(g.members) == 0 {
		g.protocolType = req.ProtocolType
	}
	g.members[id] = m
	if g.leader == "" {
		g.leader = id
	}
	ch := g.updateMember(m, req)
	if g.state == statePreparingRebalance && g.initialJoin {
		g.newDuringDelay = true
	}
	g.prepareRebalance("member joined")
	return ch
}

// updateMember records a JoinGroup's timeouts and protocols and leaves the
// member waiting for the join phase.
func (g *group) updateMember(m *member, req *kmsg.JoinGroupRequest) chan joinResult {
	m.sessionTimeout = time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	m.rebalanceTimeout = m.sessionTimeout
	if req.Version >= 1 {
		m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	m.protocols = toProtocols(req.Protocols)
	m.answerJoin(joinResult{code: kerr.RebalanceInProgress.Code}) // a previous join nobody waits for
	m.joinCh = make(chan joinResult, 1)
	return m.joinCh
}

// replaceStatic gives the member of a known instance id a new member id,
// fencing the old one. A Stable group keeps its assignment without a
// rebalance when the selected protocol still fits.
func (g *group) replaceStatic(old *member, newID string, req *kmsg.JoinGroupRequest) (chan joinResult, *joinResult) {
	old.answerJoin(joinResult{code: kerr.FencedInstanceID.Code})
	old.answerSync(syncResult{code: kerr.FencedInstanceID.Code})
	prev := *old // no waiting channels left to copy
	prevLeader := g.leader
	delete(g.members, old.id)
	m := old
	m.id = newID
	g.members[newID] = m
	g.statics[*m.instanceID] = newID
	if g.leader == prev.id {
		g.leader = newID
	}
	switch g.state {
	case stateStable:
		ok := false
		for _, p := range req.Protocols {
			ok = ok || p.Name == g.protocol
		}
		if !ok || !g.supportsProtocols(req.ProtocolType, req.Protocols) {
			ch := g.updateMember(m, req)
			g.prepareRebalance("static member changed protocols")
			return ch, nil
		}
		m.sessionTimeout = time.Duration(req.SessionTimeoutMillis) * time.Millisecond
		if req.Version >= 1 {
			m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
		}
		m.protocols = toProtocols(req.Protocols)
		if err := g.append([]Record{g.metadataRecord()}); err != nil {
			// Undo: the old member id stays the member.
			delete(g.members, newID)
			*m = prev
			g.members[prev.id] = m
			g.statics[*m.instanceID] = prev.id
			g.leader = prevLeader
			return nil, &joinResult{code: appendErrorCode(err)}
		}
		m.heartbeatDeadline = g.now().Add(m.sessionTimeout)
		r := g.currentJoin(m)
		r.skipAssignment = m.id == g.leader
		return nil, &r
	case stateCompletingRebalance:
		ch := g.updateMember(m, req)
		g.prepareRebalance("static member rejoined")
		return ch, nil
	default: // PreparingRebalance
		ch := g.updateMember(m, req)
		g.maybeCompleteJoin()
		return ch, nil
	}
}

// prepareRebalance starts (or continues) the join phase.
func (g *group) prepareRebalance(reason string) {
	now := g.now()
	switch g.state {
	case statePreparingRebalance:
		g.maybeCompleteJoin()
		return
	case stateCompletingRebalance:
		for _, m := range g.members {
			m.assignment = nil
			m.answerSync(syncResult{code: kerr.RebalanceInProgress.Code})
		}
		g.syncDeadline = time.Time{}
	case stateStable:
		g.syncDeadline = time.Time{}
	}
	wasEmpty := g.state == stateEmpty
	g.setState(statePreparingRebalance)
	g.c.log.Debug("group rebalancing", "group", g.id, "reason", reason, "generation", g.generation)
	g.rebalanceReason = reason
	g.rebalanced(g.state.String(), g.generation, len(g.members), reason)
	if wasEmpty && g.c.cfg.InitialRebalanceDelay > 0 {
		g.initialJoin = true
		g.newDuringDelay = false
		g.joinDeadline = now.Add(g.c.cfg.InitialRebalanceDelay)
		g.initialMax = now.Add(max(g.maxRebalanceTimeout(), g.c.cfg.InitialRebalanceDelay))
		return
	}
	g.initialJoin = false
	g.joinDeadline = now.Add(g.maxRebalanceTimeout())
	g.maybeCompleteJoin()
}

// maybeCompleteJoin ends the join phase early once every member rejoined.
func (g *group) maybeCompleteJoin() {
	if g.state != statePreparingRebalance || g.initialJoin || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinCh == nil {
			return
		}
	}
	g.completeJoin()
}

// joinDue runs when the join deadline passed.
func (g *group) joinDue() {
	if g.initialJoin && g.newDuringDelay {
		now := g.now()
		if now.Before(g.initialMax) {
			g.newDuringDelay = false
			g.joinDeadline = now.Add(g.c.cfg.InitialRebalanceDelay)
			if g.joinDeadline.After(g.initialMax) {
				g.joinDeadline = g.initialMax
			}
			return
		}
	}
	g.completeJoin()
}

// completeJoin ends the join phase: members that did not rejoin leave, the
// generation advances, the leader gets the member list and everyone their
// JoinGroup answer.
func (g *group) completeJoin() {
	if g.state != statePreparingRebalance {
		return
	}
	g.joinDeadline, g.initialJoin = time.Time{}, false
	// Dynamic members that did not rejoin leave; static members stay (their
	// session timeout decides whether they are gone).
	for _, m := range g.sortedMembers() {
		if m.joinCh == nil && m.instanceID == nil {
			g.dropMember(m)
		}
	}
	now := g.now()
	// The leader must be a member that joined this round.
	if l := g.members[g.leader]; l == nil || l.joinCh == nil {
		g.leader = ""
		for _, m := range g.sortedMembers() {
			if m.joinCh != nil {
				g.leader = m.id
				break
			}
		}
		if g.leader == "" && len(g.members) > 0 {
			// Only static members that have not rejoined: wait for them
			// or for their sessions to end.
			g.leader = g.sortedMembers()[0].id
			g.joinDeadline = now.Add(g.maxRebalanceTimeout())
			return
		}
	}
	g.generation++
	defer func() { g.rebalanced(g.state.String(), g.generation, len(g.members), g.rebalanceReason) }()
	if len(g.members) == 0 {
		g.protocol, g.leader = "", ""
		g.setState(stateEmpty)
		if err := g.append([]Record{g.metadataRecord()}); err != nil {
			g.c.log.Warn("store empty group", "group", g.id, "err", err)
		}
		return
	}
	g.protocol = g.selectProtocol()
	g.setState(stateCompletingRebalance)
	g.syncDeadline = now.Add(g.maxRebalanceTimeout())
	for _, m := range g.sortedMembers() {
		m.synced = false
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
		m.answerJoin(g.currentJoin(m))
	}
}

// dropMember removes a member without starting a rebalance.
func (g *group) dropMember(m *member) {
	m.answerJoin(joinResult{code: kerr.UnknownMemberID.Code})
	m.answerSync(syncResult{code: kerr.UnknownMemberID.Code})
	delete(g.members, m.id)
	if m.instanceID != nil && g.statics[*m.instanceID] == m.id {
		delete(g.statics, *m.instanceID)
	}
	if g.leader == m.id {
		g.leader = ""
		if ms := g.sortedMembers(); len(ms) > 0 {
			g.leader = ms[0].id
		}
	}
}

// removeMember removes a member (left or expired) and rebalances.
func (g *group) removeMember(m *member, reason string) {
	g.dropMember(m)
	switch g.state {
	case stateStable, stateCompletingRebalance:
		g.prepareRebalance(reason)
	case statePreparingRebalance:
		g.maybeCompleteJoin()
	}
}

// syncExpired removes members that did not sync within the rebalance
// timeout and rebalances.
func (g *group) syncExpired() {
	g.syncDeadline = time.Time{}
	var late []*member
	for _, m := range g.sortedMembers() {
		switch g.state {
		case stateCompletingRebalance:
			if m.syncCh == nil {
				late = append(late, m)
			}
		case stateStable:
			if !m.synced {
				late = append(late, m)
			}
		}
	}
	if len(late) == 0 {
		return
	}
	for _, m := range late {
		g.dropMember(m)
	}
	g.prepareRebalance("members did not sync")
}

// SyncGroup hands out the leader's assignment; followers wait until the
// leader has synced.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	return c.startSync(ctx, req).wait(ctx)
}

// syncWait is a SyncGroup handed to its group, waiting for its answer.
type syncWait struct {
	req *kmsg.SyncGroupRequest
	answer[syncResult]
}

func (c *Coordinator) startSync(ctx context.Context, req *kmsg.SyncGroupRequest) *syncWait {
	w := &syncWait{req: req}
	if req.Group == "" {
		w.now = &syncResult{code: kerr.InvalidGroupID.Code}
		return w
	}
	done, code := c.run(ctx, req.Group, false, func(g *group) {
		if g == nil {
			w.now = &syncResult{code: kerr.UnknownMemberID.Code}
			return
		}
		w.ch, w.now = g.sync(req)
	})
	if code != 0 && code != errGroupMissing {
		w.now = &syncResult{code: code}
	}
	w.done = done
	return w
}

func (w *syncWait) wait(ctx context.Context) *kmsg.SyncGroupResponse {
	return w.fill(w.answer.wait(ctx,
		syncResult{code: kerr.NotCoordinator.Code}, syncResult{code: kerr.RebalanceInProgress.Code}))
}

func (w *syncWait) poll() (*kmsg.SyncGroupResponse, bool) {
	r, ok := w.answer.poll()
	if !ok {
		return nil, false
	}
	return w.fill(r), true
}

func (w *syncWait) fill(r syncResult) *kmsg.SyncGroupResponse {
	resp := w.req.ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ErrorCode = r.code
	if r.code == 0 {
		pt, p := r.protocolType, r.protocol
		resp.ProtocolType, resp.Protocol = &pt, &p
		resp.MemberAssignment = r.assignment
	}
	return resp
}

func (g *group) sync(req *kmsg.SyncGroupRequest) (chan syncResult, *syncResult) {
	errSync := func(e *kerr.Error) *syncResult { return &syncResult{code: e.Code} }
	if g.typ != typeClassic {
		return nil, errSync(kerr.UnknownMemberID)
	}
	if g.state == stateDead {
		return nil, errSync(kerr.CoordinatorNotAvailable)
	}
	if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
		return nil, &syncResult{code: code}
	}
	if req.Generation != g.generation {
		return nil, errSync(kerr.IllegalGeneration)
	}
	if req.ProtocolType != nil && *req.ProtocolType != g.protocolType ||
		req.Protocol != nil && *req.Protocol != g.protocol {
		return nil, errSync(kerr.InconsistentGroupProtocol)
	}
	m := g.members[req.MemberID]
	switch g.state {
	case stateEmpty:
		return nil, errSync(kerr.UnknownMemberID)
	case statePreparingRebalance:
		return nil, errSync(kerr.RebalanceInProgress)
	case stateStable:
		m.synced = true
		m.heartbeatDeadline = g.now().Add(m.sessionTimeout)
		return nil, &syncResult{protocolType: g.protocolType, protocol: g.protocol, assignment: m.assignment}
	}
	// CompletingRebalance.
	m.answerSync(syncResult{code: kerr.RebalanceInProgress.Code})
	m.syncCh = make(chan syncResult, 1)
	m.heartbeatDeadline = g.now().Add(m.sessionTimeout)
	ch := m.syncCh
	if m.id != g.leader {
		return ch, nil
	}
	assigned := make(map[string][]byte, len(req.GroupAssignment))
	for _, a := range req.GroupAssignment {
		assigned[a.MemberID] = a.MemberAssignment
	}
	for _, mm := range g.members {
		mm.assignment = assigned[mm.id]
	}
	if err := g.append([]Record{g.metadataRecord()}); err != nil {
		code := appendErrorCode(err)
		for _, mm := range g.members {
			mm.assignment = nil
			mm.answerSync(syncResult{code: code})
		}
		g.prepareRebalance("storing the assignment failed")
		return ch, nil
	}
	g.setState(stateStable)
	g.syncDeadline = g.now().Add(g.maxRebalanceTimeout())
	for _, mm := range g.members {
		if mm.syncCh != nil {
			mm.synced = true
			mm.answerSync(syncResult{protocolType: g.protocolType, protocol: g.protocol, assignment: mm.assignment})
		}
	}
	return ch, nil
}

// Heartbeat keeps a classic member's session alive and tells it when a
// rebalance is under way.
func (c *Coordinator) Heartbeat(ctx context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	_, code := c.run(ctx, req.Group, false, func(g *group) {
		if g == nil {
			resp.ErrorCode = kerr.UnknownMemberID.Code
			return
		}
		resp.ErrorCode = g.heartbeat(req, clientFrom(ctx))
	})
	if code != 0 && code != errGroupMissing {
		resp.ErrorCode = code
	}
	return resp
}

func (g *group) heartbeat(req *kmsg.HeartbeatRequest, ci clientInfo) int16 {
	if g.typ != typeClassic {
		return kerr.UnknownMemberID.Code
	}
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if g.state == stateEmpty {
		return kerr.UnknownMemberID.Code
	}
	m := g.members[req.MemberID]
	m.heartbeatDeadline = g.now().Add(m.sessionTimeout)
	m.notePrincipal(ci.principal)
	if g.state == statePreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// LeaveGroup removes members (by member id, or by instance id for static
// members) and rebalances the rest.
func (c *Coordinator) LeaveGroup(ctx context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	_, code := c.run(ctx, req.Group, false, func(g *group) {
		if g != nil && g.state == stateDead {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			return
		}
		for _, l := range leaving {
			// A group that does not exist, or has no classic
			// members, has none of them: each is UNKNOWN_MEMBER_ID,
			// as Kafka's GroupCoordinatorService.leaveGroup answers.
			code := kerr.UnknownMemberID.Code
			if g != nil && g.typ == typeClassic {
				code = g.leave(l.MemberID, l.InstanceID)
			}
			resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{MemberID: l.MemberID, InstanceID: l.InstanceID, ErrorCode: code})
		}
	})
	if code != 0 && code != errGroupMissing {
		resp.ErrorCode = code
	}
	if req.Version < 3 {
		if resp.ErrorCode == 0 && len(resp.Members) == 1 {
			resp.ErrorCode = resp.Members[0].ErrorCode
		}
		resp.Members = nil
	} else if resp.ErrorCode != 0 {
		resp.Members = nil
	}
	return resp
}

func (g *group) leave(id string, instanceID *string) int16 {
	if instanceID != nil {
		mid, ok := g.statics[*instanceID]
		if !ok || g.members[mid] == nil {
			return kerr.UnknownMemberID.Code
		}
		if id != "" && id != mid {
			return kerr.FencedInstanceID.Code
		}
		g.removeMember(g.members[mid], "static member left")
		return 0
	}
	if _, ok := g.pending[id]; ok {
		delete(g.pending, id)
		g.maybeCompleteJoin()
		return 0
	}
	m := g.members[id]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	g.removeMember(m, "member left")
	return 0
}

// notePrincipal records the principal of a member's request, when the
// request carries one.
func (m *member) notePrincipal(principal string) {
	if principal != "" {
		m.principal = principal
	}
}
