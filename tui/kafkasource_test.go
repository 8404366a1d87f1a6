package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// TestKafkaSource reads a klog node through KafkaSource: topics with
// their offsets (an open transaction holding the LSO back), a group's
// lag, the open transaction, and the cleaner through the admin API; and
// without the admin API, the cleaner says so.
func TestKafkaSource(t *testing.T) {
	n := brokertest.Start(t)
	ctx := testkit.Context(t)
	cl := n.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if resp, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil || resp.Err != nil {
		t.Fatalf("create orders: %v %v", err, resp.Err)
	}
	compact := "compact"
	if resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, "users"); err != nil || resp.Err != nil {
		t.Fatalf("create users: %v %v", err, resp.Err)
	}
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte{byte('a' + i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 2, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "billing", offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	producer := n.Client(kgo.TransactionalID("tui-open"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := producer.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = producer.EndTransaction(ctx, kgo.TryAbort) })

	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) {
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.Addr())}, opts...)...)
	}
	src := NewKafkaSource(cl, newClient, []*nodeapi.Client{nodeapi.NewClient(n.AdminAddr(), 0)}, nil)

	st, err := src.Overview(ctx)
	o := st.Overview
	if err != nil || st.Stale != "" || len(st.Nodes) != 1 || !st.Nodes[0].Reachable || st.Nodes[0].Down() || st.From != o.Brokers[0].NodeID || len(o.Brokers) != 1 || o.Controller != o.Brokers[0].NodeID || !o.Brokers[0].Controller ||
		o.Brokers[0].Address != n.Addr() || o.Partitions < 3 || o.UnderReplicated != 0 || o.Offline != 0 {
		t.Errorf("overview = %+v, %v", st, err)
	}
	topics, err := src.Topics(ctx)
	if err != nil || !slices.ContainsFunc(topics, func(l inspect.TopicListing) bool { return l.Name == "orders" && l.Partitions == 2 }) {
		t.Errorf("topics = %+v, %v", topics, err)
	}
	d, err := src.Topic(ctx, "orders")
	if err != nil || len(d.Partitions) != 2 {
		t.Fatalf("topic orders = %+v, %v", d, err)
	}
	if p := d.Partitions[0]; p.HighWatermark != 5 || p.LastStableOffset != 5 || p.LogStartOffset != 0 || p.Leader != o.Brokers[0].NodeID || p.Error != "" {
		t.Errorf("orders/0 = %+v", p)
	}
	if p := d.Partitions[1]; p.HighWatermark != 1 || p.LastStableOffset != 0 {
		t.Errorf("orders/1 with an open transaction = %+v", p)
	}
	if _, err := src.Topic(ctx, "missing"); !errors.Is(err, inspect.ErrTopicNotFound) {
		t.Errorf("missing topic: %v", err)
	}
	g, err := src.Group(ctx, "billing")
	if err != nil || g.TotalLag != 3 || len(g.Partitions) != 1 || g.Partitions[0].Lag == nil || *g.Partitions[0].Lag != 3 {
		t.Errorf("group billing = %+v, %v", g, err)
	}
	txns, err := src.Transactions(ctx)
	// A PLAINTEXT client is User:ANONYMOUS, named by the coordinator's
	// admin API.
	if err != nil || len(txns) != 1 || txns[0].TransactionalID != "tui-open" || txns[0].State != "Ongoing" || txns[0].StartTime == nil ||
		txns[0].Principal != "User:ANONYMOUS" {
		t.Errorf("transactions = %+v, %v", txns, err)
	}
	// A member's principal, from its coordinator's admin API.
	reader := n.Client(kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("orders"))
	defer reader.Close()
	testkit.WaitFor(t, "the member of readers with its principal", func() (bool, string) {
		g, err := src.Group(ctx, "readers")
		return err == nil && len(g.Members) == 1 && g.Members[0].Principal == "User:ANONYMOUS", fmt.Sprintf("%+v %v", g.Members, err)
	})
	// The security screens: no users, no quotas, and no authorizer, as
	// the ACL screen tells from the error.
	if users, err := src.Users(ctx); err != nil || len(users) != 0 {
		t.Errorf("users = %+v, %v", users, err)
	}
	if quotas, err := src.Quotas(ctx); err != nil || len(quotas) != 0 {
		t.Errorf("quotas = %+v, %v", quotas, err)
	}
	acls, err := src.ACLs(ctx)
	if why := newACLsScreen().refused(err); err == nil || why == "" {
		t.Errorf("ACLs without an authorizer = %+v, %v", acls, err)
	}
	cleaners, err := src.Cleaner(ctx)
	if err != nil || len(cleaners) != 1 || cleaners[0].Error != "" ||
		!slices.ContainsFunc(cleaners[0].Cleaner.Partitions, func(p nodeapi.CleanerPartition) bool { return p.Topic == "users" }) {
		t.Errorf("cleaner = %+v, %v", cleaners, err)
	}

	// The screens over the real source.
	dr := newDriver(t, src, Options{Screen: "groups"})
	dr.press("/")
	dr.typeText("billing")
	dr.press("enter", "enter")
	if s := dr.screen(); !strings.Contains(s, "groups › billing") || !strings.Contains(s, "total lag 3") {
		t.Errorf("group screen:\n%s", s)
	}

	// Without the admin API the cleaner says why.
	noAdmin := NewKafkaSource(cl, newClient, nil, errors.New("no admin API at 127.0.0.1:9644"))
	if _, err := noAdmin.Cleaner(ctx); !errors.Is(err, ErrNoAdminAPI) || !strings.Contains(err.Error(), "127.0.0.1:9644") {
		t.Errorf("cleaner without admin API: %v", err)
	}
	down := NewKafkaSource(cl, newClient, []*nodeapi.Client{nodeapi.NewClient("127.0.0.1:1", 0)}, nil)
	if got, err := down.Cleaner(ctx); !errors.Is(err, ErrNoAdminAPI) || len(got) != 1 || got[0].Error == "" {
		t.Errorf("cleaner of a node not answering: %+v, %v", got, err)
	}

	recs, err := src.Tail(ctx, "orders", 3)
	if err != nil || len(recs) != 4 {
		t.Fatalf("tail orders = %+v, %v; want 3 of partition 0 and the open transaction's record", recs, err)
	}
	var p0 []int64
	for _, r := range recs {
		switch r.Partition {
		case 0:
			p0 = append(p0, r.Offset)
		case 1:
			if string(r.Value) != "open" || !r.Transactional || r.Offset != 0 || r.ProducerID < 0 {
				t.Errorf("tail of orders/1: %+v", r)
			}
		}
	}
	if !slices.Equal(p0, []int64{4, 3, 2}) {
		t.Errorf("tail of orders/0: offsets %v, want the last 3", p0)
	}
	if _, err := src.Tail(ctx, "missing", 3); !errors.Is(err, inspect.ErrTopicNotFound) {
		t.Errorf("tail of a missing topic: %v", err)
	}

	if ms, err := src.TxnMarkers(ctx, txns[0].TransactionalID); err != nil || len(ms) != 0 {
		t.Errorf("markers of the open transaction, before its first end: %+v, %v", ms, err)
	}
	tps, err := src.TxnPartitions(ctx, txns[0].ProducerID, txns[0].Partitions)
	if err != nil || len(tps) != 1 || tps[0].Topic != "orders" || tps[0].Partition != 1 || tps[0].StartOffset != 0 ||
		tps[0].LastStableOffset != 0 || tps[0].HighWatermark != 1 {
		t.Errorf("the open transaction's partitions = %+v, %v", tps, err)
	}
	cfgs, err := src.Configs(ctx, "users", -1)
	if err != nil || !slices.ContainsFunc(cfgs, func(c inspect.ConfigDescription) bool {
		return c.Key == "cleanup.policy" && c.Value != nil && *c.Value == "compact" && c.Source == "DYNAMIC_TOPIC_CONFIG"
	}) || !slices.ContainsFunc(cfgs, func(c inspect.ConfigDescription) bool {
		return c.Key == "segment.bytes" && c.Source == "DEFAULT_CONFIG"
	}) {
		t.Errorf("configs of users = %+v, %v", cfgs, err)
	}
	if cfgs, err := src.Configs(ctx, "", o.Brokers[0].NodeID); err != nil || !slices.ContainsFunc(cfgs, func(c inspect.ConfigDescription) bool { return c.Key == "num.partitions" }) {
		t.Errorf("configs of the broker = %d configs, %v", len(cfgs), err)
	}

	// Its coordinator runs the open transaction: not hanging, however
	// young. Aborting it anyway (the abort key's call) releases the LSO.
	if h, err := src.Hanging(ctx, 0); err != nil || len(h) != 0 {
		t.Fatalf("hanging = %+v, %v; want none", h, err)
	}
	parts, err := inspect.DescribeProducers(ctx, adm, kadm.TopicsSet{"orders": {1: {}}})
	if err != nil || len(parts) != 1 || len(parts[0].Producers) != 1 {
		t.Fatalf("producers of orders/1: %+v %v", parts, err)
	}
	p := parts[0].Producers[0]
	err = src.AbortTransaction(ctx, inspect.HangingTransaction{Topic: "orders", Partition: 1, ProducerID: p.ProducerID,
		ProducerEpoch: p.ProducerEpoch, CoordinatorEpoch: p.CoordinatorEpoch, StartOffset: p.CurrentTxnStartOffset})
	if err != nil {
		t.Fatal(err)
	}
	// The node hands the abort to the transaction's coordinator, which
	// writes the marker after answering: wait for it.
	testkit.WaitFor(t, "orders/1's LSO at its high watermark after the abort", func() (bool, string) {
		d, err := src.Topic(ctx, "orders")
		if err != nil {
			return false, err.Error()
		}
		return d.Partitions[1].LastStableOffset == d.Partitions[1].HighWatermark, fmt.Sprintf("%+v", d.Partitions[1])
	})
	// The coordinator aborted it: its admin API lists the ABORT marker.
	testkit.WaitFor(t, "the abort marker", func() (bool, string) {
		ms, err := src.TxnMarkers(ctx, txns[0].TransactionalID)
		return err == nil && len(ms) == 1 && ms[0].Topic == "orders" && ms[0].Partition == 1 && ms[0].Type == nodeapi.MarkerAbort &&
			ms[0].State == nodeapi.MarkerWritten, fmt.Sprint(ms, err)
	})
	if _, err := NewKafkaSource(cl, newClient, nil, errors.New("no admin API at 127.0.0.1:9644")).TxnMarkers(ctx, txns[0].TransactionalID); !errors.Is(err, ErrNoAdminAPI) {
		t.Errorf("markers without an admin API: %v", err)
	}
}

// TestKafkaSourceSegments: the segments of a partition come from its
// leader's admin API, as its log holds them (rolled by segment.bytes), and
// an index page from the same node; without an admin API the screen's
// error says so.
func TestKafkaSourceSegments(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	ctx := testkit.Context(t)
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	seg := "1024"
	if resp, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"internal.segment.bytes": &seg}, "logs"); err != nil || resp.Err != nil {
		t.Fatalf("create logs: %v %v", err, resp.Err)
	}
	for i := range 40 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "logs", Value: []byte(strings.Repeat("x", 100) + string(rune('a'+i%26)))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var admins []*nodeapi.Client
	for _, n := range c.Nodes() {
		admins = append(admins, nodeapi.NewClient(n.AdminAddr(), 0))
	}
	src := NewKafkaSource(cl, nil, admins, nil)
	q, err := src.Nodes(ctx)
	raftLeaders := 0
	for _, n := range q {
		if n.Raft.Role == "leader" {
			raftLeaders++
		}
	}
	if err != nil || len(q) != 3 || raftLeaders != 1 {
		t.Errorf("quorum = %+v, %v; want 3 nodes, one Raft leader", q, err)
	}
	d, err := src.Segments(ctx, "logs", 0)
	if err != nil {
		t.Fatal(err)
	}
	md, err := adm.Metadata(ctx, "logs")
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics["logs"].Partitions[0].Leader
	segs := d.Segments.Segments
	if d.Node != leader || d.Partition.Role != "leader" || len(segs) < 3 || !segs[len(segs)-1].Active || segs[0].BaseOffset != 0 ||
		segs[len(segs)-1].NextOffset != 40 || d.Segments.Total != len(segs) {
		t.Fatalf("segments of logs/0 (leader %d): %+v", leader, d)
	}
	ix, err := src.Index(ctx, "logs", 0, segs[0].BaseOffset, nodeapi.IndexOffset)
	if err != nil || ix.NodeID != leader || ix.Total != segs[0].IndexEntries {
		t.Fatalf("index of the first segment: %+v %v (segment %+v)", ix, err, segs[0])
	}
	if tx, err := src.Index(ctx, "logs", 0, segs[0].BaseOffset, nodeapi.IndexTime); err != nil || tx.Kind != nodeapi.IndexTime || tx.Total != segs[0].TimeIndexEntries {
		t.Errorf("time index of the first segment: %+v %v", tx, err)
	}
	if b, err := src.Batch(ctx, "logs", 0, 5); err != nil || b.NodeID != leader || b.BaseOffset > 5 || b.LastOffset < 5 || !b.CRCValid || len(b.Records) != int(b.Count) {
		t.Fatalf("batch holding offset 5: %+v %v", b, err)
	}
	pd, err := src.Partition(ctx, "logs", 0)
	if err != nil || pd.Leader == nil || pd.Kafka.Leader != leader || pd.Leader.LogEndOffset != 40 || len(pd.Leader.Followers) != 2 || pd.AdminErr != "" {
		t.Fatalf("partition logs/0: %+v %v", pd, err)
	}
	if !slices.ContainsFunc(pd.Timeline, func(e nodeapi.Event) bool { return e.Kind == nodeapi.EventLeaderChange && e.NodeID == leader }) {
		t.Errorf("timeline of logs/0 has no leader change of node %d: %+v", leader, pd.Timeline)
	}
	for _, f := range pd.Leader.Followers {
		if f.ID == leader || f.Lag < 0 || f.LogEndOffset > 40 {
			t.Errorf("follower %+v", f)
		}
	}
	if pd, err := NewKafkaSource(cl, nil, nil, nil).Partition(ctx, "logs", 0); err != nil || pd.Leader != nil || !strings.Contains(pd.AdminErr, "admin API not available") || pd.Kafka.HighWatermark != 40 {
		t.Errorf("partition without admin API: %+v %v", pd, err)
	}
	if _, err := src.Partition(ctx, "logs", 3); err == nil || !strings.Contains(err.Error(), "topic logs has no partition 3") {
		t.Errorf("partition 3: %v", err)
	}
	evs, err := src.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]bool{}
	for i, e := range evs {
		if i > 0 && e.Time.Before(evs[i-1].Time) {
			t.Fatalf("events not merged by time: %+v before %+v", evs[i-1], e)
		}
		if e.Kind == nodeapi.EventLeaderChange && e.Topic == "logs" {
			leaders[e.NodeID] = true
		}
	}
	if len(leaders) != 3 {
		t.Errorf("leader_change events of logs/0 from nodes %v, want all 3 replicas", leaders)
	}
	if _, err := src.Segments(ctx, "nope", 0); err == nil || !strings.Contains(err.Error(), "no node has a replica of nope/0") {
		t.Errorf("unknown topic: %v", err)
	}
	if _, err := NewKafkaSource(cl, nil, nil, nil).Segments(ctx, "logs", 0); !errors.Is(err, ErrNoAdminAPI) {
		t.Errorf("no admin API: %v", err)
	}
}

// TestKafkaSourceNodeDown: a node killed stays in the overview, down, and
// the counts are not marked stale while the other two keep the quorum;
// once the partition it led fails over, the next read shows its new
// leader, not the one the client's cached metadata had.
func TestKafkaSourceNodeDown(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	ctx := testkit.Context(t)
	cl := c.Client()
	adm := kadm.NewClient(cl)
	if resp, err := adm.CreateTopic(ctx, 2, 3, nil, "orders"); err != nil || resp.Err != nil {
		t.Fatalf("create orders: %v %v", err, resp.Err)
	}
	var admins []*nodeapi.Client
	for _, n := range c.Nodes() {
		admins = append(admins, nodeapi.NewClient(n.AdminAddr(), 0))
	}
	src := NewKafkaSource(cl, nil, admins, nil)
	t.Cleanup(src.Close)
	testkit.WaitFor(t, "3 nodes up", func() (bool, string) {
		st, err := src.Overview(ctx)
		up := 0
		for _, n := range st.Nodes {
			if !n.Down() && n.Listed && n.InQuorum {
				up++
			}
		}
		return err == nil && up == 3 && st.Stale == "", fmt.Sprintf("%+v %v", st, err)
	})
	p, err := src.Partition(ctx, "orders", 1)
	if err != nil || p.Kafka.Leader < 0 {
		t.Fatalf("orders/1: %+v %v", p, err)
	}
	old := p.Kafka.Leader
	killed := time.Now()
	c.Node(old).Kill()
	// The failover as each node left has applied it (a node applies the
	// metadata on its own time, and on a busy machine one may lag the
	// other; its replica's state follows its image); the source's very
	// next read must show it, though its client read the partition's
	// metadata a moment before the kill.
	for _, id := range []int32{(old + 1) % 3, (old + 2) % 3} {
		testkit.WaitFor(t, fmt.Sprintf("orders/1 failed over as node %d applied it", id), func() (bool, string) {
			st, ok := c.Node(id).Broker().PartitionState("orders", 1)
			l := st.Leader
			return ok && l.Leader >= 0 && l.Leader != old && !slices.Contains(l.ISR, old), fmt.Sprintf("leader %d, ISR %v", l.Leader, l.ISR)
		})
	}
	failedOver := time.Since(killed)
	p, err = src.Partition(ctx, "orders", 1)
	if err != nil || p.Kafka.Leader == old || p.Kafka.Leader < 0 || slices.Contains(p.Kafka.ISR, old) {
		t.Errorf("orders/1 right after the failover: %+v %v; want a new leader and node %d out of the ISR", p.Kafka, err, old)
	}
	t.Logf("failover %v after the kill, seen by the next read %v after", failedOver, time.Since(killed))
	testkit.WaitFor(t, fmt.Sprintf("node %d down in the overview", old), func() (bool, string) {
		st, err := src.Overview(ctx)
		i, ok := indexNode(st.Nodes, old)
		return err == nil && ok && st.Nodes[i].Down() && st.Nodes[i].Address == c.Node(old).Addr() && len(st.Nodes) == 3,
			fmt.Sprintf("%+v %v", st, err)
	})
	t.Logf("node %d down in the overview %v after the kill", old, time.Since(killed))
	// The admin API screens read the two nodes left.
	if q, err := src.Nodes(ctx); err != nil || len(q) != 2 || slices.ContainsFunc(q, func(n NodeState) bool { return n.NodeID == old }) {
		t.Errorf("quorum states with node %d killed: %+v %v", old, q, err)
	}
	if p, err := src.Partition(ctx, "orders", 1); err != nil || p.Leader == nil || p.Leader.Leader == old {
		t.Errorf("orders/1 from its leader's admin API: %+v %v", p, err)
	}
	st, err := src.Overview(ctx)
	if err != nil || st.Stale != "" || st.From == old || st.Overview.UnderReplicated == 0 {
		t.Errorf("overview after the failover: %+v %v; want fresh counts with orders' partitions under-replicated", st, err)
	}

	// A second node killed: the last one has no quorum, its metadata
	// stands still, and the counts say so.
	second := (old + 1) % 3
	c.Node(second).Kill()
	killed = time.Now()
	testkit.WaitFor(t, "the counts marked stale with the quorum lost", func() (bool, string) {
		st, err := src.Overview(ctx)
		return err == nil && strings.Contains(st.Stale, "quorum lost") && st.From == (old+2)%3, fmt.Sprintf("%+v %v", st, err)
	})
	t.Logf("quorum lost seen %v after the second kill", time.Since(killed))
}

// TestKafkaSourceIsolated: a node cut off from the others still answers
// the TUI, with metadata that no longer moves; the counts come from the
// majority's newer metadata, and once the controller fences the node it
// is listed down, though it answers.
func TestKafkaSourceIsolated(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	ctx := testkit.Context(t)
	cl := c.Client()
	src := NewKafkaSource(cl, nil, nil, nil)
	t.Cleanup(src.Close)
	lone := c.Node(2)
	lone.Isolate()
	t.Cleanup(lone.Heal)
	// A topic made by the majority: the lone node never hears of it.
	if resp, err := kadm.NewClient(c.Node(0).Client()).CreateTopic(ctx, 4, 2, nil, "while-isolated"); err != nil || resp.Err != nil {
		t.Fatalf("create while-isolated: %v %v", err, resp.Err)
	}
	testkit.WaitFor(t, "node 2 fenced, answering, and the counts from the majority", func() (bool, string) {
		st, err := src.Overview(ctx)
		i, ok := indexNode(st.Nodes, 2)
		return err == nil && ok && st.Nodes[i].Fenced && st.Nodes[i].Reachable && st.Nodes[i].Down() &&
			st.From != 2 && st.From >= 0 && st.Stale == "" && st.Overview.Partitions >= 4, fmt.Sprintf("%+v %v", st, err)
	})
}
