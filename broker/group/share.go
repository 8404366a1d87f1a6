package group

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareAssignor is the one assignor of share groups, Kafka's default.
const shareAssignor = "simple"

// shareGroup is the state of a share group (KIP-932): a group epoch bumped
// by every membership, subscription or metadata change and a target
// assignment computed for it by the simple assignor. Unlike a consumer
// group, a member takes its target at once on its next heartbeat:
// partitions are shared, so nothing is revoked first. Members are in
// memory only, as a consumer group's are.
type shareGroup struct {
	g               *group
	epoch           int32
	assignmentEpoch int32
	members         map[string]*smember
	target          map[string]assignment // member id -> target assignment
	topicsUsed      map[string]int32      // partitions per subscribed topic when the target was computed
}

// smember is one member of a share group.
type smember struct {
	id              string
	rackID          *string
	clientID        string
	clientHost      string
	principal       string
	epoch           int32
	names           []string // subscribed topic names, sorted
	assigned        assignment
	lastSent        assignment // the assignment the member was last told
	sessionDeadline time.Time
}

func newShareGroup(g *group) *shareGroup {
	return &shareGroup{g: g, members: make(map[string]*smember), target: make(map[string]assignment), topicsUsed: make(map[string]int32)}
}

func (sg *shareGroup) empty() bool { return len(sg.members) == 0 }

func (sg *shareGroup) stateName() string {
	if sg.empty() {
		return "Empty"
	}
	return "Stable"
}

func (sg *shareGroup) deadlines(add func(time.Time)) {
	for _, m := range sg.members {
		add(m.sessionDeadline)
	}
}

func (sg *shareGroup) sortedMembers() []*smember { return byKey(sg.members) }

// tick fences members whose session expired.
func (sg *shareGroup) tick(now time.Time) {
	for _, m := range sg.sortedMembers() {
		if !m.sessionDeadline.IsZero() && !now.Before(m.sessionDeadline) {
			sg.g.c.log.Info("share group member session expired", "group", sg.g.id, "member", m.id)
			sg.remove(m, "member session expired")
		}
	}
}

// remove takes m out of the group, bumps the epoch, and tells the node, so
// that the member's share sessions close and its records are released.
func (sg *shareGroup) remove(m *smember, reason string) {
	delete(sg.members, m.id)
	delete(sg.target, m.id)
	sg.bumpEpoch(reason)
	if gone := sg.g.c.cfg.OnShareMemberGone; gone != nil {
		gone(sg.g.id, m.id)
	}
}

func (sg *shareGroup) bumpEpoch(reason string) {
	sg.epoch++
	sg.g.rebalanced(sg.stateName(), sg.epoch, len(sg.members), reason)
}

// ShareGroupHeartbeat joins, heartbeats and leaves a share group; the
// answer carries the member's epoch and, when it changed, its partitions.
func (c *Coordinator) ShareGroupHeartbeat(ctx context.Context, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	r := heartbeatResult{}
	if msg := validateShareHeartbeat(req); msg != "" {
		r = heartbeatResult{code: kerr.InvalidRequest.Code, msg: msg}
	} else {
		topics := c.topics()
		ci := clientFrom(ctx)
		// Kafka's words differ for a leave (shareGroupLeave) and the
		// rest (getOrMaybeCreatePersistedShareGroup).
		msg := "Share group " + req.GroupID + " not found."
		if req.MemberEpoch == epochLeave {
			msg = "Group " + req.GroupID + " not found."
		}
		r = c.runHeartbeat(ctx, req.GroupID, req.MemberEpoch == epochJoin, heartbeatResult{code: kerr.GroupIDNotFound.Code, msg: msg},
			func(g *group) heartbeatResult { return g.shareHeartbeat(req, ci, topics) })
	}
	if !r.answer(&resp.ErrorCode, &resp.ErrorMessage, &resp.MemberID, &resp.MemberEpoch) {
		return resp
	}
	resp.HeartbeatIntervalMillis = int32(c.cfg.ShareHeartbeatInterval / time.Millisecond)
	if r.assign != nil {
		a := &kmsg.ShareGroupHeartbeatResponseAssignment{TopicPartitions: []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}}
		for _, t := range r.assign.byTopicID(c.topics()) {
			a.TopicPartitions = append(a.TopicPartitions, kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{TopicID: t.id, Partitions: t.partitions})
		}
		resp.Assignment = a
	}
	return resp
}

// validateShareHeartbeat checks the request's shape, with Kafka 4.4's
// checks and words (GroupCoordinatorService's
// throwIfShareGroupHeartbeatRequestIsInvalid).
func validateShareHeartbeat(req *kmsg.ShareGroupHeartbeatRequest) string {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch {
	case blank(req.MemberID):
		return "MemberId can't be empty."
	case blank(req.GroupID):
		return "GroupId can't be empty."
	case req.RackID != nil && blank(*req.RackID):
		return "RackId can't be empty."
	case req.MemberEpoch == epochJoin && len(req.SubscribedTopicNames) == 0:
		return "SubscribedTopicNames must be set in first request."
	case req.MemberEpoch < epochLeave:
		return "MemberEpoch is invalid."
	}
	return ""
}

// shareHeartbeat is one heartbeat inside the group's actor.
func (g *group) shareHeartbeat(req *kmsg.ShareGroupHeartbeatRequest, ci clientInfo, topics map[string]TopicInfo) heartbeatResult {
	if r, ok := g.becomeShare(); !ok {
		return r
	}
	sg := g.sg
	m := sg.members[req.MemberID]
	if req.MemberEpoch == epochLeave {
		if m == nil {
			return heartbeatResult{code: kerr.UnknownMemberID.Code, msg: "Member " + req.MemberID + " is not a member of group " + g.id + "."}
		}
		g.c.log.Info("share group member left", "group", g.id, "member", m.id)
		sg.remove(m, "member left")
		return heartbeatResult{memberID: m.id, epoch: epochLeave}
	}
	joined := false
	switch {
	case m == nil && req.MemberEpoch != epochJoin:
		return heartbeatResult{code: kerr.UnknownMemberID.Code, msg: "Member " + req.MemberID + " is not a member of group " + g.id + "."}
	case m == nil && len(sg.members) >= g.c.cfg.ShareMaxSize:
		return heartbeatResult{code: kerr.GroupMaxSizeReached.Code, msg: "The share group has reached its maximum capacity of " + strconv.Itoa(g.c.cfg.ShareMaxSize) + " members."}
	case m == nil:
		m = &smember{id: req.MemberID, assigned: make(assignment)}
		sg.members[m.id] = m
		joined = true
	case req.MemberEpoch != epochJoin && req.MemberEpoch != m.epoch:
		return heartbeatResult{code: kerr.FencedMemberEpoch.Code}
	}
	if req.MemberEpoch == epochJoin {
		m.lastSent = nil
	}
	m.clientID, m.clientHost = ci.id, ci.host
	if ci.principal != "" {
		m.principal = ci.principal
	}
	if req.RackID != nil {
		m.rackID = req.RackID
	}
	changed := false
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(names)
		names = slices.Compact(names)
		changed = !slices.Equal(names, m.names)
		m.names = names
	}
	m.sessionDeadline = g.now().Add(g.c.cfg.ShareSessionTimeout)
	switch {
	case joined:
		sg.bumpEpoch("member joined")
	case changed:
		sg.bumpEpoch("member subscription changed")
	case sg.metadataChanged(topics):
		sg.bumpEpoch("topic metadata changed")
	}
	if sg.epoch != sg.assignmentEpoch {
		sg.computeTarget(topics)
	}
	// A share member takes its target at once: nothing is revoked first.
	m.epoch = sg.assignmentEpoch
	m.assigned = sg.target[m.id].clone()
	r := heartbeatResult{memberID: m.id, epoch: m.epoch}
	if req.MemberEpoch == epochJoin || m.lastSent == nil || !m.lastSent.equal(m.assigned) {
		r.assign = m.assigned.clone()
		m.lastSent = r.assign.clone()
	}
	return r
}

// becomeShare makes a new group a share group; a classic or consumer group
// is no share group (false, and the answer).
func (g *group) becomeShare() (heartbeatResult, bool) {
	switch {
	case g.typ == typeShare:
		return heartbeatResult{}, true
	case g.state == stateDead:
		return heartbeatResult{code: kerr.CoordinatorNotAvailable.Code}, false
	case g.typ != typeClassic || g.state != stateEmpty || len(g.members) > 0 || len(g.pending) > 0 || len(g.offsets) > 0 || g.loadedMetadata:
		return heartbeatResult{code: kerr.GroupIDNotFound.Code, msg: "Group " + g.id + " is not a share group."}, false
	}
	g.typ, g.sg = typeShare, newShareGroup(g)
	return heartbeatResult{}, true
}

// subscribedPartitions is the partition count of every topic a member
// subscribes to that exists.
func (sg *shareGroup) subscribedPartitions(topics map[string]TopicInfo) map[string]int32 {
	out := make(map[string]int32)
	for _, m := range sg.members {
		for _, n := range m.names {
			if info, ok := topics[n]; ok {
				out[n] = info.Partitions
			}
		}
	}
	return out
}

// metadataChanged reports whether a subscribed topic appeared, vanished or
// grew since the target assignment was computed.
func (sg *shareGroup) metadataChanged(topics map[string]TopicInfo) bool {
	return !maps.Equal(sg.subscribedPartitions(topics), sg.topicsUsed)
}

// computeTarget runs the simple assignor for the current group epoch.
func (sg *shareGroup) computeTarget(topics map[string]TopicInfo) {
	in := assignInput{topics: make(map[string]TopicInfo)}
	for _, m := range sg.sortedMembers() {
		sub := make(map[string]bool)
		for _, n := range m.names {
			if info, ok := topics[n]; ok {
				sub[n] = true
				in.topics[n] = info
			}
		}
		in.members = append(in.members, assignMember{id: m.id, subscribed: sub, current: sg.target[m.id]})
	}
	sg.target = assignSimple(in)
	sg.topicsUsed = sg.subscribedPartitions(topics)
	sg.assignmentEpoch = sg.epoch
	sg.g.c.log.Debug("share group target assignment", "group", sg.g.id, "epoch", sg.epoch)
}

// snapshot fills the share group's parts of s.
func (sg *shareGroup) snapshot(s *GroupSnapshot) {
	s.ProtocolType = "share"
	s.Generation = sg.epoch
	s.Protocol = shareAssignor
	for _, m := range sg.sortedMembers() {
		ms := MemberSnapshot{MemberID: m.id, ClientID: m.clientID, ClientHost: m.clientHost, Principal: m.principal, Epoch: m.epoch, Assigned: make(map[string][]int32)}
		for t, ps := range m.assigned {
			ms.Assigned[t] = slices.Clone(ps)
		}
		s.Members = append(s.Members, ms)
	}
}

// ShareGroupDescribe describes share groups.
func (c *Coordinator) ShareGroupDescribe(ctx context.Context, req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	topics := c.topics()
	for _, id := range req.GroupIDs {
		rg := kmsg.NewShareGroupDescribeResponseGroup()
		rg.GroupID = id
		notFound := "Group " + id + " not found." // Kafka's words
		_, code := c.run(ctx, id, false, func(g *group) {
			switch {
			case g == nil || g.state == stateDead:
				rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, &notFound
			case g.typ != typeShare:
				msg := "Group " + id + " is not a share group."
				rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, &msg
			default:
				g.sg.describe(&rg, topics)
			}
		})
		if code != 0 {
			rg.ErrorCode = code
			if code == errGroupMissing {
				rg.ErrorCode, rg.ErrorMessage = kerr.GroupIDNotFound.Code, &notFound
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

func (sg *shareGroup) describe(rg *kmsg.ShareGroupDescribeResponseGroup, topics map[string]TopicInfo) {
	rg.GroupState = sg.stateName()
	rg.GroupEpoch = sg.epoch
	rg.AssignmentEpoch = sg.assignmentEpoch
	rg.Assignor = shareAssignor
	rg.Members = []kmsg.ShareGroupDescribeResponseGroupMember{}
	for _, m := range sg.sortedMembers() {
		rm := kmsg.NewShareGroupDescribeResponseGroupMember()
		rm.MemberID, rm.RackID, rm.MemberEpoch = m.id, m.rackID, m.epoch
		rm.ClientID, rm.ClientHost = m.clientID, m.clientHost
		rm.SubscribedTopicNames = slices.Clone(m.names)
		if rm.SubscribedTopicNames == nil {
			rm.SubscribedTopicNames = []string{}
		}
		rm.Assignment.TopicPartitions = []kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{}
		for _, n := range sortedNames(m.assigned) {
			rm.Assignment.TopicPartitions = append(rm.Assignment.TopicPartitions, kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{
				TopicID: topics[n].ID, Topic: n, Partitions: slices.Clone(m.assigned[n]),
			})
		}
		rg.Members = append(rg.Members, rm)
	}
}
