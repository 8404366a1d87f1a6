package group

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/coordinator"
)

// GroupSnapshot is a plain copy of one group's state, for inspection.
type GroupSnapshot struct {
	Group        string
	Type         string // "classic" or "consumer"
	State        string // Kafka's state name
	ProtocolType string
	Protocol     string // classic: the selected protocol; consumer: the assignor
	Generation   int32  // classic generation or consumer group epoch
	Leader       string
	Partition    int32 // __consumer_offsets partition
	Members      []MemberSnapshot
	Offsets      []OffsetSnapshot
	// Pending are transactional offsets waiting for their transaction to
	// end; OffsetFetch does not show them.
	Pending []PendingOffsetSnapshot
}

// MemberSnapshot is one member of a GroupSnapshot.
type MemberSnapshot struct {
	MemberID   string
	InstanceID string
	ClientID   string
	ClientHost string
	// Principal is who the member's client authenticated as when it
	// joined or last heartbeat (WithPrincipal); "" when unknown.
	Principal string
	Epoch     int32 // consumer protocol member epoch
	Assigned  map[string][]int32
}

// OffsetSnapshot is one committed offset of a GroupSnapshot.
type OffsetSnapshot struct {
	Topic           string
	Partition       int32
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp time.Time
}

// SnapshotGroup returns a copy of group id, if this coordinator serves
// it.
func (c *Coordinator) SnapshotGroup(ctx context.Context, id string) (GroupSnapshot, bool) {
	var out GroupSnapshot
	found := false
	c.run(ctx, id, false, func(g *group) {
		if g != nil && g.state != stateDead {
			out, found = g.snapshot(), true
		}
	})
	return out, found
}

// Snapshot returns a copy of every group this coordinator serves, sorted by
// group id.
func (c *Coordinator) Snapshot() []GroupSnapshot {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []GroupSnapshot
	for _, a := range c.rt.Actors() {
		c.run(ctx, a.Key(), false, func(g *group) {
			if g != nil && g.state != stateDead {
				out = append(out, g.snapshot())
			}
		})
	}
	return out
}

func (g *group) stateName() string {
	switch g.typ {
	case typeConsumer:
		return g.cg.stateName()
	case typeShare:
		return g.sg.stateName()
	}
	return g.state.String()
}

func (g *group) snapshot() GroupSnapshot {
	s := GroupSnapshot{
		Group:        g.id,
		Type:         g.typ.String(),
		State:        g.stateName(),
		ProtocolType: g.protocolType,
		Protocol:     g.protocol,
		Generation:   g.generation,
		Leader:       g.leader,
		Partition:    g.part,
	}
	switch g.typ {
	case typeConsumer:
		s.ProtocolType = "consumer"
		g.cg.snapshot(&s)
	case typeShare:
		g.sg.snapshot(&s)
	default:
		for _, m := range g.sortedMembers() {
			ms := MemberSnapshot{MemberID: m.id, ClientID: m.clientID, ClientHost: m.clientHost, Principal: m.principal}
			if m.instanceID != nil {
				ms.InstanceID = *m.instanceID
			}
			var a kmsg.ConsumerMemberAssignment
			if g.protocolType == "consumer" && len(m.assignment) > 0 && a.ReadFrom(m.assignment) == nil {
				ms.Assigned = make(map[string][]int32)
				for _, t := range a.Topics {
					ms.Assigned[t.Topic] = append(ms.Assigned[t.Topic], t.Partitions...)
				}
			}
			s.Members = append(s.Members, ms)
		}
	}
	for topic, parts := range g.offsets {
		for p, o := range parts {
			s.Offsets = append(s.Offsets, OffsetSnapshot{
				Topic: topic, Partition: p, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch,
				Metadata: o.Metadata, CommitTimestamp: time.UnixMilli(o.CommitTimestamp),
			})
		}
	}
	sort.Slice(s.Offsets, func(i, j int) bool {
		a, b := s.Offsets[i], s.Offsets[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	s.Pending = g.pendingSnapshot()
	return s
}

// DescribeGroups describes classic groups (a consumer-protocol group
// answers GROUP_ID_NOT_FOUND here; ConsumerGroupDescribe describes it).
func (c *Coordinator) DescribeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = id
		_, code := c.run(ctx, id, false, func(g *group) {
			if g == nil || g.state == stateDead {
				rg.State = "Dead"
				if req.Version >= 6 {
					// Kafka's GroupCoordinatorService words it so.
					rg.ErrorCode = kerr.GroupIDNotFound.Code
					msg := "Group " + id + " not found."
					rg.ErrorMessage = &msg
				}
				return
			}
			if g.typ != typeClassic {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
				msg := "Group " + id + " is not a classic group."
				rg.ErrorMessage = &msg
				return
			}
			rg.State = g.state.String()
			rg.ProtocolType = g.protocolType
			if g.state == stateStable || g.state == stateCompletingRebalance {
				rg.Protocol = g.protocol
			}
			for _, m := range g.sortedMembers() {
				rm := kmsg.DescribeGroupsResponseGroupMember{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost}
				if g.state == stateStable {
					rm.ProtocolMetadata = m.metadataFor(g.protocol)
					rm.MemberAssignment = m.assignment
				}
				rg.Members = append(rg.Members, rm)
			}
		})
		if code != 0 && code != errGroupMissing {
			rg.ErrorCode = code
		}
		if rg.ErrorCode != 0 && req.Version >= 6 && rg.ErrorMessage == nil {
			msg := kerr.ErrorForCode(rg.ErrorCode).Error()
			rg.ErrorMessage = &msg
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// ListGroups lists the groups this coordinator serves, filtered by state
// (v4+, case-insensitive) and type (v5+: "classic", "consumer").
func (c *Coordinator) ListGroups(ctx context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	c.rt.Lock()
	_, err := c.rt.AllServedLocked()
	c.rt.Unlock()
	if errors.Is(err, coordinator.ErrLoadInProgress) {
		resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
		return resp
	}
	match := func(filter []string, v string) bool {
		return len(filter) == 0 || slices.ContainsFunc(filter, func(f string) bool { return strings.EqualFold(f, v) })
	}
	for _, a := range c.rt.Actors() {
		c.run(ctx, a.Key(), false, func(g *group) {
			if g == nil || g.state == stateDead {
				return
			}
			lg := kmsg.ListGroupsResponseGroup{Group: g.id, ProtocolType: g.protocolType, GroupState: g.stateName(), GroupType: g.typ.String()}
			if g.typ != typeClassic {
				lg.ProtocolType = g.typ.String()
			}
			if req.Version >= 4 && !match(req.StatesFilter, lg.GroupState) || req.Version >= 5 && !match(req.TypesFilter, lg.GroupType) {
				return
			}
			resp.Groups = append(resp.Groups, lg)
		})
	}
	return resp
}

// DeleteGroups deletes empty groups and their offsets.
func (c *Coordinator) DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.DeleteGroupsResponseGroup{Group: id}
		_, code := c.run(ctx, id, false, func(g *group) {
			rg.ErrorCode = g.delete()
		})
		if code != 0 {
			rg.ErrorCode = code
			if code == errGroupMissing {
				rg.ErrorCode = kerr.GroupIDNotFound.Code
			}
		}
		if id == "" {
			rg.ErrorCode = kerr.InvalidGroupID.Code
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// delete removes an empty group with tombstones for its offsets and
// metadata; g may be nil.
func (g *group) delete() int16 {
	if g == nil || g.state == stateDead {
		return kerr.GroupIDNotFound.Code
	}
	if g.typ == typeConsumer && !g.cg.empty() || g.typ == typeShare && !g.sg.empty() || g.typ == typeClassic && g.state != stateEmpty {
		return kerr.NonEmptyGroup.Code
	}
	// Partitions with only pending transactional offsets get a tombstone
	// too: replaying it drops them, as this deletion does.
	var records []Record
	tombstoned := make(map[topicPartition]bool)
	for topic, parts := range g.offsets {
		for p := range parts {
			tombstoned[topicPartition{topic, p}] = true
			records = append(records, offsetTombstone(g.id, topic, p))
		}
	}
	for _, tp := range g.pendingPartitions() {
		if !tombstoned[tp] {
			records = append(records, offsetTombstone(g.id, tp.topic, tp.part))
		}
	}
	records = append(records, groupTombstone(g.id))
	if err := g.append(records); err != nil {
		return appendErrorCode(err)
	}
	clear(g.offsets)
	clear(g.offsetSeq)
	clear(g.txnOffsets)
	g.state = stateDead
	return 0
}
