package group

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// consumerHarness drives consumer-protocol group "g": member ids are the
// names (clients generate their own ids), and each member sends the
// partitions it owns, as clients do, so a revocation is acknowledged by
// the member's next heartbeat.
type consumerHarness struct {
	c      *Coordinator
	clock  *testkit.Clock
	topics map[string]TopicInfo
	epochs map[string]int32
	owned  map[string]assignment
	ids    map[string]string
}

func TestConsumerDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata/consumer", func(t *testing.T, path string) {
		var h *consumerHarness
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				h = &consumerHarness{topics: map[string]TopicInfo{}, epochs: map[string]int32{}, owned: map[string]assignment{}, ids: map[string]string{}}
				h.setTopics(arg(d, "topics", ""))
				h.c, _, h.clock = newTestCoordinator(t, func(cfg *Config) {
					cfg.Topics = func() map[string]TopicInfo { return h.topicsCopy() }
					if a := arg(d, "assignors", ""); a != "" {
						cfg.ConsumerAssignors = strings.Split(a, ",")
					}
					cfg.ConsumerSessionTimeout = 45 * time.Second
					if n := argInt(t, d, "max-size", 0); n > 0 {
						cfg.ConsumerMaxSize = n
					}
				})
				return ""
			}
			var out strings.Builder
			h.cmd(t, d, &out)
			return out.String()
		})
	})
}

// topicsCopy is called from actors; the harness only changes topics
// between requests.
func (h *consumerHarness) topicsCopy() map[string]TopicInfo {
	out := make(map[string]TopicInfo, len(h.topics))
	for k, v := range h.topics {
		out[k] = v
	}
	return out
}

func (h *consumerHarness) setTopics(spec string) {
	if spec == "" {
		return
	}
	for _, tp := range strings.Split(spec, ",") {
		name, n, _ := strings.Cut(tp, ":")
		parts, _ := strconv.Atoi(n)
		var id [16]byte
		copy(id[:], name)
		h.topics[name] = TopicInfo{Name: name, ID: id, Partitions: int32(parts)}
	}
}

func (h *consumerHarness) topicName(id [16]byte) string {
	for n, t := range h.topics {
		if t.ID == id {
			return n
		}
	}
	return "?"
}

func formatAssignment(a assignment) string {
	if a.count() == 0 {
		return "-"
	}
	var parts []string
	for _, n := range sortedNames(a) {
		var ps []string
		for _, p := range a[n] {
			ps = append(ps, strconv.Itoa(int(p)))
		}
		parts = append(parts, n+":"+strings.Join(ps, "."))
	}
	return strings.Join(parts, ",")
}

func (h *consumerHarness) cmd(t *testing.T, d *datadriven.TestData, out *strings.Builder) {
	ctx := testkit.Context(t)
	name := ""
	if len(d.CmdArgs) > 0 && len(d.CmdArgs[0].Vals) == 0 {
		name = d.CmdArgs[0].Key
	}
	switch d.Cmd {
	case "topics":
		h.setTopics(arg(d, "set", ""))
	case "hb":
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version = 1
		req.Group = "g"
		req.MemberID = name
		if id, ok := h.ids[name]; ok {
			req.MemberID = id
		}
		epoch, known := h.epochs[name]
		req.MemberEpoch = epoch
		if e := arg(d, "epoch", ""); e != "" {
			n, _ := strconv.Atoi(e)
			req.MemberEpoch = int32(n)
		} else if !known {
			req.MemberEpoch = 0
		}
		if hasArg(d, "leave") {
			req.MemberEpoch = -1
		}
		if hasArg(d, "static-leave") {
			req.MemberEpoch = -2
		}
		if i := arg(d, "instance", ""); i != "" {
			req.InstanceID = strPtr(i)
		}
		if s := arg(d, "subscribe", ""); s != "" {
			req.SubscribedTopicNames = strings.Split(s, ",")
		}
		if r := arg(d, "regex", ""); r != "" {
			req.SubscribedTopicRegex = strPtr(r)
		}
		if hasArg(d, "empty-regex") {
			req.SubscribedTopicRegex = strPtr("")
		}
		if a := arg(d, "assignor", ""); a != "" {
			req.ServerAssignor = strPtr(a)
		}
		if req.MemberEpoch == 0 || hasArg(d, "rebalance") {
			req.RebalanceTimeoutMillis = argMillis(t, d, "rebalance", 30*time.Second)
		}
		if req.MemberEpoch == 0 && !hasArg(d, "no-owned") {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{} // a join sends an empty list
		}
		if req.MemberEpoch != 0 && !hasArg(d, "no-owned") {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			for _, n := range sortedNames(h.owned[name]) {
				req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: h.topics[n].ID, Partitions: h.owned[name][n]})
			}
		}
		if v := arg(d, "v", ""); v != "" {
			n, _ := strconv.Atoi(v)
			req.Version = int16(n)
		}
		if id, ok := d.Arg("id"); ok {
			req.MemberID = strings.Join(id.Vals, ",")
		}
		if g := arg(d, "group", ""); g != "" {
			req.Group = g
		}
		resp := h.c.ConsumerGroupHeartbeat(WithClient(ctx, "client-"+name, "host"), req)
		if resp.ErrorCode != 0 {
			fmt.Fprintf(out, "%s: %s", name, errName(resp.ErrorCode))
			if resp.ErrorMessage != nil {
				fmt.Fprintf(out, " %q", *resp.ErrorMessage)
			}
			out.WriteString("\n")
			return
		}
		if req.MemberEpoch < 0 {
			delete(h.epochs, name)
			delete(h.owned, name)
			fmt.Fprintf(out, "%s: left epoch=%d\n", name, resp.MemberEpoch)
			return
		}
		h.ids[name] = *resp.MemberID
		h.epochs[name] = resp.MemberEpoch
		fmt.Fprintf(out, "%s: epoch=%d", name, resp.MemberEpoch)
		if resp.Assignment != nil {
			a := make(assignment)
			for _, at := range resp.Assignment.Topics {
				for _, p := range at.Partitions {
					a.add(h.topicName(at.TopicID), p)
				}
			}
			h.owned[name] = a
			fmt.Fprintf(out, " assigned=%s", formatAssignment(a))
		}
		out.WriteString("\n")
	case "forget":
		// The client lost its state (e.g. restarted without a static id).
		delete(h.epochs, name)
		delete(h.owned, name)
	case "advance":
		h.clock.Advance(mustDuration(t, d.CmdArgs[0].Key))
		h.c.Tick(ctx)
	case "describe":
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"g"}
		resp := h.c.ConsumerGroupDescribe(ctx, req)
		for _, g := range resp.Groups {
			if g.ErrorCode != 0 {
				fmt.Fprintf(out, "%s %s %q\n", g.Group, errName(g.ErrorCode), *g.ErrorMessage)
				continue
			}
			fmt.Fprintf(out, "%s %s epoch=%d assignment-epoch=%d assignor=%s\n", g.Group, g.State, g.Epoch, g.AssignmentEpoch, g.AssignorName)
			for _, m := range g.Members {
				name := m.MemberID
				for n, id := range h.ids {
					if id == m.MemberID {
						name = n
					}
				}
				fmt.Fprintf(out, "  %s epoch=%d assigned=%s target=%s\n", name, m.MemberEpoch, describeToString(m.Assignment), describeToString(m.TargetAssignment))
			}
		}
	case "commit":
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version = 9
		req.Group = "g"
		req.MemberID = h.ids[name]
		req.Generation = int32(argInt(t, d, "epoch", int(h.epochs[name])))
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
		resp := h.c.OffsetCommit(ctx, req)
		fmt.Fprintf(out, "%s: commit %s\n", name, errName(resp.Topics[0].Partitions[0].ErrorCode))
	case "offset-delete": // [topic/partition ...], t/0 by default
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = "g"
		for _, a := range d.CmdArgs {
			topic, p, _ := strings.Cut(a.Key, "/")
			part, _ := strconv.Atoi(p)
			req.Topics = append(req.Topics, kmsg.OffsetDeleteRequestTopic{Topic: topic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: int32(part)}}})
		}
		if len(req.Topics) == 0 {
			req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
		}
		resp := h.c.OffsetDelete(ctx, req)
		fmt.Fprintf(out, "offset-delete %s", errName(resp.ErrorCode))
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				fmt.Fprintf(out, " %s/%d %s", rt.Topic, rp.Partition, errName(rp.ErrorCode))
			}
		}
		out.WriteString("\n")
	case "join-classic":
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = 5
		req.Group, req.ProtocolType, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = "g", "consumer", 10000, 10000
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte("m")}}
		resp := h.c.JoinGroup(ctx, req)
		fmt.Fprintf(out, "classic join: %s\n", errName(resp.ErrorCode))
	case "list":
		req := kmsg.NewPtrListGroupsRequest()
		req.Version = 5
		for _, g := range h.c.ListGroups(ctx, req).Groups {
			fmt.Fprintf(out, "%s type=%s state=%s protocol-type=%s\n", g.Group, g.GroupType, g.GroupState, g.ProtocolType)
		}
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
}

func describeToString(a kmsg.Assignment) string {
	x := make(assignment)
	for _, tp := range a.TopicPartitions {
		for _, p := range tp.Partitions {
			x.add(tp.Topic, p)
		}
	}
	return formatAssignment(x)
}

func TestAssignors(t *testing.T) {
	topics := map[string]TopicInfo{"t": {Name: "t", Partitions: 5}, "u": {Name: "u", Partitions: 2}}
	sub := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	in := assignInput{topics: topics, members: []assignMember{
		{id: "a", subscribed: sub("t", "u")},
		{id: "b", subscribed: sub("t", "u")},
	}}
	r := assignRange(in)
	if got := formatAssignment(r["a"]) + " " + formatAssignment(r["b"]); got != "t:0.1.2,u:0 t:3.4,u:1" {
		t.Fatalf("range = %s", got)
	}

	u := assignUniform(in)
	if u["a"].count()+u["b"].count() != 7 || abs(u["a"].count()-u["b"].count()) > 1 {
		t.Fatalf("uniform unbalanced: a=%s b=%s", formatAssignment(u["a"]), formatAssignment(u["b"]))
	}
	// Sticky: a third member takes partitions without moving the rest.
	in.members[0].current, in.members[1].current = u["a"], u["b"]
	in.members = append(in.members, assignMember{id: "c", subscribed: sub("t", "u")})
	u2 := assignUniform(in)
	counts := []int{u2["a"].count(), u2["b"].count(), u2["c"].count()}
	sort.Ints(counts)
	if fmt.Sprint(counts) != "[2 2 3]" {
		t.Fatalf("uniform with three = %v", counts)
	}
	for _, id := range []string{"a", "b"} {
		if moved := u2[id].minus(u[id]); moved.count() != 0 {
			t.Fatalf("uniform gave %s new partitions %s instead of keeping its own", id, formatAssignment(moved))
		}
	}
	// Heterogeneous subscriptions: u only to b; everything is assigned to
	// a subscriber and the spread stays within one where possible.
	in = assignInput{topics: topics, members: []assignMember{
		{id: "a", subscribed: sub("t")},
		{id: "b", subscribed: sub("t", "u")},
	}}
	u3 := assignUniform(in)
	if len(u3["a"]["u"]) != 0 || u3["a"].count()+u3["b"].count() != 7 || abs(u3["a"].count()-u3["b"].count()) > 1 {
		t.Fatalf("uniform heterogeneous: a=%s b=%s", formatAssignment(u3["a"]), formatAssignment(u3["b"]))
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
