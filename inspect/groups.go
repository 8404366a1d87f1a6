package inspect

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group types as ListGroups reports them: classic groups run the
// JoinGroup/SyncGroup protocol, consumer groups the broker-assigned
// heartbeat protocol (KIP-848).
const (
	GroupTypeClassic  = "classic"
	GroupTypeConsumer = "consumer"
)

// Inactive reports whether a group in this state has no members, so that
// its offsets may be changed from outside the group.
func Inactive(state string) bool {
	return state == "" || strings.EqualFold(state, "Empty") || strings.EqualFold(state, "Dead")
}

// GroupMember is one member of a group and the partitions assigned to it.
type GroupMember struct {
	MemberID   string  `json:"member_id"`
	InstanceID *string `json:"instance_id"`
	ClientID   string  `json:"client_id"`
	Host       string  `json:"host"`
	// Principal is who the member's client authenticated as, from the
	// coordinator's admin API (klog only; GroupPrincipals); "" when
	// unknown.
	Principal string            `json:"principal,omitempty"`
	Assigned  []TopicPartitions `json:"assigned"`
}

// GroupInfo is a group's membership, whichever protocol it runs.
type GroupInfo struct {
	Group        string
	Type         string // GroupTypeClassic or GroupTypeConsumer
	State        string
	ProtocolType string // "consumer" for consumers, "connect", ...
	Protocol     string // the assignor
	Coordinator  int32  // -1 when unknown
	Members      []GroupMember
	Err          error // the group could not be described
	NotFound     bool  // the broker does not know the group (State is "Dead")
}

// Active reports whether the group has members or a state in which it
// has them: its committed offsets must not be changed from outside.
func (g GroupInfo) Active() bool {
	return !Inactive(g.State) || len(g.Members) > 0
}

// GroupListing is one group as ListGroups lists it. Error is present only
// when the group was listed but could not be described.
type GroupListing struct {
	Group        string `json:"group"`
	Type         string `json:"type"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol"`
	Members      int    `json:"members"`
	Coordinator  int32  `json:"coordinator"`
	Error        string `json:"error,omitempty"`
}

// ListGroups lists the groups of the cluster, classic and consumer protocol
// alike, sorted by name, each described for its protocol and number of
// members. states (the broker's spelling) keeps only groups in those
// states; none keeps all.
//
// When no broker answers it returns nil and the error. When some do not, it
// returns what the others know (never nil) together with their error.
func ListGroups(ctx context.Context, cl *kgo.Client, adm *kadm.Client, states ...string) ([]GroupListing, error) {
	listed, listErr := listGroupTypes(ctx, adm, states...)
	if listed == nil {
		return nil, listErr
	}
	var names []string
	for _, l := range listed.Sorted() {
		// Brokers that predate the state filter ignore it.
		if len(states) > 0 && !containsFold(states, l.State) {
			continue
		}
		names = append(names, l.Group)
	}
	infos := describeListed(ctx, cl, adm, names, listed)
	items := []GroupListing{}
	for _, n := range names {
		l, info := listed[n], infos[n]
		it := GroupListing{
			Group:        n,
			Type:         l.GroupType,
			State:        l.State,
			ProtocolType: l.ProtocolType,
			Coordinator:  l.Coordinator,
		}
		if it.Type == "" {
			it.Type = GroupTypeClassic
		}
		switch {
		case info.Err != nil:
			it.Error = info.Err.Error()
		case info.NotFound:
			continue // deleted since the listing
		default:
			it.Type, it.Protocol, it.Members = info.Type, info.Protocol, len(info.Members)
			if info.State != "" {
				it.State = info.State
			}
			if info.ProtocolType != "" {
				it.ProtocolType = info.ProtocolType
			}
		}
		items = append(items, it)
	}
	return items, listErr
}

// DescribeGroups describes the named groups, whichever protocol each runs,
// keyed by name; a group that cannot be described carries its Err, one the
// cluster does not know is NotFound. The error is non-nil only when the
// groups could not be listed at all (the listing tells each group's
// protocol). It first waits for the groups' coordinators (WaitCoordinators).
func DescribeGroups(ctx context.Context, cl *kgo.Client, adm *kadm.Client, names []string) (map[string]GroupInfo, error) {
	WaitCoordinators(ctx, adm, GroupCoordinator, names...)
	listed, err := listGroupTypes(ctx, adm)
	if listed == nil {
		return nil, err
	}
	return describeListed(ctx, cl, adm, names, listed), nil
}

// listGroupTypes returns the type of every group the cluster lists. An
// empty type means the broker does not report types: the group is classic.
func listGroupTypes(ctx context.Context, adm *kadm.Client, states ...string) (kadm.ListedGroups, error) {
	listed, err := adm.ListGroups(ctx, states...)
	if err != nil && listed == nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	return listed, err
}

// describeListed describes groups of both protocols: those the listing says
// are consumer-protocol groups with ConsumerGroupDescribe, all others with
// DescribeGroups, falling back to ConsumerGroupDescribe for a group
// DescribeGroups does not know (it may have appeared since the listing).
//
// A group whose coordinator could not be reached is described again (see
// reach).
func describeListed(ctx context.Context, cl *kgo.Client, adm *kadm.Client, names []string, listed kadm.ListedGroups) map[string]GroupInfo {
	infos := make(map[string]GroupInfo, len(names))
	todo := names
	_ = reach(ctx, adm, func() error {
		maps.Copy(infos, describeListedOnce(ctx, cl, adm, todo, listed))
		var err error
		todo = nil
		for _, n := range names {
			if unreachable(infos[n].Err) {
				todo, err = append(todo, n), infos[n].Err
			}
		}
		return err
	})
	return infos
}

// describeListedOnce is describeListed without trying again.
func describeListedOnce(ctx context.Context, cl *kgo.Client, adm *kadm.Client, names []string, listed kadm.ListedGroups) map[string]GroupInfo {
	infos := make(map[string]GroupInfo, len(names))
	var classic, next []string
	for _, n := range names {
		if listed[n].GroupType == GroupTypeConsumer {
			next = append(next, n)
		} else {
			classic = append(classic, n)
		}
	}
	fallback := make(map[string]bool)
	if len(classic) > 0 {
		described, err := adm.DescribeGroups(ctx, classic...)
		for _, n := range classic {
			info := GroupInfo{Group: n, Type: GroupTypeClassic, Coordinator: -1}
			if l, ok := listed[n]; ok {
				info.Coordinator = l.Coordinator
			}
			d, ok := described[n]
			switch {
			case !ok:
				info.Err = NoResponse(err)
			case errors.Is(d.Err, kerr.GroupIDNotFound) || (d.Err == nil && d.State == "Dead"):
				info.State, info.NotFound = "Dead", true
				if _, wasListed := listed[n]; !wasListed {
					fallback[n] = true
					next = append(next, n)
				}
			case d.Err != nil:
				info.Err = errors.New(ErrorText(d.Err, d.ErrMessage))
			default:
				info.State, info.ProtocolType, info.Protocol = d.State, d.ProtocolType, d.Protocol
				info.Coordinator = d.Coordinator.NodeID
				for _, m := range d.Members {
					gm := GroupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: []TopicPartitions{}}
					if a, ok := m.Assigned.AsConsumer(); ok {
						set := make(kadm.TopicsSet)
						for _, t := range a.Topics {
							set.Add(t.Topic, t.Partitions...)
						}
						gm.Assigned = sortedPartitions(set)
					}
					info.Members = append(info.Members, gm)
				}
			}
			infos[n] = info
		}
	}
	if len(next) > 0 {
		described := describeConsumerGroups(ctx, cl, adm, next)
		for _, n := range next {
			info, ok := described[n]
			if fallback[n] {
				// Only a group the consumer protocol knows replaces the
				// classic answer "not found".
				if ok && info.Err == nil && !info.NotFound {
					infos[n] = info
				}
				continue
			}
			if !ok {
				info = GroupInfo{Group: n, Type: GroupTypeConsumer, Coordinator: listed[n].Coordinator, Err: NoResponse(nil)}
			}
			infos[n] = info
		}
	}
	return infos
}

// describeConsumerGroups describes consumer-protocol groups. It sends
// ConsumerGroupDescribe itself rather than through kadm so that assignments
// given only by topic ID can be named.
func describeConsumerGroups(ctx context.Context, cl *kgo.Client, adm *kadm.Client, names []string) map[string]GroupInfo {
	infos := make(map[string]GroupInfo, len(names))
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = names
	var topicNames map[kadm.TopicID]string // resolved once, when first needed
	topicName := func(tp kmsg.AssignmentTopicPartition) string {
		if tp.Topic != "" {
			return tp.Topic
		}
		if topicNames == nil {
			topicNames = make(map[kadm.TopicID]string)
			if details, err := adm.ListTopicsWithInternal(ctx); err == nil {
				for _, d := range details {
					topicNames[d.ID] = d.Topic
				}
			}
		}
		if n, ok := topicNames[kadm.TopicID(tp.TopicID)]; ok {
			return n
		}
		return kadm.TopicID(tp.TopicID).String()
	}
	assignment := func(a kmsg.Assignment) []TopicPartitions {
		set := make(kadm.TopicsSet)
		for _, tp := range a.TopicPartitions {
			set.Add(topicName(tp), tp.Partitions...)
		}
		return sortedPartitions(set)
	}
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			if sreq, ok := shard.Req.(*kmsg.ConsumerGroupDescribeRequest); ok {
				for _, n := range sreq.Groups {
					infos[n] = GroupInfo{Group: n, Type: GroupTypeConsumer, Coordinator: -1, Err: shard.Err}
				}
			}
			continue
		}
		resp, ok := shard.Resp.(*kmsg.ConsumerGroupDescribeResponse)
		if !ok {
			continue
		}
		for _, rg := range resp.Groups {
			info := GroupInfo{Group: rg.Group, Type: GroupTypeConsumer, Coordinator: shard.Meta.NodeID}
			if err := kerr.ErrorForCode(rg.ErrorCode); err != nil {
				if errors.Is(err, kerr.GroupIDNotFound) {
					info.State, info.NotFound = "Dead", true
				} else {
					info.Err = errors.New(ErrorText(err, deref(rg.ErrorMessage)))
				}
				infos[rg.Group] = info
				continue
			}
			info.State, info.ProtocolType, info.Protocol = rg.State, "consumer", rg.AssignorName
			for _, m := range rg.Members {
				info.Members = append(info.Members, GroupMember{
					MemberID:   m.MemberID,
					InstanceID: m.InstanceID,
					ClientID:   m.ClientID,
					Host:       m.ClientHost,
					Assigned:   assignment(m.Assignment),
				})
			}
			sort.Slice(info.Members, func(i, j int) bool { return info.Members[i].MemberID < info.Members[j].MemberID })
			infos[rg.Group] = info
		}
	}
	return infos
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// sortedPartitions lists a set of partitions sorted by topic and partition.
func sortedPartitions(set kadm.TopicsSet) []TopicPartitions {
	out := []TopicPartitions{}
	for _, tp := range set.Sorted() {
		out = append(out, TopicPartitions{Topic: tp.Topic, Partitions: slices.Sorted(slices.Values(tp.Partitions))})
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
