package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// produceN writes count records "0".."count-1" round-robin over the
// topic's partitions and waits for all of them.
func produceN(ctx context.Context, t *testing.T, n *brokertest.Node, topic string, count int) {
	produceValues(ctx, t, n, topic, "", count)
}

// produceValues writes count records prefix+"0".. round-robin.
func produceValues(ctx context.Context, t *testing.T, n *brokertest.Node, topic, prefix string, count int) {
	t.Helper()
	cl := n.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := range count {
		cl.Produce(ctx, &kgo.Record{Value: []byte(prefix + fmt.Sprint(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// ownership checks that each partition is owned by at most one member at a
// time, from the members' assign/revoke callbacks.
type ownership struct {
	mu     sync.Mutex
	t      *testing.T
	owners map[int32]string
}

func (o *ownership) assigned(member string, parts map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ps := range parts {
		for _, p := range ps {
			if cur, ok := o.owners[p]; ok && cur != member {
				o.t.Errorf("partition %d assigned to %s while %s still owns it", p, member, cur)
			}
			o.owners[p] = member
		}
	}
}

func (o *ownership) revoked(member string, parts map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ps := range parts {
		for _, p := range ps {
			if o.owners[p] == member {
				delete(o.owners, p)
			}
		}
	}
}

// groupMember is a kgo group consumer that records what it consumed and
// commits on revoke, so a clean rebalance neither loses nor repeats records.
type groupMember struct {
	name string
	cl   *kgo.Client
}

func startMember(t *testing.T, n *brokertest.Node, own *ownership, name, groupID, topic string, extra ...kgo.Opt) *groupMember {
	m := &groupMember{name: name}
	opts := append([]kgo.Opt{
		kgo.ConsumerGroup(groupID),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { own.assigned(name, p) }),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, p map[string][]int32) {
			if err := cl.CommitMarkedOffsets(ctx); err != nil {
				t.Errorf("%s: commit on revoke: %v", name, err)
			}
			own.revoked(name, p)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { own.revoked(name, p) }),
		kgo.AutoCommitMarks(),
		kgo.BlockRebalanceOnPoll(),
		// Members learn of a rebalance from their heartbeat: a short
		// interval keeps the tests quick.
		kgo.HeartbeatInterval(100 * time.Millisecond),
	}, extra...)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.Addr())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.cl = cl
	return m
}

// poll consumes one batch of fetches, marks them, and returns the values.
func (m *groupMember) poll(ctx context.Context, t *testing.T) []string {
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	fs := m.cl.PollFetches(ctx)
	defer m.cl.AllowRebalance()
	var out []string
	fs.EachError(func(topic string, p int32, err error) {
		if ctx.Err() == nil {
			t.Errorf("%s: fetch %s/%d: %v", m.name, topic, p, err)
		}
	})
	fs.EachRecord(func(r *kgo.Record) {
		out = append(out, string(r.Value))
		m.cl.MarkCommitRecords(r)
	})
	return out
}

func testGroupRebalance(t *testing.T, balancer kgo.GroupBalancer) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	const total = 600
	produceN(ctx, t, n, "events", total)

	own := &ownership{t: t, owners: map[int32]string{}}
	seen := map[string]string{}
	record := func(member string, values []string) {
		for _, v := range values {
			if prev, dup := seen[v]; dup {
				t.Fatalf("record %s consumed by %s and again by %s", v, prev, member)
			}
			seen[v] = member
		}
	}
	a := startMember(t, n, own, "a", "g", "events", kgo.Balancers(balancer))
	defer a.cl.Close()
	for len(seen) < total/3 {
		record("a", a.poll(ctx, t))
	}
	b := startMember(t, n, own, "b", "g", "events", kgo.Balancers(balancer))
	defer b.cl.Close()
	deadline := time.Now().Add(45 * time.Second)
	for len(seen) < total {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of %d records", len(seen), total)
		}
		record("a", a.poll(ctx, t))
		record("b", b.poll(ctx, t))
	}
	// Both members took part once the group settled.
	testkit.WaitFor(t, "group g Stable with both members", func() (bool, string) {
		a.poll(ctx, t)
		b.poll(ctx, t)
		groups, err := adm.DescribeGroups(ctx, "g")
		if err != nil {
			return false, err.Error()
		}
		g := groups["g"]
		return g.State == "Stable" && len(g.Members) == 2, ""
	})
}

func TestGroupEagerRebalance(t *testing.T) {
	testGroupRebalance(t, kgo.RangeBalancer())
}

func TestGroupCooperativeRebalance(t *testing.T) {
	testGroupRebalance(t, kgo.CooperativeStickyBalancer())
}

func TestGroupCommitResumeAcrossRestart(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.DataDir(t.TempDir()))
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "resume"); err != nil {
		t.Fatal(err)
	}
	produceN(ctx, t, n, "resume", 90)
	own := &ownership{t: t, owners: map[int32]string{}}
	m := startMember(t, n, own, "m", "resumers", "resume")
	got := 0
	for got < 90 {
		got += len(m.poll(ctx, t))
	}
	if err := m.cl.CommitMarkedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	m.cl.Close()

	n.Restart()
	adm = kadm.NewClient(n.Client())
	var committed kadm.OffsetResponses
	testkit.WaitFor(t, "the committed offsets of resumers after the restart", func() (bool, string) {
		var err error
		committed, err = adm.FetchOffsets(ctx, "resumers")
		return err == nil, ""
	})
	total := int64(0)
	committed.Each(func(o kadm.OffsetResponse) { total += o.At })
	if total != 90 {
		t.Fatalf("committed offsets after restart sum to %d, want 90: %v", total, committed)
	}
	produceValues(ctx, t, n, "resume", "new-", 9)
	m = startMember(t, n, own, "m2", "resumers", "resume")
	defer m.cl.Close()
	var after []string
	for len(after) < 9 {
		after = append(after, m.poll(ctx, t)...)
	}
	for _, v := range after {
		if !strings.HasPrefix(v, "new-") {
			t.Fatalf("resumed consumer re-read %q, committed before the restart", v)
		}
	}
	if len(after) != 9 {
		t.Fatalf("resumed consumer saw %d records, want the 9 new ones", len(after))
	}
}

func TestGroupStaticMemberRestartKeepsAssignment(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "static"); err != nil {
		t.Fatal(err)
	}
	own := &ownership{t: t, owners: map[int32]string{}}
	static := func(name, instance string) *groupMember {
		return startMember(t, n, own, name, "statics", "static", kgo.InstanceID(instance), kgo.SessionTimeout(20*time.Second))
	}
	a := static("a", "inst-a")
	b := static("b", "inst-b")
	defer b.cl.Close()
	var before kadm.DescribedGroup
	testkit.WaitFor(t, "statics Stable with both members and 4 partitions assigned", func() (bool, string) {
		a.poll(ctx, t)
		b.poll(ctx, t)
		groups, err := adm.DescribeGroups(ctx, "statics")
		if err != nil {
			return false, err.Error()
		}
		before = groups["statics"]
		return before.State == "Stable" && len(before.Members) == 2 && assignedCount(before) == 4, ""
	})
	// A static member's close does not leave the group; the restart comes
	// back under the same instance id within the session timeout.
	a.cl.Close()
	a = static("a2", "inst-a")
	defer a.cl.Close()
	testkit.WaitFor(t, "statics Stable again after inst-a restarted", func() (bool, string) {
		a.poll(ctx, t)
		b.poll(ctx, t)
		groups, err := adm.DescribeGroups(ctx, "statics")
		if err != nil {
			return false, err.Error()
		}
		g := groups["statics"]
		return g.State == "Stable" && len(g.Members) == 2 && assignedCount(g) == 4, ""
	})
	groups, err := adm.DescribeGroups(ctx, "statics")
	if err != nil {
		t.Fatal(err)
	}
	after := groups["statics"]
	if before.Protocol != after.Protocol || assignmentOf(before, "inst-a") != assignmentOf(after, "inst-a") || assignmentOf(before, "inst-b") != assignmentOf(after, "inst-b") {
		t.Fatalf("assignment changed across a static restart:\nbefore %v\nafter  %v", before, after)
	}
}

func assignedCount(g kadm.DescribedGroup) int {
	n := 0
	for _, m := range g.Members {
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				n += len(t.Partitions)
			}
		}
	}
	return n
}

func assignmentOf(g kadm.DescribedGroup, instance string) string {
	for _, m := range g.Members {
		if m.InstanceID != nil && *m.InstanceID == instance {
			if c, ok := m.Assigned.AsConsumer(); ok {
				return fmt.Sprint(c.Topics)
			}
		}
	}
	return ""
}

func TestGroupSessionTimeoutExpiresMember(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("group.min.session.timeout.ms", "500"))
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "expiry"); err != nil {
		t.Fatal(err)
	}
	own := &ownership{t: t, owners: map[int32]string{}}
	// A static member does not leave on close, so only its session timeout
	// can remove it.
	a := startMember(t, n, own, "a", "expirers", "expiry", kgo.InstanceID("gone"), kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(200*time.Millisecond))
	testkit.WaitFor(t, "one member in expirers", func() (bool, string) {
		a.poll(ctx, t)
		groups, err := adm.DescribeGroups(ctx, "expirers")
		return err == nil && len(groups["expirers"].Members) == 1, ""
	})
	a.cl.Close()
	testkit.WaitFor(t, "expirers Empty after the session timeout", func() (bool, string) {
		groups, err := adm.DescribeGroups(ctx, "expirers")
		return err == nil && len(groups["expirers"].Members) == 0 && groups["expirers"].State == "Empty", ""
	})
}
func TestGroupConsumerProtocol(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("group.consumer.heartbeat.interval.ms", "100"))
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "next"); err != nil {
		t.Fatal(err)
	}
	produceN(ctx, t, n, "next", 40)
	own := &ownership{t: t, owners: map[int32]string{}}
	// KIP-848: kgo speaks the consumer protocol with ServerSideBalancer.
	next := []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer())}
	a := startMember(t, n, own, "a", "g848", "next", next...)
	defer a.cl.Close()
	got := 0
	for got < 40 {
		got += len(a.poll(ctx, t))
	}
	b := startMember(t, n, own, "b", "g848", "next", next...)
	testkit.WaitFor(t, "both KIP-848 members in g848 with their assignments", func() (bool, string) {
		a.poll(ctx, t)
		b.poll(ctx, t)
		described, err := adm.DescribeConsumerGroups(ctx, "g848")
		if err != nil {
			return false, err.Error()
		}
		g := described["g848"]
		if len(g.Members) != 2 {
			return false, ""
		}
		for _, m := range g.Members {
			if len(m.Assignment.Topics()) == 0 {
				return false, ""
			}
		}
		return true, ""
	})
	b.cl.Close() // leaves with epoch -1
	testkit.WaitFor(t, "g848 down to one member", func() (bool, string) {
		a.poll(ctx, t)
		described, err := adm.DescribeConsumerGroups(ctx, "g848")
		return err == nil && len(described["g848"].Members) == 1, ""
	})
}

// TestGroupKeepsMemberMetadataAcrossRequests: a member's protocol metadata
// outlives the JoinGroup request that carried it. Later requests on the
// same connection must not overwrite it (request bytes are not reused under
// data a coordinator keeps).
func TestGroupKeepsMemberMetadataAcrossRequests(t *testing.T) {
	n := brokertest.Start(t)
	metaFor := func(instance string) []byte { return []byte("metadata of " + instance + " that must survive") }
	joinReq := func(instance, memberID string) *kmsg.JoinGroupRequest {
		req := kmsg.NewPtrJoinGroupRequest()
		req.MemberID = memberID
		req.SetVersion(7)
		req.Group = "keep"
		req.SessionTimeoutMillis = 30000
		req.RebalanceTimeoutMillis = 30000
		req.ProtocolType = "consumer"
		req.InstanceID = &instance
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: metaFor(instance)}}
		return req
	}
	sendJoin := func(r *rawConn, instance, memberID string, corr int32) {
		req := joinReq(instance, memberID)
		r.send(req.Key(), req.Version, corr, req.IsFlexible(), req.AppendTo(nil))
	}
	recvJoin := func(r *rawConn) *kmsg.JoinGroupResponse {
		t.Helper()
		_, body, err := r.recv()
		if err != nil {
			t.Fatal(err)
		}
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.SetVersion(7)
		if err := resp.ReadFrom(body[1:]); err != nil { // after the flexible header's tags
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("join: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		return resp
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "keep"
	if _, err := fc.RequestWith(context.Background(), n.Client()); err != nil {
		t.Fatal(err)
	}
	// The raw joins below do not retry, so wait until the coordinator has
	// loaded the group's partition (FindCoordinator answers before that,
	// as in Kafka).
	ctx, cl := testkit.Context(t), n.Client()
	testkit.WaitFor(t, "the coordinator of group keep to serve", func() (bool, string) {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{"keep"}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		// The group does not exist yet: GROUP_ID_NOT_FOUND, once served.
		code := resp.Groups[0].ErrorCode
		return code != kerr.NotCoordinator.Code && code != kerr.CoordinatorLoadInProgress.Code, kerr.ErrorForCode(code).Error()
	})

	// a joins alone and leads; its SyncGroup goes over another connection,
	// so that the next request on a's connection reuses the join's bytes.
	a := dialRaw(t, n.Addr())
	sendJoin(a, "a", "", 1)
	joined := recvJoin(a)
	syncConn := dialRaw(t, n.Addr())
	instance := "a"
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.SetVersion(3)
	sg.Group, sg.Generation, sg.MemberID, sg.InstanceID = "keep", joined.Generation, joined.MemberID, &instance
	sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: joined.MemberID, MemberAssignment: []byte("assignment")}}
	syncConn.send(sg.Key(), sg.Version, 1, sg.IsFlexible(), sg.AppendTo(nil))
	if _, _, err := syncConn.recv(); err != nil {
		t.Fatal(err)
	}

	// a's connection carries a request of the same size as its join,
	// full of other bytes: the join frame is 15 header bytes (flexible)
	// plus its body, a Metadata v7 frame 14 plus 7 plus the topic name.
	junk := kmsg.NewPtrMetadataRequest()
	junk.SetVersion(7)
	name := strings.Repeat("z", len(joinReq("a", "").AppendTo(nil))-6)
	junk.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
	a.send(junk.Key(), junk.Version, 3, false, junk.AppendTo(nil))
	if _, _, err := a.recv(); err != nil {
		t.Fatal(err)
	}

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"keep"}
	described, err := dg.RequestWith(context.Background(), n.Client())
	if err != nil {
		t.Fatal(err)
	}
	if len(described.Groups) != 1 || len(described.Groups[0].Members) != 1 {
		t.Fatalf("described %+v", described.Groups)
	}
	if got := described.Groups[0].Members[0].ProtocolMetadata; string(got) != string(metaFor("a")) {
		t.Fatalf("member metadata became %q", got)
	}
}

// TestGroupFirstJoinWaitsForMoreMembers: with klog's
// group.initial.rebalance.delay.ms of 0, a new classic group still waits
// 50 ms before its first generation (its doc says so), so that consumers
// started a few milliseconds apart land in it together. Kafka completes a
// new group's first join from its timer, not inside the first JoinGroup.
// Completed at once, the first generation held the first consumer alone
// and the second forced another, which waits for the first to rejoin:
// librdkafka rejoins from the application's poll, so its tests waited out
// max.poll.interval.ms.
//
// The test checks the wait's lower bound, which a timer cannot undercut on
// any machine, rather than racing two consumers into a 50 ms window that a
// loaded machine can miss; that joins during the wait share the first
// generation is testdata/classic/initial_delay in package group, on a
// clock the test controls.
func TestGroupFirstJoinWaitsForMoreMembers(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	const group = "together"
	cl := n.Client()
	// The client has found the coordinator, and it serves the group.
	testkit.WaitFor(t, "the coordinator of group "+group+" to serve", func() (bool, string) {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{group}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		code := resp.Groups[0].ErrorCode
		return code != kerr.NotCoordinator.Code && code != kerr.CoordinatorLoadInProgress.Code, kerr.ErrorForCode(code).Error()
	})
	md := kmsg.ConsumerMemberMetadata{Topics: []string{"t"}}
	member := ""
	var waited time.Duration
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, member, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 6000, 2000
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: md.AppendTo(nil)}}
		sent := time.Now()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			member = resp.MemberID
			continue
		}
		waited = time.Since(sent)
		if resp.ErrorCode != 0 || resp.Generation != 1 || len(resp.Members) != 1 {
			t.Fatalf("join: %v, generation %d, %d members; want generation 1 with the one member", kerr.ErrorForCode(resp.ErrorCode), resp.Generation, len(resp.Members))
		}
		break
	}
	const floor = 50 * time.Millisecond
	if waited < floor {
		t.Errorf("the first join of a new group answered after %v, want at least %v", waited, floor)
	}
}
