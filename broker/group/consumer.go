package group

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Member epochs with a meaning in ConsumerGroupHeartbeat.
const (
	epochJoin        int32 = 0
	epochLeave       int32 = -1
	epochStaticLeave int32 = -2
)

// consumerGroup is the state of a group that uses the consumer protocol:
// a group epoch bumped by every membership, subscription or metadata
// change, a target assignment computed for that epoch by a server-side
// assignor, and members reconciling toward it one heartbeat at a time.
type consumerGroup struct {
	g               *group
	epoch           int32
	assignmentEpoch int32
	assignor        string
	members         map[string]*cmember
	statics         map[string]string     // instance id -> member id
	target          map[string]assignment // member id -> target assignment
	topicsUsed      map[string]int32      // partitions per subscribed topic when the target was computed
}

// cmember is one member of a consumer-protocol group.
type cmember struct {
	id               string
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	principal        string // WithPrincipal's; "" when unknown
	epoch            int32
	prevEpoch        int32
	names            []string // subscribed topic names, sorted
	regex            *string
	re               *regexp.Regexp
	serverAssignor   string
	rebalanceTimeout time.Duration
	assigned         assignment // partitions the member owns
	revoking         assignment // partitions it must give up before it advances
	sessionDeadline  time.Time
	revokeDeadline   time.Time
	lastSent         assignment // the assignment the member was last told
	leftStatic       bool       // left with epoch -2: its instance may return
}

func newConsumerGroup(g *group) *consumerGroup {
	return &consumerGroup{
		g:          g,
		members:    make(map[string]*cmember),
		statics:    make(map[string]string),
		target:     make(map[string]assignment),
		topicsUsed: make(map[string]int32),
	}
}

func (cg *consumerGroup) empty() bool { return len(cg.members) == 0 }

func (cg *consumerGroup) deadlines(add func(time.Time)) {
	for _, m := range cg.members {
		add(m.sessionDeadline)
		add(m.revokeDeadline)
	}
}

func (cg *consumerGroup) sortedMembers() []*cmember { return byKey(cg.members) }

// tick fences members whose session expired or who did not revoke within
// their rebalance timeout.
func (cg *consumerGroup) tick(now time.Time) {
	for _, m := range cg.sortedMembers() {
		switch {
		case !m.sessionDeadline.IsZero() && !now.Before(m.sessionDeadline):
			cg.g.c.log.Info("consumer group member session expired", "group", cg.g.id, "member", m.id)
			cg.remove(m, "member session expired")
		case !m.revokeDeadline.IsZero() && !now.Before(m.revokeDeadline):
			cg.g.c.log.Info("consumer group member did not revoke in time", "group", cg.g.id, "member", m.id)
			cg.remove(m, "member did not revoke in time")
		}
	}
}

func (cg *consumerGroup) remove(m *cmember, reason string) {
	delete(cg.members, m.id)
	delete(cg.target, m.id)
	if m.instanceID != nil && cg.statics[*m.instanceID] == m.id {
		delete(cg.statics, *m.instanceID)
	}
	cg.bumpEpoch(reason)
}

// bumpEpoch advances the group epoch, which starts a rebalance towards a
// new target assignment.
func (cg *consumerGroup) bumpEpoch(reason string) {
	cg.epoch++
	cg.g.rebalanced(cg.stateName(), cg.epoch, len(cg.members), reason)
}

// subscribedTo returns the topics m subscribes to among topics.
func (m *cmember) subscribedTo(topics map[string]TopicInfo) map[string]bool {
	out := make(map[string]bool)
	for _, n := range m.names {
		if _, ok := topics[n]; ok || topics == nil {
			out[n] = true
		}
	}
	if m.re != nil {
		for n := range topics {
			if m.re.MatchString(n) {
				out[n] = true
			}
		}
	}
	return out
}

func (cg *consumerGroup) subscribed(out map[string]bool) {
	topics := cg.g.c.topics()
	for _, m := range cg.members {
		for n := range m.subscribedTo(topics) {
			out[n] = true
		}
		for _, n := range m.names {
			out[n] = true
		}
	}
}

func (cg *consumerGroup) stateName() string {
	switch {
	case len(cg.members) == 0:
		return "Empty"
	case cg.epoch != cg.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch || len(m.revoking) > 0 || !m.assigned.equal(cg.target[m.id]) {
			return "Reconciling"
		}
	}
	return "Stable"
}

func (cg *consumerGroup) validateCommit(req *kmsg.OffsetCommitRequest) int16 {
	if req.Generation < 0 && len(cg.members) == 0 {
		return 0
	}
	m := cg.members[req.MemberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if req.Generation != m.epoch {
		if req.Version >= 9 {
			return kerr.StaleMemberEpoch.Code
		}
		return kerr.IllegalGeneration.Code
	}
	return 0
}

func (cg *consumerGroup) validateFetch(memberID string, epoch int32) int16 {
	if memberID == "" && epoch < 0 {
		return 0
	}
	m := cg.members[memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if epoch != m.epoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// heartbeatResult is the answer to one ConsumerGroupHeartbeat.
type heartbeatResult struct {
	code     int16
	msg      string
	memberID string
	epoch    int32
	assign   assignment // nil: not sent
}

// ConsumerGroupHeartbeat joins, heartbeats and leaves a consumer-protocol
// group; the answer carries the member's epoch and, when it changed, the
// partitions it owns.
func (c *Coordinator) ConsumerGroupHeartbeat(ctx context.Context, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	var r heartbeatResult
	if msg := validateHeartbeat(req); msg != "" {
		r = heartbeatResult{code: kerr.InvalidRequest.Code, msg: msg}
	} else if a := req.ServerAssignor; a != nil && !slices.Contains(c.cfg.ConsumerAssignors, *a) {
		// Checked with the request, whatever the group (Kafka's words).
		r = heartbeatResult{code: kerr.UnsupportedAssignor.Code, msg: "ServerAssignor " + *a + " is not supported. Supported assignors: " + strings.Join(c.cfg.ConsumerAssignors, ", ") + "."}
	} else {
		// Only a join creates a group; Kafka's words differ for a
		// leave (consumerGroupLeave) and the rest
		// (getOrMaybeCreateConsumerGroup).
		msg := "Consumer group " + req.Group + " not found."
		if req.MemberEpoch == epochLeave || req.MemberEpoch == epochStaticLeave {
			msg = "Group " + req.Group + " not found."
		}
		topics := c.topics()
		ci := clientFrom(ctx)
		r = c.runHeartbeat(ctx, req.Group, req.MemberEpoch == epochJoin, heartbeatResult{code: kerr.GroupIDNotFound.Code, msg: msg},
			func(g *group) heartbeatResult { return g.consumerHeartbeat(req, ci, topics) })
	}
	if !r.answer(&resp.ErrorCode, &resp.ErrorMessage, &resp.MemberID, &resp.MemberEpoch) {
		return resp
	}
	resp.HeartbeatIntervalMillis = int32(c.cfg.ConsumerHeartbeatInterval / time.Millisecond)
	if r.assign != nil {
		a := &kmsg.ConsumerGroupHeartbeatResponseAssignment{Topics: []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}}
		for _, t := range r.assign.byTopicID(c.topics()) {
			a.Topics = append(a.Topics, kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{TopicID: t.id, Partitions: t.partitions})
		}
		resp.Assignment = a
	}
	return resp
}

// runHeartbeat runs fn, a member's heartbeat, on the actor of group id;
// only a join creates the group, and missing answers one that does not
// exist.
func (c *Coordinator) runHeartbeat(ctx context.Context, id string, join bool, missing heartbeatResult, fn func(g *group) heartbeatResult) heartbeatResult {
	var r heartbeatResult
	_, code := c.run(ctx, id, join, func(g *group) {
		if g == nil {
			r = missing
			return
		}
		r = fn(g)
	})
	if code != 0 && code != errGroupMissing {
		r = heartbeatResult{code: code}
	}
	return r
}

// answer sets the fields every heartbeat response has, its error or the
// member's id and epoch, and reports whether r is no error.
func (r heartbeatResult) answer(code *int16, msg, memberID **string, epoch *int32) bool {
	*code = r.code
	if r.code != 0 {
		if r.msg != "" {
			*msg = &r.msg
		}
		return false
	}
	*memberID = &r.memberID
	*epoch = r.epoch
	return true
}

// topicIDPartitions is one topic of an assignment, by id.
type topicIDPartitions struct {
	id         [16]byte
	partitions []int32
}

// byTopicID lists a's topics by id, in topic name order.
func (a assignment) byTopicID(topics map[string]TopicInfo) []topicIDPartitions {
	var out []topicIDPartitions
	for _, name := range sortedNames(a) {
		out = append(out, topicIDPartitions{id: topics[name].ID, partitions: a[name]})
	}
	return out
}

func sortedNames(a assignment) []string {
	names := make([]string, 0, len(a))
	for n, ps := range a {
		if len(ps) > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// validateHeartbeat checks the request's shape; it returns why it is
// invalid. The checks, their order and their words are Kafka 4.4's
// (GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid):
// from v1 the client makes the member id (KIP-1082), so it may never be
// empty; v0 joins without one.
func validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) string {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch {
	case (req.Version >= 1 || req.MemberEpoch > 0 || req.MemberEpoch == epochLeave) && blank(req.MemberID):
		return "MemberId can't be empty."
	case blank(req.Group):
		return "GroupId can't be empty."
	case req.InstanceID != nil && blank(*req.InstanceID):
		return "InstanceId can't be empty."
	case req.RackID != nil && blank(*req.RackID):
		return "RackId can't be empty."
	}
	switch {
	case req.MemberEpoch == epochJoin:
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return "RebalanceTimeoutMs must be provided in first request."
		case req.Topics == nil || len(req.Topics) > 0:
			return "TopicPartitions must be empty when (re-)joining."
		case req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
			return "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
		}
	case req.MemberEpoch == epochStaticLeave:
		if req.InstanceID == nil {
			return "InstanceId can't be null."
		}
	case req.MemberEpoch < epochStaticLeave:
		return "MemberEpoch is invalid."
	}
	if req.SubscribedTopicRegex != nil && len(*req.SubscribedTopicRegex) > 1024 {
		return "SubscribedTopicRegex is too long." // klog's bound
	}
	return ""
}

func (g *group) consumerHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, ci clientInfo, topics map[string]TopicInfo) heartbeatResult {
	if g.typ != typeConsumer {
		if r, ok := g.becomeConsumer(); !ok {
			return r
		}
	}
	cg := g.cg
	now := g.now()

	if req.MemberEpoch == epochLeave || req.MemberEpoch == epochStaticLeave {
		return cg.leave(req)
	}

	var m *cmember
	var r heartbeatResult
	bump := false // the group epoch advances at most once per heartbeat
	joined := false
	if req.MemberEpoch == epochJoin {
		m, joined, r = cg.join(req, ci)
		bump = joined
	} else {
		m, r = cg.heartbeatMember(req, topics)
		if m != nil && ci.principal != "" {
			m.principal = ci.principal
		}
	}
	if m == nil {
		return r
	}

	// Membership updates that change the group epoch.
	changed, r := m.updateSubscription(req)
	if r.code != 0 {
		return r
	}
	bump = bump || changed
	m.sessionDeadline = now.Add(g.c.cfg.ConsumerSessionTimeout)
	if bump || cg.metadataChanged(topics) {
		reason := "topic metadata changed"
		switch {
		case joined:
			reason = "member joined"
		case bump:
			reason = "member subscription changed"
		}
		cg.bumpEpoch(reason)
	}
	if cg.epoch != cg.assignmentEpoch {
		cg.computeTarget(topics)
	}

	// Owned partitions reported by the member acknowledge revocations.
	var owned assignment
	if req.Topics != nil {
		owned = ownedFrom(req.Topics, topics)
	}
	cg.reconcile(m, owned, now)

	r = heartbeatResult{memberID: m.id, epoch: m.epoch}
	if req.MemberEpoch == epochJoin || m.lastSent == nil || !m.lastSent.equal(m.assigned) || owned != nil && !owned.equal(m.assigned) {
		r.assign = m.assigned.clone()
		m.lastSent = r.assign.clone()
	}
	return r
}

// becomeConsumer makes an empty classic group (offsets only) a consumer
// group; a classic group in use is no consumer group (false, and the
// answer).
func (g *group) becomeConsumer() (heartbeatResult, bool) {
	if g.typ == typeShare || g.state != stateEmpty || len(g.members) > 0 || len(g.pending) > 0 {
		return heartbeatResult{code: kerr.GroupIDNotFound.Code, msg: "Group " + g.id + " is not a consumer group."}, false
	}
	if g.state == stateDead {
		return heartbeatResult{code: kerr.CoordinatorNotAvailable.Code}, false
	}
	g.typ, g.cg = typeConsumer, newConsumerGroup(g)
	g.protocolType, g.protocol, g.leader, g.generation = "", "", "", 0
	return heartbeatResult{}, true
}

// join admits the member of a joining heartbeat (epoch 0): a new member
// (joined), a member rejoining under its own id, or a static member
// returning under a new id. A nil member comes with the refusal.
func (cg *consumerGroup) join(req *kmsg.ConsumerGroupHeartbeatRequest, ci clientInfo) (m *cmember, joined bool, r heartbeatResult) {
	id := req.MemberID
	if req.InstanceID != nil {
		if old := cg.members[cg.statics[*req.InstanceID]]; old != nil {
			if !old.leftStatic && old.id != id {
				return nil, false, heartbeatResult{code: kerr.UnreleasedInstanceID.Code, msg: "Static member " + *req.InstanceID + " is still active."}
			}
			m = old
		}
	}
	if m == nil {
		m = cg.members[id]
	}
	if m == nil && len(cg.members) >= cg.g.c.cfg.ConsumerMaxSize {
		return nil, false, heartbeatResult{code: kerr.GroupMaxSizeReached.Code}
	}
	if id == "" {
		id = newMemberID("")
	}
	switch {
	case m == nil:
		m = &cmember{id: id, assigned: make(assignment)}
		cg.members[id] = m
		joined = true
	case m.id == id && !m.leftStatic:
		// A member rejoining under its own id has given up its
		// partitions: it starts over and reconciles to its target.
		m.assigned, m.revoking, m.revokeDeadline = make(assignment), nil, time.Time{}
		m.epoch, m.prevEpoch = 0, 0
	case m.id != id:
		// A static member returning under a new member id takes over
		// the old member's assignment and epoch.
		delete(cg.members, m.id)
		cg.target[id] = cg.target[m.id]
		delete(cg.target, m.id)
		m.id = id
		cg.members[id] = m
	}
	m.leftStatic = false
	m.lastSent = nil
	if req.InstanceID != nil {
		iid := *req.InstanceID
		m.instanceID = &iid
		cg.statics[iid] = id
	}
	m.clientID, m.clientHost, m.principal = ci.id, ci.host, ci.principal
	return m, joined, heartbeatResult{}
}

// heartbeatMember finds the member of a heartbeat that is not a join and
// checks its instance id and epoch. A nil member comes with the refusal.
func (cg *consumerGroup) heartbeatMember(req *kmsg.ConsumerGroupHeartbeatRequest, topics map[string]TopicInfo) (*cmember, heartbeatResult) {
	m := cg.members[req.MemberID]
	if m == nil || m.leftStatic {
		return nil, heartbeatResult{code: kerr.UnknownMemberID.Code, msg: "Member " + req.MemberID + " is not a member of group " + cg.g.id + "."}
	}
	if req.InstanceID != nil && cg.statics[*req.InstanceID] != m.id {
		return nil, heartbeatResult{code: kerr.FencedInstanceID.Code}
	}
	if code := m.checkEpoch(req, topics); code != 0 {
		return nil, heartbeatResult{code: code}
	}
	return m, heartbeatResult{}
}

// updateSubscription applies what a heartbeat says of the member's
// subscription, assignor, rack and rebalance timeout, and reports whether
// the group epoch must advance; an invalid regex is refused.
func (m *cmember) updateSubscription(req *kmsg.ConsumerGroupHeartbeatRequest) (bump bool, r heartbeatResult) {
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		sort.Strings(names)
		names = slices.Compact(names)
		if !slices.Equal(names, m.names) {
			m.names, bump = names, true
		}
	}
	switch {
	case req.SubscribedTopicRegex == nil:
		// Unchanged since the last heartbeat.
	case *req.SubscribedTopicRegex == "":
		// An empty regex clears the regex subscription (KIP-848); it
		// does not match every topic. librdkafka sends it alongside
		// topic names.
		if m.regex != nil {
			m.regex, m.re, bump = nil, nil, true
		}
	case m.regex == nil || *m.regex != *req.SubscribedTopicRegex:
		// The regex must match a whole topic name, internal topics
		// included, as Kafka resolves it.
		re, err := regexp.Compile("^(?:" + *req.SubscribedTopicRegex + ")$")
		if err != nil {
			return false, heartbeatResult{code: kerr.InvalidRegularExpression.Code, msg: err.Error()}
		}
		rx := *req.SubscribedTopicRegex
		m.regex, m.re, bump = &rx, re, true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.serverAssignor {
		m.serverAssignor, bump = *req.ServerAssignor, true // a supported one, checked with the request
	}
	if req.RackID != nil {
		rack := *req.RackID
		m.rackID = &rack
	}
	if req.RebalanceTimeoutMillis > 0 {
		m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	return bump, heartbeatResult{}
}

// checkEpoch fences a member whose epoch is not its current one; a member
// one epoch behind may catch up if it owns only what it was assigned (its
// last answer was lost).
func (m *cmember) checkEpoch(req *kmsg.ConsumerGroupHeartbeatRequest, topics map[string]TopicInfo) int16 {
	switch {
	case req.MemberEpoch == m.epoch:
		return 0
	case req.MemberEpoch > m.epoch:
		return kerr.FencedMemberEpoch.Code
	case req.MemberEpoch != m.prevEpoch || req.Topics == nil:
		return kerr.FencedMemberEpoch.Code
	}
	owned := ownedFrom(req.Topics, topics)
	if !owned.minus(m.assigned).equal(assignment{}) {
		return kerr.FencedMemberEpoch.Code
	}
	m.lastSent = nil // resend
	return 0
}

func ownedFrom(ts []kmsg.ConsumerGroupHeartbeatRequestTopic, topics map[string]TopicInfo) assignment {
	out := make(assignment)
	for _, t := range ts {
		info, ok := topicByID(topics, t.TopicID)
		if !ok {
			continue
		}
		for _, p := range t.Partitions {
			if !out.has(info.Name, p) {
				out.add(info.Name, p)
			}
		}
	}
	return out
}

// leave handles epoch -1 (leave) and -2 (static member leaving for a
// restart: its instance keeps its assignment until its session expires).
func (cg *consumerGroup) leave(req *kmsg.ConsumerGroupHeartbeatRequest) heartbeatResult {
	var m *cmember
	if req.InstanceID != nil {
		m = cg.members[cg.statics[*req.InstanceID]]
		if m != nil && req.MemberID != "" && m.id != req.MemberID {
			return heartbeatResult{code: kerr.FencedInstanceID.Code}
		}
	} else {
		m = cg.members[req.MemberID]
	}
	if m == nil {
		return heartbeatResult{code: kerr.UnknownMemberID.Code}
	}
	if req.MemberEpoch == epochStaticLeave {
		m.leftStatic = true
		return heartbeatResult{memberID: m.id, epoch: epochStaticLeave}
	}
	cg.remove(m, "member left")
	return heartbeatResult{memberID: m.id, epoch: epochLeave}
}

// metadataChanged reports whether a subscribed topic appeared, vanished or
// grew since the target assignment was computed.
func (cg *consumerGroup) metadataChanged(topics map[string]TopicInfo) bool {
	now := cg.subscribedPartitions(topics)
	if len(now) != len(cg.topicsUsed) {
		return true
	}
	for n, p := range now {
		if cg.topicsUsed[n] != p {
			return true
		}
	}
	return false
}

func (cg *consumerGroup) subscribedPartitions(topics map[string]TopicInfo) map[string]int32 {
	out := make(map[string]int32)
	for _, m := range cg.members {
		if m.leftStatic {
			continue
		}
		for n := range m.subscribedTo(topics) {
			if info, ok := topics[n]; ok {
				out[n] = info.Partitions
			}
		}
	}
	return out
}

// computeTarget runs the group's assignor for the current group epoch.
func (cg *consumerGroup) computeTarget(topics map[string]TopicInfo) {
	cg.assignor = cg.pickAssignor()
	in := assignInput{topics: make(map[string]TopicInfo)}
	for _, m := range cg.sortedMembers() {
		sub := m.subscribedTo(topics)
		for n := range sub {
			if info, ok := topics[n]; ok {
				in.topics[n] = info
			}
		}
		in.members = append(in.members, assignMember{id: m.id, subscribed: sub, current: cg.target[m.id]})
	}
	var out map[string]assignment
	if cg.assignor == "range" {
		out = assignRange(in)
	} else {
		out = assignUniform(in)
	}
	cg.target = out
	cg.topicsUsed = cg.subscribedPartitions(topics)
	cg.assignmentEpoch = cg.epoch
	cg.g.c.log.Debug("consumer group target assignment", "group", cg.g.id, "epoch", cg.epoch, "assignor", cg.assignor)
}

// pickAssignor returns the assignor most members asked for, else the
// first configured.
func (cg *consumerGroup) pickAssignor() string {
	votes := make(map[string]int)
	for _, m := range cg.members {
		if m.serverAssignor != "" {
			votes[m.serverAssignor]++
		}
	}
	best, n := cg.g.c.cfg.ConsumerAssignors[0], 0
	for _, a := range cg.g.c.cfg.ConsumerAssignors {
		if votes[a] > n {
			best, n = a, votes[a]
		}
	}
	return best
}

// ownedByOthers returns every partition another member owns or is still
// revoking.
func (cg *consumerGroup) ownedByOthers(m *cmember) assignment {
	out := make(assignment)
	for _, o := range cg.members {
		if o == m {
			continue
		}
		for _, a := range []assignment{o.assigned, o.revoking} {
			for t, ps := range a {
				out[t] = append(out[t], ps...)
			}
		}
	}
	return out
}

// reconcile moves m toward its target: partitions to give up are revoked
// first (the member stays at its epoch until it reports them gone), then
// it advances to the assignment epoch and gains the target partitions that
// no other member still holds.
func (cg *consumerGroup) reconcile(m *cmember, owned assignment, now time.Time) {
	target := cg.target[m.id]
	if target == nil {
		target = make(assignment)
	}
	if len(m.revoking) > 0 {
		if owned == nil || !owned.intersect(m.revoking).equal(assignment{}) {
			return // still revoking
		}
		m.revoking = nil
		m.revokeDeadline = time.Time{}
	}
	if m.epoch != cg.assignmentEpoch {
		if revoke := m.assigned.minus(target); revoke.count() > 0 {
			m.assigned = m.assigned.intersect(target)
			m.revoking = revoke
			m.revokeDeadline = now.Add(m.rebalanceTimeout)
			return
		}
		m.prevEpoch, m.epoch = m.epoch, cg.assignmentEpoch
	}
	// Gain whatever of the target is free.
	others := cg.ownedByOthers(m)
	for t, ps := range target.minus(m.assigned) {
		for _, p := range ps {
			if !others.has(t, p) {
				m.assigned.add(t, p)
			}
		}
	}
}

// snapshot fills the consumer-protocol parts of s.
func (cg *consumerGroup) snapshot(s *GroupSnapshot) {
	s.Generation = cg.epoch
	s.Protocol = cg.assignor
	for _, m := range cg.sortedMembers() {
		ms := MemberSnapshot{MemberID: m.id, ClientID: m.clientID, ClientHost: m.clientHost, Principal: m.principal, Epoch: m.epoch, Assigned: make(map[string][]int32)}
		if m.instanceID != nil {
			ms.InstanceID = *m.instanceID
		}
		for t, ps := range m.assigned {
			ms.Assigned[t] = append([]int32(nil), ps...)
		}
		s.Members = append(s.Members, ms)
	}
}

// ConsumerGroupDescribe describes consumer-protocol groups.
func (c *Coordinator) ConsumerGroupDescribe(ctx context.Context, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	topics := c.topics()
	for _, id := range req.Groups {
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		rg.Group = id
		notFound := "Group " + id + " not found." // Kafka's words
		_, code := c.run(ctx, id, false, func(g *group) {
			if g == nil || g.state == stateDead {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
				rg.ErrorMessage = &notFound
				return
			}
			if g.typ != typeConsumer {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
				msg := "Group " + id + " is not a consumer group."
				rg.ErrorMessage = &msg
				return
			}
			cg := g.cg
			rg.State = cg.stateName()
			rg.Epoch = cg.epoch
			rg.AssignmentEpoch = cg.assignmentEpoch
			rg.AssignorName = cg.assignor
			if rg.AssignorName == "" {
				rg.AssignorName = cg.pickAssignor()
			}
			for _, m := range cg.sortedMembers() {
				rm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
				rm.MemberID, rm.InstanceID, rm.RackID = m.id, m.instanceID, m.rackID
				rm.MemberEpoch, rm.ClientID, rm.ClientHost = m.epoch, m.clientID, m.clientHost
				rm.SubscribedTopics = slices.Clone(m.names)
				if rm.SubscribedTopics == nil {
					rm.SubscribedTopics = []string{}
				}
				rm.SubscribedTopicRegex = m.regex
				rm.Assignment = describeAssignment(m.assigned, topics)
				rm.TargetAssignment = describeAssignment(cg.target[m.id], topics)
				rm.MemberType = 1 // consumer protocol
				rg.Members = append(rg.Members, rm)
			}
		})
		if code != 0 {
			rg.ErrorCode = code
			if code == errGroupMissing {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
				rg.ErrorMessage = &notFound
			}
		}
		if rg.ErrorCode != 0 && rg.ErrorMessage == nil {
			msg := kerr.ErrorForCode(rg.ErrorCode).Error()
			rg.ErrorMessage = &msg
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func describeAssignment(a assignment, topics map[string]TopicInfo) kmsg.Assignment {
	out := kmsg.NewAssignment()
	for _, n := range sortedNames(a) {
		out.TopicPartitions = append(out.TopicPartitions, kmsg.AssignmentTopicPartition{TopicID: topics[n].ID, Topic: n, Partitions: slices.Clone(a[n])})
	}
	return out
}
