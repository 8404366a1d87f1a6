package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupJSONVersion is the "version" field of every group command's JSON
// output; it changes only when a field changes meaning or goes away.
const groupJSONVersion = 1

// Group types as ListGroups reports them: classic groups run the
// JoinGroup/SyncGroup protocol, consumer groups the broker-assigned
// heartbeat protocol.
const (
	groupTypeClassic  = "classic"
	groupTypeConsumer = "consumer"
)

// ErrGroupNotFound reports that a group named on the command line does not
// exist: no members and no committed offsets.
var ErrGroupNotFound = errors.New("group does not exist")

// ErrGroupActive reports that a group has members, so its committed offsets
// must not be changed from outside: stop its consumers first.
var ErrGroupActive = errors.New("group has active members")

// ErrNoCommittedOffsets reports a seek on a group that has no committed
// offsets and no --topics to say what to seek.
var ErrNoCommittedOffsets = errors.New("group has no committed offsets")

// ErrNotConfirmed reports that a destructive command did nothing because it
// was not confirmed: declined at the prompt, or run without a terminal and
// without --yes.
var ErrNotConfirmed = errors.New("not confirmed")

func newGroupCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "group",
		Aliases: []string{"groups"},
		Short:   "List, describe, seek and delete consumer groups",
	}
	cmd.AddCommand(
		newGroupListCmd(g),
		newGroupDescribeCmd(g),
		newGroupSeekCmd(g),
		newGroupDeleteCmd(g),
	)
	return cmd
}

// groupStates are the group states a broker reports, classic and consumer
// protocol together, spelled as the broker spells them.
var groupStates = []string{
	"Empty", "Stable", "PreparingRebalance", "CompletingRebalance",
	"Assigning", "Reconciling", "NotReady", "Dead",
}

// canonicalState returns the broker's spelling of a state given in any
// case.
func canonicalState(s string) (string, bool) {
	for _, st := range groupStates {
		if strings.EqualFold(st, s) {
			return st, true
		}
	}
	return "", false
}

// inactive reports whether a group in this state has no members, so that
// its offsets may be changed from outside the group.
func inactive(state string) bool {
	return state == "" || strings.EqualFold(state, "Empty") || strings.EqualFold(state, "Dead")
}

// ---- describing groups of either protocol ----

// groupMember is one member of a group in JSON and text output.
type groupMember struct {
	MemberID   string          `json:"member_id"`
	InstanceID *string         `json:"instance_id"`
	ClientID   string          `json:"client_id"`
	Host       string          `json:"host"`
	Assigned   []assignedTopic `json:"assigned"`
}

// assignedTopic is the partitions of one topic assigned to a member.
type assignedTopic struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// groupInfo is what klog shows of a group's membership, whichever protocol
// it runs.
type groupInfo struct {
	Group        string
	Type         string // classic or consumer
	State        string
	ProtocolType string // "consumer" for consumers, "connect", ...
	Protocol     string // the assignor
	Coordinator  int32
	Members      []groupMember
	err          error // the group could not be described
	notFound     bool  // the broker does not know the group
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

// describeGroups describes groups of both protocols: those the listing says
// are consumer-protocol groups with ConsumerGroupDescribe, all others with
// DescribeGroups, falling back to ConsumerGroupDescribe for a group
// DescribeGroups does not know (it may have appeared since the listing).
func describeGroups(ctx context.Context, cl *kgo.Client, adm *kadm.Client, names []string, listed kadm.ListedGroups) map[string]groupInfo {
	infos := make(map[string]groupInfo, len(names))
	var classic, next []string
	for _, n := range names {
		if listed[n].GroupType == groupTypeConsumer {
			next = append(next, n)
		} else {
			classic = append(classic, n)
		}
	}
	fallback := make(map[string]bool)
	if len(classic) > 0 {
		described, err := adm.DescribeGroups(ctx, classic...)
		for _, n := range classic {
			info := groupInfo{Group: n, Type: groupTypeClassic, Coordinator: -1}
			if l, ok := listed[n]; ok {
				info.Coordinator = l.Coordinator
			}
			d, ok := described[n]
			switch {
			case !ok:
				info.err = noResponse(err)
			case errors.Is(d.Err, kerr.GroupIDNotFound) || (d.Err == nil && d.State == "Dead"):
				info.State, info.notFound = "Dead", true
				if _, wasListed := listed[n]; !wasListed {
					fallback[n] = true
					next = append(next, n)
				}
			case d.Err != nil:
				info.err = errors.New(errString(d.Err, d.ErrMessage))
			default:
				info.State, info.ProtocolType, info.Protocol = d.State, d.ProtocolType, d.Protocol
				info.Coordinator = d.Coordinator.NodeID
				for _, m := range d.Members {
					gm := groupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: []assignedTopic{}}
					if a, ok := m.Assigned.AsConsumer(); ok {
						set := make(kadm.TopicsSet)
						for _, t := range a.Topics {
							set.Add(t.Topic, t.Partitions...)
						}
						gm.Assigned = sortedAssignment(set)
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
				if ok && info.err == nil && !info.notFound {
					infos[n] = info
				}
				continue
			}
			if !ok {
				info = groupInfo{Group: n, Type: groupTypeConsumer, Coordinator: listed[n].Coordinator, err: noResponse(nil)}
			}
			infos[n] = info
		}
	}
	return infos
}

// describeConsumerGroups describes consumer-protocol groups. It sends
// ConsumerGroupDescribe itself rather than through kadm so that assignments
// given only by topic ID can be named.
func describeConsumerGroups(ctx context.Context, cl *kgo.Client, adm *kadm.Client, names []string) map[string]groupInfo {
	infos := make(map[string]groupInfo, len(names))
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
	assignment := func(a kmsg.Assignment) []assignedTopic {
		set := make(kadm.TopicsSet)
		for _, tp := range a.TopicPartitions {
			set.Add(topicName(tp), tp.Partitions...)
		}
		return sortedAssignment(set)
	}
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			if sreq, ok := shard.Req.(*kmsg.ConsumerGroupDescribeRequest); ok {
				for _, n := range sreq.Groups {
					infos[n] = groupInfo{Group: n, Type: groupTypeConsumer, Coordinator: -1, err: shard.Err}
				}
			}
			continue
		}
		resp, ok := shard.Resp.(*kmsg.ConsumerGroupDescribeResponse)
		if !ok {
			continue
		}
		for _, rg := range resp.Groups {
			info := groupInfo{Group: rg.Group, Type: groupTypeConsumer, Coordinator: shard.Meta.NodeID}
			if err := kerr.ErrorForCode(rg.ErrorCode); err != nil {
				if errors.Is(err, kerr.GroupIDNotFound) {
					info.State, info.notFound = "Dead", true
				} else {
					info.err = errors.New(errString(err, deref(rg.ErrorMessage)))
				}
				infos[rg.Group] = info
				continue
			}
			info.State, info.ProtocolType, info.Protocol = rg.State, "consumer", rg.AssignorName
			for _, m := range rg.Members {
				info.Members = append(info.Members, groupMember{
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

// withGroupAdmin runs fn with a client and an admin client on it, closed
// afterwards.
func withGroupAdmin(g *globals, fn func(*kgo.Client, *kadm.Client) error) error {
	cl, err := g.newClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(cl, kadm.NewClient(cl))
}

// noResponse explains a group missing from a response.
func noResponse(err error) error {
	if err != nil {
		return err
	}
	return errors.New("no response from the broker")
}

// sortedAssignment renders a set of partitions sorted by topic and
// partition.
func sortedAssignment(set kadm.TopicsSet) []assignedTopic {
	out := []assignedTopic{}
	for _, tp := range set.Sorted() {
		ps := append([]int32(nil), tp.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		out = append(out, assignedTopic{Topic: tp.Topic, Partitions: ps})
	}
	return out
}

// completionTimeout bounds the broker round trip of a shell completion.
const completionTimeout = 3 * time.Second

// completeGroups completes group names from the live cluster; every
// positional argument is a group, each named once.
func completeGroups(g *globals, maxArgs int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if maxArgs > 0 && len(args) >= maxArgs {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if err := g.resolve(cmd); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		var names []cobra.Completion
		_ = withAdmin(g, func(adm *kadm.Client) error {
			listed, _ := adm.ListGroups(ctx)
			for _, n := range listed.Groups() {
				if strings.HasPrefix(n, toComplete) && !slices.Contains(args, n) {
					names = append(names, n)
				}
			}
			return nil
		})
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// ---- group list ----

// groupListJSON is the JSON output of group list.
type groupListJSON struct {
	Version int             `json:"version"`
	Groups  []groupListItem `json:"groups"`
}

type groupListItem struct {
	Group        string `json:"group"`
	Type         string `json:"type"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol"`
	Members      int    `json:"members"`
	Coordinator  int32  `json:"coordinator"`
	Error        string `json:"error,omitempty"`
}

func newGroupListCmd(g *globals) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:     "list [--state STATE]...",
		Aliases: []string{"ls"},
		Short:   "List consumer groups with their state, assignor, members and coordinator",
		Long: `List the groups of the cluster, classic and consumer protocol alike.

--state keeps only groups in the given states (repeatable or comma-separated,
any case): Empty, Stable, PreparingRebalance, CompletingRebalance, Assigning,
Reconciling, NotReady, Dead.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGroupList(cmd.Context(), g, states, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only groups in this state (repeatable)")
	return cmd
}

func runGroupList(ctx context.Context, g *globals, states []string, out, diag io.Writer) error {
	canon := make([]string, 0, len(states))
	for _, s := range states {
		c, ok := canonicalState(strings.TrimSpace(s))
		if !ok {
			return usagef("--state %q: want one of %s", s, strings.Join(groupStates, ", "))
		}
		canon = append(canon, c)
	}
	return withGroupAdmin(g, func(cl *kgo.Client, adm *kadm.Client) error {
		listed, listErr := listGroupTypes(ctx, adm, canon...)
		if listed == nil {
			return listErr
		}
		failed := 0
		if listErr != nil {
			// Some brokers did not answer: list what the others know.
			failed++
			fmt.Fprintf(diag, "klog: list groups: %v\n", listErr)
		}
		var names []string
		for _, l := range listed.Sorted() {
			// Brokers that predate the state filter ignore it.
			if len(canon) > 0 && !containsFold(canon, l.State) {
				continue
			}
			names = append(names, l.Group)
		}
		infos := describeGroups(ctx, cl, adm, names, listed)
		items := []groupListItem{}
		for _, n := range names {
			l, info := listed[n], infos[n]
			it := groupListItem{
				Group:        n,
				Type:         orDefault(l.GroupType, groupTypeClassic),
				State:        l.State,
				ProtocolType: l.ProtocolType,
				Coordinator:  l.Coordinator,
			}
			switch {
			case info.err != nil:
				failed++
				it.Error = info.err.Error()
				fmt.Fprintf(diag, "klog: group %q: %s\n", n, it.Error)
			case info.notFound:
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
		if g.format == formatJSON {
			if err := writeJSON(out, groupListJSON{Version: groupJSONVersion, Groups: items}); err != nil {
				return err
			}
		} else {
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tTYPE\tSTATE\tPROTOCOL-TYPE\tPROTOCOL\tMEMBERS\tCOORDINATOR")
			for _, it := range items {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", it.Group, it.Type, orDash(it.State),
					orDash(it.ProtocolType), orDash(it.Protocol), it.Members, it.Coordinator)
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d groups could not be listed or described: %w", failed, ErrItemsFailed)
		}
		return nil
	})
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDash(s string) string { return orDefault(s, "-") }

// ---- group describe ----

// groupDescribeJSON is the JSON output of group describe.
type groupDescribeJSON struct {
	Version int             `json:"version"`
	Groups  []groupDescribe `json:"groups"`
}

// groupDescribe is one group: membership, then committed offsets and lag
// per partition.
type groupDescribe struct {
	Group        string           `json:"group"`
	Type         string           `json:"type"`
	State        string           `json:"state"`
	ProtocolType string           `json:"protocol_type"`
	Protocol     string           `json:"protocol"`
	Coordinator  int32            `json:"coordinator"`
	Members      []groupMember    `json:"members"`
	Partitions   []groupPartition `json:"partitions"`
	TotalLag     int64            `json:"total_lag"`
	Error        string           `json:"error,omitempty"`
}

// groupPartition is the position of a group in one partition. Committed is
// null when the group has no committed offset there; Lag is null when the
// partition's offsets could not be listed.
type groupPartition struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	Committed        *int64 `json:"committed"`
	LogStartOffset   int64  `json:"log_start_offset"`
	HighWatermark    int64  `json:"high_watermark"`
	LastStableOffset int64  `json:"last_stable_offset"`
	Lag              *int64 `json:"lag"`
	MemberID         string `json:"member_id,omitempty"`
	Error            string `json:"error,omitempty"`
}

// partitionLag is how many offsets a read_committed consumer of the group
// still has to read in a partition: from its committed offset (the log start
// when it has none, or when the log no longer reaches back to it) up to the
// last stable offset. Measuring to the LSO rather than the high watermark
// keeps the markers that close transactions out of the lag: a consumer that
// has read everything has lag 0.
func partitionLag(committed *int64, logStart, lso int64) int64 {
	from := logStart
	if committed != nil && *committed > logStart {
		from = *committed
	}
	return max(0, lso-from)
}

// exactLagLimit is the largest offset distance describe reads through to
// count the records a read_committed consumer has left; beyond it, lag is the
// offset distance (markers included), which is close at that size.
const exactLagLimit = 10000

// countRecords counts the records a read_committed consumer reads between
// offsets from and to (exclusive): data of committed transactions and
// non-transactional data, not markers and not aborted records. It reads
// the range with control records kept, so it knows when it reached to even
// when the range ends in a marker.
func countRecords(ctx context.Context, g *globals, topic string, partition int32, from, to int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := g.newClient(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var n int64
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := fs.Err0(); err != nil {
			return 0, err
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= to {
				done = true
				return
			}
			if !r.Attrs.IsControl() {
				n++
			}
			if r.Offset == to-1 {
				done = true
			}
		})
		if done {
			return n, nil
		}
	}
}

func newGroupDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Describe groups: members, assignments, committed offsets and lag",
		Long: `Describe groups: state, assignor, members with their assigned partitions,
and per partition the committed offset, log start, high watermark (HW), last
stable offset (LSO) and lag.

Lag is what a read_committed consumer has left to read between its
committed offset and the LSO, counted in records: transaction markers and
aborted records are not counted (beyond 10,000 offsets, lag is the offset
distance). A partition without a committed offset shows "-" and its lag
from the log start.`,
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: completeGroups(g, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGroupDescribe(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runGroupDescribe(ctx context.Context, g *globals, names []string, out, diag io.Writer) error {
	return withGroupAdmin(g, func(cl *kgo.Client, adm *kadm.Client) error {
		listed, err := listGroupTypes(ctx, adm)
		if listed == nil {
			return err
		}
		infos := describeGroups(ctx, cl, adm, names, listed)
		descs := make([]groupDescribe, 0, len(names))
		failed := 0
		for _, n := range names {
			d := describeGroupOffsets(ctx, g, adm, infos[n])
			if d.Error != "" {
				failed++
				fmt.Fprintf(diag, "klog: group %q: %s\n", n, d.Error)
			}
			for _, p := range d.Partitions {
				if p.Error != "" {
					failed++
					fmt.Fprintf(diag, "klog: group %q: %s[%d]: %s\n", n, p.Topic, p.Partition, p.Error)
				}
			}
			descs = append(descs, d)
		}
		if g.format == formatJSON {
			if err := writeJSON(out, groupDescribeJSON{Version: groupJSONVersion, Groups: descs}); err != nil {
				return err
			}
		} else if err := writeGroupDescribeText(out, descs); err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("%d items failed: %w", failed, ErrItemsFailed)
		}
		return nil
	})
}

// describeGroupOffsets adds committed offsets and lag to a group's
// membership.
func describeGroupOffsets(ctx context.Context, g *globals, adm *kadm.Client, info groupInfo) groupDescribe {
	d := groupDescribe{
		Group:        info.Group,
		Type:         info.Type,
		State:        info.State,
		ProtocolType: info.ProtocolType,
		Protocol:     info.Protocol,
		Coordinator:  info.Coordinator,
		Members:      info.Members,
		Partitions:   []groupPartition{},
	}
	if d.Members == nil {
		d.Members = []groupMember{}
	}
	if info.err != nil {
		d.Error = info.err.Error()
		return d
	}
	committed, err := adm.FetchOffsets(ctx, info.Group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		d.Error = fmt.Sprintf("fetch committed offsets: %v", err)
		return d
	}
	// The partitions shown: those with a committed offset, and those
	// assigned to a member (which may not have committed yet).
	owner := make(map[string]map[int32]string)
	parts := make(kadm.TopicsSet)
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			parts.Add(o.Topic, o.Partition)
		}
	})
	for _, m := range info.Members {
		for _, a := range m.Assigned {
			parts.Add(a.Topic, a.Partitions...)
			if owner[a.Topic] == nil {
				owner[a.Topic] = make(map[int32]string)
			}
			for _, p := range a.Partitions {
				owner[a.Topic][p] = m.MemberID
			}
		}
	}
	if info.notFound && len(parts) == 0 {
		d.Error = ErrGroupNotFound.Error()
		return d
	}
	if len(parts) == 0 {
		return d
	}
	topics := parts.Topics()
	lists, err := listPartitionOffsets(ctx, adm, topics, nil)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	for _, tp := range parts.Sorted() {
		ps := append([]int32(nil), tp.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			gp := groupPartition{Topic: tp.Topic, Partition: p, MemberID: owner[tp.Topic][p], LogStartOffset: -1, HighWatermark: -1, LastStableOffset: -1}
			if c, ok := committed.Lookup(tp.Topic, p); ok && c.Err == nil && c.At >= 0 {
				at := c.At
				gp.Committed = &at
			}
			o, err := lists.lookup(tp.Topic, p)
			if err != nil {
				gp.Error = err.Error()
			} else {
				gp.LogStartOffset, gp.HighWatermark, gp.LastStableOffset = o.start, o.hw, o.lso
				lag := partitionLag(gp.Committed, o.start, o.lso)
				if lag > 0 && lag <= exactLagLimit {
					// Count records, not offsets: transaction markers
					// and aborted records are nothing to consume.
					if n, err := countRecords(ctx, g, tp.Topic, p, o.lso-lag, o.lso); err == nil {
						lag = n
					}
				}
				gp.Lag = &lag
				d.TotalLag += lag
			}
			d.Partitions = append(d.Partitions, gp)
		}
	}
	return d
}

// offsetLists holds the offsets of every partition of some topics.
type offsetLists struct {
	starts, hws, lsos kadm.ListedOffsets
	times             map[int64]kadm.ListedOffsets
}

// listedOffsets are one partition's offsets.
type listedOffsets struct {
	start, hw, lso int64
	times          map[int64]int64 // first offset at or after each timestamp
}

// listPartitionOffsets lists log start, high watermark, last stable offset
// and the offsets for the given timestamps of every partition of topics.
func listPartitionOffsets(ctx context.Context, adm *kadm.Client, topics []string, timestamps []int64) (offsetLists, error) {
	var l offsetLists
	var err error
	if len(topics) == 0 {
		return l, nil // kadm would list every topic
	}
	if l.starts, err = adm.ListStartOffsets(ctx, topics...); err != nil {
		return l, fmt.Errorf("list start offsets: %w", err)
	}
	if l.hws, err = adm.ListEndOffsets(ctx, topics...); err != nil {
		return l, fmt.Errorf("list end offsets: %w", err)
	}
	if l.lsos, err = adm.ListCommittedOffsets(ctx, topics...); err != nil {
		return l, fmt.Errorf("list last stable offsets: %w", err)
	}
	l.times = make(map[int64]kadm.ListedOffsets, len(timestamps))
	for _, ms := range timestamps {
		lo, err := adm.ListOffsetsAfterMilli(ctx, ms, topics...)
		if err != nil {
			return l, fmt.Errorf("list offsets after %s: %w", time.UnixMilli(ms).UTC().Format(time.RFC3339), err)
		}
		l.times[ms] = lo
	}
	return l, nil
}

// lookup returns one partition's offsets, or why they are missing.
func (l offsetLists) lookup(topic string, partition int32) (listedOffsets, error) {
	o := listedOffsets{times: make(map[int64]int64, len(l.times))}
	get := func(lo kadm.ListedOffsets) (int64, error) {
		r, ok := lo.Lookup(topic, partition)
		if !ok {
			// A topic-level failure (the topic is gone) is filed under
			// partition -1.
			if te, ok := lo.Lookup(topic, -1); ok && te.Err != nil {
				return 0, te.Err
			}
			return 0, fmt.Errorf("partition %d: %w", partition, ErrPartitionNotFound)
		}
		return r.Offset, r.Err
	}
	var err error
	if o.start, err = get(l.starts); err != nil {
		return o, err
	}
	if o.hw, err = get(l.hws); err != nil {
		return o, err
	}
	if o.lso, err = get(l.lsos); err != nil {
		return o, err
	}
	for ms, lo := range l.times {
		if t, err := get(lo); err == nil && t >= 0 {
			o.times[ms] = t
		}
	}
	return o, nil
}

// writeGroupDescribeText prints one block per group.
func writeGroupDescribeText(out io.Writer, descs []groupDescribe) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	flush := func() error {
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	}
	first := true
	for _, d := range descs {
		if d.Error != "" && len(d.Partitions) == 0 {
			continue
		}
		if !first {
			fmt.Fprintln(tw)
		}
		first = false
		fmt.Fprintf(tw, "GROUP\t%s\n", d.Group)
		fmt.Fprintf(tw, "TYPE\t%s\n", d.Type)
		fmt.Fprintf(tw, "STATE\t%s\n", orDash(d.State))
		fmt.Fprintf(tw, "PROTOCOL-TYPE\t%s\n", orDash(d.ProtocolType))
		fmt.Fprintf(tw, "PROTOCOL\t%s\n", orDash(d.Protocol))
		fmt.Fprintf(tw, "COORDINATOR\t%d\n", d.Coordinator)
		fmt.Fprintf(tw, "MEMBERS\t%d\n", len(d.Members))
		fmt.Fprintf(tw, "TOTAL-LAG\t%d\n", d.TotalLag)
		if err := flush(); err != nil {
			return err
		}
		if len(d.Members) > 0 {
			fmt.Fprintln(tw)
			fmt.Fprintln(tw, "MEMBER-ID\tINSTANCE-ID\tCLIENT-ID\tHOST\tASSIGNED")
			for _, m := range d.Members {
				inst := "-"
				if m.InstanceID != nil {
					inst = *m.InstanceID
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.MemberID, inst, orDash(m.ClientID), orDash(m.Host), assignmentString(m.Assigned))
			}
			if err := flush(); err != nil {
				return err
			}
		}
		if len(d.Partitions) > 0 {
			fmt.Fprintln(tw)
			fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOMMITTED\tLOG-START\tHW\tLSO\tLAG\tMEMBER-ID")
			for _, p := range d.Partitions {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s", p.Topic, p.Partition, optOffset(p.Committed),
					offsetOrDash(p.LogStartOffset), offsetOrDash(p.HighWatermark), offsetOrDash(p.LastStableOffset),
					optOffset(p.Lag), orDash(p.MemberID))
				if p.Error != "" {
					fmt.Fprintf(tw, "\t%s", p.Error)
				}
				fmt.Fprintln(tw)
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// assignmentString renders an assignment as "t1[0,1] t2[3]".
func assignmentString(as []assignedTopic) string {
	if len(as) == 0 {
		return "-"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.Topic + "[" + int32List(a.Partitions) + "]"
	}
	return strings.Join(parts, " ")
}

func optOffset(o *int64) string {
	if o == nil {
		return "-"
	}
	return fmt.Sprint(*o)
}

func offsetOrDash(o int64) string {
	if o < 0 {
		return "-"
	}
	return fmt.Sprint(o)
}

// ---- group seek ----

type groupSeekOptions struct {
	group       string
	to          string
	topics      []string
	dryRun      bool
	yes         bool
	interactive bool // stdin is a terminal: ask before committing
}

// groupSeekJSON is the JSON output of group seek. Committed tells whether
// the new offsets were committed (false for --dry-run and when not
// confirmed).
type groupSeekJSON struct {
	Version    int         `json:"version"`
	Group      string      `json:"group"`
	DryRun     bool        `json:"dry_run"`
	Committed  bool        `json:"committed"`
	Partitions []seekEntry `json:"partitions"`
}

// seekEntry is one partition of a seek: the committed offset now (null if
// none) and the offset the seek commits (null when it could not be
// computed).
type seekEntry struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   *int64 `json:"current"`
	New       *int64 `json:"new"`
	Error     string `json:"error,omitempty"`
}

func newGroupSeekCmd(g *globals) *cobra.Command {
	var o groupSeekOptions
	cmd := &cobra.Command{
		Use:   "seek GROUP --to start|end|N|-N|+N|@TIME [--topics t1,t2] [--dry-run] [--yes]",
		Short: "Set a group's committed offsets (the group must have no members)",
		Long: `Set a group's committed offsets, per partition, to a position:

  start    the log start offset
  end      the last stable offset (the end a read_committed consumer sees)
  N        offset N, clamped to [start, end]
  -N / +N  N before end / N after start
  @TIME    the first record at or after TIME (RFC3339, YYYY-MM-DD, unix
           milliseconds, or a duration like -1h); end if there is none

The partitions are those the group has committed offsets for, or all
partitions of --topics. A group with members is refused: stop its consumers
first (--dry-run still previews).

The preview (current -> new) is printed first. In a terminal klog asks before
committing; --yes commits without asking. Without a terminal nothing is
committed unless --yes is given.`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeGroups(g, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.group = args[0]
			o.interactive = isTerminal(cmd.InOrStdin())
			return runGroupSeek(cmd.Context(), g, o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "the position to seek to (required): start|end|N|-N|+N|@TIME")
	f.StringSliceVar(&o.topics, "topics", nil, "seek all partitions of these topics (default: the topics the group committed)")
	f.BoolVar(&o.dryRun, "dry-run", false, "only print the new offsets")
	f.BoolVarP(&o.yes, "yes", "y", false, "commit without asking")
	return cmd
}

func runGroupSeek(ctx context.Context, g *globals, o groupSeekOptions, in io.Reader, out, diag io.Writer) error {
	if o.to == "" {
		return usagef("--to is required: start|end|N|-N|+N|@TIME")
	}
	spec, err := parseOffsetSpec(o.to, time.Now())
	if err != nil {
		return &usageError{err: fmt.Errorf("--to: %w", err)}
	}
	if spec.stop != nil {
		return usagef("--to %q: want one position, not a range", o.to)
	}
	for _, t := range o.topics {
		if strings.TrimSpace(t) == "" {
			return usagef("--topics: empty topic name")
		}
	}
	return withGroupAdmin(g, func(cl *kgo.Client, adm *kadm.Client) error {
		info, err := groupState(ctx, cl, adm, o.group)
		if err != nil {
			return err
		}
		active := !inactive(info.State) || len(info.Members) > 0
		if active && !o.dryRun {
			return activeError(info)
		}
		entries, err := planSeek(ctx, adm, o, spec.start)
		if err != nil {
			return err
		}
		res := groupSeekJSON{Version: groupJSONVersion, Group: o.group, DryRun: o.dryRun, Partitions: entries}
		preview := out
		if g.format == formatJSON {
			preview = diag // stdout carries the one JSON document
		}
		showPreview := g.format == formatText || (!o.yes && o.interactive && !o.dryRun)
		if showPreview {
			if err := writeSeekTable(preview, entries); err != nil {
				return err
			}
		}
		if o.dryRun {
			if active {
				fmt.Fprintf(diag, "klog: note: %v; stop its consumers before seeking\n", activeError(info))
			}
			return finishSeek(g, out, diag, res)
		}
		if !o.yes {
			if !o.interactive {
				if err := finishSeek(g, out, diag, res); err != nil && !errors.Is(err, ErrItemsFailed) {
					return err
				}
				return fmt.Errorf("nothing committed: stdin is not a terminal; pass --yes to commit the offsets above, or --dry-run to only preview: %w", ErrNotConfirmed)
			}
			ok, err := confirm(in, diag, fmt.Sprintf("Commit %d offsets for group %q?", countCommittable(entries), o.group))
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("nothing committed: %w", ErrNotConfirmed)
			}
		}
		// Members may have joined while we computed or asked.
		if info, err = groupState(ctx, cl, adm, o.group); err != nil {
			return err
		}
		if !inactive(info.State) || len(info.Members) > 0 {
			return activeError(info)
		}
		if err := commitSeek(ctx, adm, o.group, entries); err != nil {
			return err
		}
		res.Committed = countCommittable(entries) > 0
		return finishSeek(g, out, diag, res)
	})
}

// groupState describes one group for seek: its state and members.
func groupState(ctx context.Context, cl *kgo.Client, adm *kadm.Client, group string) (groupInfo, error) {
	listed, err := listGroupTypes(ctx, adm)
	if listed == nil {
		return groupInfo{}, err
	}
	info := describeGroups(ctx, cl, adm, []string{group}, listed)[group]
	if info.err != nil {
		return info, fmt.Errorf("describe group %q: %w", group, info.err)
	}
	return info, nil
}

// activeError says why a group's offsets cannot be changed now.
func activeError(info groupInfo) error {
	return fmt.Errorf("group %q is %s with %d members: %w", info.Group, info.State, len(info.Members), ErrGroupActive)
}

// planSeek computes the new offset of every partition the seek covers.
func planSeek(ctx context.Context, adm *kadm.Client, o groupSeekOptions, to offsetBound) ([]seekEntry, error) {
	committed, err := adm.FetchOffsets(ctx, o.group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return nil, fmt.Errorf("fetch committed offsets of group %q: %w", o.group, err)
	}
	parts := make(kadm.TopicsSet)
	if len(o.topics) > 0 {
		details, err := topicPartitions(ctx, adm, o.topics)
		if err != nil {
			return nil, err
		}
		for _, t := range o.topics {
			for p := range details[t].Partitions {
				parts.Add(t, p)
			}
		}
	} else {
		committed.Each(func(c kadm.OffsetResponse) {
			if c.Err == nil && c.At >= 0 {
				parts.Add(c.Topic, c.Partition)
			}
		})
		if len(parts) == 0 {
			return nil, fmt.Errorf("group %q: %w; name the topics to seek with --topics", o.group, ErrNoCommittedOffsets)
		}
	}
	var timestamps []int64
	if to.kind == boundTime {
		timestamps = []int64{to.millis}
	}
	lists, err := listPartitionOffsets(ctx, adm, parts.Topics(), timestamps)
	if err != nil {
		return nil, err
	}
	var entries []seekEntry
	for _, tp := range parts.Sorted() {
		ps := append([]int32(nil), tp.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			e := seekEntry{Topic: tp.Topic, Partition: p}
			if c, ok := committed.Lookup(tp.Topic, p); ok && c.Err == nil && c.At >= 0 {
				at := c.At
				e.Current = &at
			}
			lo, err := lists.lookup(tp.Topic, p)
			if err != nil {
				e.Error = err.Error()
			} else {
				n := to.resolve(partitionOffsets{start: lo.start, end: lo.lso, times: lo.times})
				e.New = &n
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// commitSeek commits the new offsets as an admin (not a member) and records
// per-partition failures in entries.
func commitSeek(ctx context.Context, adm *kadm.Client, group string, entries []seekEntry) error {
	var offsets kadm.Offsets
	for _, e := range entries {
		if e.Error == "" && e.New != nil {
			offsets.AddOffset(e.Topic, e.Partition, *e.New, -1)
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	resps, err := adm.CommitOffsets(ctx, group, offsets)
	if err != nil {
		return fmt.Errorf("commit offsets for group %q: %w", group, err)
	}
	for i, e := range entries {
		if e.Error != "" || e.New == nil {
			continue
		}
		r, ok := resps.Lookup(e.Topic, e.Partition)
		switch {
		case !ok:
			entries[i].Error = "no response from the broker"
		case r.Err != nil:
			entries[i].Error = "commit: " + r.Err.Error()
		}
	}
	return nil
}

// countCommittable counts the entries with a new offset.
func countCommittable(entries []seekEntry) int {
	n := 0
	for _, e := range entries {
		if e.Error == "" && e.New != nil {
			n++
		}
	}
	return n
}

// finishSeek reports per-partition failures on diag, writes the JSON
// document (text was previewed already), and returns ErrItemsFailed if any
// partition failed.
func finishSeek(g *globals, out, diag io.Writer, res groupSeekJSON) error {
	failed := 0
	for _, e := range res.Partitions {
		if e.Error != "" {
			failed++
			fmt.Fprintf(diag, "klog: group %q: %s[%d]: %s\n", res.Group, e.Topic, e.Partition, e.Error)
		}
	}
	if g.format == formatJSON {
		if res.Partitions == nil {
			res.Partitions = []seekEntry{}
		}
		if err := writeJSON(out, res); err != nil {
			return err
		}
	}
	if res.Committed {
		fmt.Fprintf(diag, "committed %d offsets for group %q\n", len(res.Partitions)-failed, res.Group)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d partitions failed: %w", failed, len(res.Partitions), ErrItemsFailed)
	}
	return nil
}

// writeSeekTable prints the preview: current -> new per partition.
func writeSeekTable(w io.Writer, entries []seekEntry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT\tNEW")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s", e.Topic, e.Partition, optOffset(e.Current), optOffset(e.New))
		if e.Error != "" {
			fmt.Fprintf(tw, "\t%s", e.Error)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// ---- group delete ----

// groupDeleteJSON is the JSON output of group delete.
type groupDeleteJSON struct {
	Version int           `json:"version"`
	Groups  []groupResult `json:"groups"`
}

// groupResult is one group's outcome; Error is present only on failure.
type groupResult struct {
	Group string `json:"group"`
	Error string `json:"error,omitempty"`
}

func newGroupDeleteCmd(g *globals) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete GROUP... [--yes]",
		Short: "Delete groups and their committed offsets (groups must have no members)",
		Long: `Delete groups and their committed offsets. A group with members is not
deleted (NON_EMPTY_GROUP). In a terminal klog asks first; --yes deletes
without asking. Without a terminal nothing is deleted unless --yes is given.`,
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: completeGroups(g, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGroupDelete(cmd.Context(), g, args, yes, isTerminal(cmd.InOrStdin()), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func runGroupDelete(ctx context.Context, g *globals, names []string, yes, interactive bool, in io.Reader, out, diag io.Writer) error {
	if !yes {
		if !interactive {
			return fmt.Errorf("nothing deleted: stdin is not a terminal; pass --yes to delete %s: %w", quoteList(names), ErrNotConfirmed)
		}
		ok, err := confirm(in, diag, fmt.Sprintf("Delete %s and their committed offsets?", quoteList(names)))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("nothing deleted: %w", ErrNotConfirmed)
		}
	}
	return withGroupAdmin(g, func(cl *kgo.Client, adm *kadm.Client) error {
		resps, err := adm.DeleteGroups(ctx, names...)
		if err != nil && resps == nil {
			return fmt.Errorf("delete groups: %w", err)
		}
		results := make([]groupResult, 0, len(names))
		failed := 0
		for _, n := range names {
			res := groupResult{Group: n}
			r, ok := resps[n]
			switch {
			case !ok:
				res.Error = noResponse(err).Error()
			case r.Err != nil:
				res.Error = errString(r.Err, r.ErrMessage)
			}
			if res.Error != "" {
				failed++
				fmt.Fprintf(diag, "klog: group %q: %s\n", n, res.Error)
			}
			results = append(results, res)
		}
		if g.format == formatJSON {
			if err := writeJSON(out, groupDeleteJSON{Version: groupJSONVersion, Groups: results}); err != nil {
				return err
			}
		} else {
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tSTATUS")
			for _, r := range results {
				status := "DELETED"
				if r.Error != "" {
					status = "ERROR: " + r.Error
				}
				fmt.Fprintf(tw, "%s\t%s\n", r.Group, status)
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d groups failed: %w", failed, len(names), ErrItemsFailed)
		}
		return nil
	})
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "group " + strings.Join(q, ", ")
}

// ---- confirmation ----

// confirmLineMax bounds the answer read from the terminal.
const confirmLineMax = 256

// confirm asks question on diag and reads the answer from in; only "y" or
// "yes" confirms. End of input declines.
func confirm(in io.Reader, diag io.Writer, question string) (bool, error) {
	fmt.Fprintf(diag, "%s [y/N] ", question)
	line, err := bufio.NewReader(io.LimitReader(in, confirmLineMax)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	if line == "" {
		fmt.Fprintln(diag)
	}
	return false, nil
}

// isTerminal reports whether r is an interactive terminal: a character
// device other than the null device.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}
