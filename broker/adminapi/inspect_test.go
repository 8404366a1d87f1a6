package adminapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// produceEach produces n records to topic one at a time, so each is a
// batch of its own.
func produceEach(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	ctx := testkit.Context(t)
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("value")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClusterSingleNode(t *testing.T) {
	n, c, _ := startNode(t)
	got, err := c.Cluster(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	r := got.Raft
	if got.NodeID != 0 || got.Controller != 0 || got.ClusterID == "" || r.Role != "leader" || r.Leader != 0 || r.Term < 1 ||
		r.CommitIndex < r.MetadataOffset || r.AppliedIndex < r.MetadataOffset || r.LastLogIndex < r.CommitIndex || r.MetadataOffset == 0 || r.LastContact != nil {
		t.Fatalf("cluster %+v", got)
	}
	if want := []nodeapi.Broker{{ID: 0, Kafka: n.Addr(), Alive: true}}; !slices.Equal(got.Brokers, want) {
		t.Fatalf("brokers %+v, want %+v", got.Brokers, want)
	}
	if want := []nodeapi.QuorumMember{{ID: 0}}; !slices.Equal(got.Voters, want) || got.Observers == nil || len(got.Observers) != 0 {
		t.Fatalf("voters %+v observers %+v, want %+v and none", got.Voters, got.Observers, want)
	}
}

func TestPartitionsSingleNode(t *testing.T) {
	_, c, _ := startNode(t)
	ctx := testkit.Context(t)
	all, err := c.Partitions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var topics []string
	for _, p := range all.Partitions {
		topics = append(topics, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
	}
	if !slices.Contains(topics, "c/0") || !slices.Contains(topics, "d/0") || !slices.IsSorted(topics) {
		t.Fatalf("partitions %v", topics)
	}
	only, err := c.Partitions(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	want := nodeapi.Partition{
		Topic: "c", Partition: 0, Role: "leader", Leader: 0, LeaderEpoch: only.Partitions[0].LeaderEpoch,
		Replicas: []int32{0}, ISR: []int32{0},
		LogStartOffset: 0, LastStableOffset: 81, HighWatermark: 81, LogEndOffset: 81,
	}
	if len(only.Partitions) != 1 || !samePartition(only.Partitions[0], want) || want.LeaderEpoch < 0 || only.Partitions[0].Followers != nil {
		t.Fatalf("partitions of c %+v, want %+v", only, want)
	}
	one, err := c.Partition(ctx, "c", 0)
	if err != nil || !samePartition(one, want) {
		t.Fatalf("partition c/0 %+v %v, want %+v", one, err, want)
	}
	if _, err := c.Partition(ctx, "c", 7); !nodeapi.IsNotFound(err) || !strings.HasSuffix(err.Error(), "no local replica of c/7") {
		t.Fatalf("partition c/7: %v", err)
	}
}

func samePartition(a, b nodeapi.Partition) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.Role == b.Role && a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch &&
		slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.ISR, b.ISR) &&
		a.LogStartOffset == b.LogStartOffset && a.LastStableOffset == b.LastStableOffset && a.HighWatermark == b.HighWatermark && a.LogEndOffset == b.LogEndOffset
}

// startIndexed is startNode with a topic "i" of small segments indexing
// every batch, holding 60 records produced one at a time.
func startIndexed(t *testing.T) (*nodeapi.Client, string) {
	t.Helper()
	n, c, url := startNode(t)
	cl := n.Client()
	seg, interval := "1024", "1"
	if _, err := kadm.NewClient(cl).CreateTopic(testkit.Context(t), 1, 1, map[string]*string{"internal.segment.bytes": &seg, "index.interval.bytes": &interval}, "i"); err != nil {
		t.Fatal(err)
	}
	produceEach(t, cl, "i", 60)
	return c, url
}

func TestSegmentsAndIndexes(t *testing.T) {
	c, _ := startIndexed(t)
	ctx := testkit.Context(t)
	before := time.Now().Add(-time.Minute)
	got, err := c.Segments(ctx, "i", 0)
	if err != nil {
		t.Fatal(err)
	}
	segs := got.Segments
	if got.NodeID != 0 || got.Topic != "i" || got.Partition != 0 || got.Total != len(segs) || len(segs) < 3 {
		t.Fatalf("segments %+v", got)
	}
	next := int64(0)
	for i, s := range segs {
		last := i == len(segs)-1
		if s.BaseOffset != next || s.NextOffset <= s.BaseOffset || s.LastOffset != s.NextOffset-1 || s.Size <= 0 || s.Size > 1024 ||
			s.Active != last || s.FirstTimestamp < before.UnixMilli() || s.MaxTimestamp < s.FirstTimestamp ||
			s.IndexEntries == 0 || s.TimeIndexEntries == 0 && !last || s.AbortedTxns != 0 || s.Created.Before(before) || s.Created.Location() != time.UTC {
			t.Errorf("segment %d: %+v (expected base %d)", i, s, next)
		}
		next = s.NextOffset
	}
	if next != 60 {
		t.Fatalf("segments end at %d, want 60", next)
	}
	seg := segs[1]
	offsets, err := c.Index(ctx, "i", 0, seg.BaseOffset, nodeapi.IndexOffset, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if offsets.Kind != "offset" || offsets.BaseOffset != seg.BaseOffset || offsets.Total != seg.IndexEntries || len(offsets.Offsets) != seg.IndexEntries ||
		offsets.Next != nil || offsets.Times != nil {
		t.Fatalf("offset index %+v of segment %+v", offsets, seg)
	}
	// Each record is a batch of its own: an entry maps a batch's offset
	// to its position, both increasing within the segment.
	for i, e := range offsets.Offsets {
		if e.Offset < seg.BaseOffset || e.Offset > seg.LastOffset || e.Position < 0 || e.Position >= seg.Size ||
			i > 0 && (e.Offset <= offsets.Offsets[i-1].Offset || e.Position <= offsets.Offsets[i-1].Position) {
			t.Errorf("offset entry %d: %+v of segment %+v", i, e, seg)
		}
	}
	times, err := c.Index(ctx, "i", 0, seg.BaseOffset, nodeapi.IndexTime, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if times.Kind != "time" || times.Total != seg.TimeIndexEntries || len(times.Times) != seg.TimeIndexEntries || times.Offsets != nil {
		t.Fatalf("time index %+v of segment %+v", times, seg)
	}
	for i, e := range times.Times {
		if e.Offset < seg.BaseOffset || e.Offset > seg.LastOffset || e.Timestamp < seg.FirstTimestamp || e.Timestamp > seg.MaxTimestamp ||
			i > 0 && (e.Offset <= times.Times[i-1].Offset || e.Timestamp < times.Times[i-1].Timestamp) {
			t.Errorf("time entry %d: %+v of segment %+v", i, e, seg)
		}
	}
	page, err := c.Index(ctx, "i", 0, seg.BaseOffset, nodeapi.IndexOffset, 1, 2)
	if err != nil || page.From != 1 || !slices.Equal(page.Offsets, offsets.Offsets[1:3]) || page.Next == nil || *page.Next != 3 {
		t.Fatalf("page from 1 of 2: %+v %v", page, err)
	}
}

func TestInspectErrors(t *testing.T) {
	c, url := startIndexed(t)
	ctx := testkit.Context(t)
	if _, err := c.Segments(ctx, "nope", 0); !nodeapi.IsNotFound(err) {
		t.Errorf("segments of nope/0: %v", err)
	}
	for _, tc := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/v1/partitions/i/x", http.StatusBadRequest, `partition "x": want a partition number`},
		{"/v1/partitions/i/-1/segments", http.StatusBadRequest, `partition "-1": want a partition number`},
		{"/v1/partitions/i/3/segments", http.StatusNotFound, "no local replica of i/3"},
		{"/v1/partitions/i/0/segments/x/index", http.StatusBadRequest, `segment "x": want a base offset`},
		{"/v1/partitions/i/0/segments/0/index?kind=txn", http.StatusBadRequest, `kind "txn": want offset or time`},
		{"/v1/partitions/i/0/segments/0/index?limit=0", http.StatusBadRequest, `limit "0": want a number from 1 to 1000`},
		{"/v1/partitions/i/0/segments/0/index?limit=1001", http.StatusBadRequest, `limit "1001": want a number from 1 to 1000`},
		{"/v1/partitions/i/0/segments/0/index?from=-1", http.StatusBadRequest, `from "-1": want a number from 0 to 2147483647`},
		{"/v1/partitions/i/0/segments/1/index", http.StatusNotFound, "i/0: no segment at base offset 1"},
		{"/v1/partitions/i/2/segments/0/index", http.StatusNotFound, "no local replica of i/2"},
	} {
		checkError(t, http.MethodGet, url+tc.path, tc.status, tc.msg)
	}
	// The limit bounds a page.
	segs, _ := c.Segments(ctx, "i", 0)
	if p, err := c.Index(ctx, "i", 0, 0, nodeapi.IndexOffset, 0, 1); err != nil || len(p.Offsets) != 1 || p.Total != segs.Segments[0].IndexEntries || p.Next == nil || *p.Next != 1 {
		t.Errorf("page of 1: %+v %v", p, err)
	}
}

// TestClusterOfThree: every node's cluster view agrees on the quorum, and
// the leader of a partition shows each follower's replica state, which a
// killed follower's lag and its fencing change.
func TestClusterOfThree(t *testing.T) {
	cl := brokertest.StartCluster(t, 3)
	ctx := testkit.Context(t)
	api := map[int32]*nodeapi.Client{}
	for _, n := range cl.Nodes() {
		api[n.Broker().ID()] = nodeapi.NewClient(n.AdminAddr(), 0)
	}
	views := map[int32]nodeapi.Cluster{}
	testkit.WaitFor(t, "the nodes to agree on the quorum", func() (bool, string) {
		leaders := 0
		for id, c := range api {
			v, err := c.Cluster(ctx)
			if err != nil {
				return false, err.Error()
			}
			views[id] = v
			if v.Raft.Role == "leader" {
				leaders++
			}
			if v.NodeID != id || len(v.Brokers) != 3 || len(v.Voters) != 3 || v.Controller != v.Raft.Leader || v.Controller != views[0].Controller ||
				v.Raft.Term != views[0].Raft.Term || v.ClusterID != views[0].ClusterID || v.Raft.Role != "leader" && v.Raft.Role != "follower" {
				return false, fmt.Sprintf("%+v", v)
			}
			for _, b := range v.Brokers {
				if !b.Alive || b.Fenced || b.ShuttingDown || b.Kafka != cl.Node(b.ID).Addr() {
					return false, fmt.Sprintf("broker %+v", b)
				}
			}
			for _, m := range v.Voters {
				if m.Address == "" {
					return false, fmt.Sprintf("voter %+v", m)
				}
			}
		}
		return leaders == 1, fmt.Sprintf("%d leaders", leaders)
	})
	for id, v := range views {
		if (v.Raft.Role == "follower") != (v.Raft.LastContact != nil) || (v.Raft.Role == "leader") != (v.Controller == id) {
			t.Errorf("node %d: raft %+v, controller %d", id, v.Raft, v.Controller)
		}
	}

	kc := cl.Client()
	if _, err := kadm.NewClient(kc).CreateTopic(ctx, 1, 3, nil, "r"); err != nil {
		t.Fatal(err)
	}
	produceEach(t, kc, "r", 20)
	first, err := api[0].Partition(ctx, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	leader := first.Leader
	var lp nodeapi.Partition
	testkit.WaitFor(t, "both followers to catch up", func() (bool, string) {
		lp, err = api[leader].Partition(ctx, "r", 0)
		if err != nil {
			return false, err.Error()
		}
		if lp.Role != "leader" || lp.LogEndOffset != 20 || lp.HighWatermark != 20 || len(lp.Followers) != 2 || len(lp.ISR) != 3 {
			return false, fmt.Sprintf("%+v", lp)
		}
		for _, f := range lp.Followers {
			if f.LogEndOffset != 20 || f.Lag != 0 || !f.CaughtUp || !f.InISR || f.LastCaughtUp == nil || f.LastFetch == nil || f.LastCaughtUp.Location() != time.UTC {
				return false, fmt.Sprintf("follower %+v", f)
			}
		}
		return true, ""
	})
	if !slices.Equal(lp.Replicas, first.Replicas) || lp.Followers[0].ID == leader || lp.Followers[1].ID == leader {
		t.Fatalf("leader's view %+v, node 0's %+v", lp, first)
	}
	for _, f := range lp.Followers {
		testkit.WaitFor(t, fmt.Sprintf("follower %d's own view", f.ID), func() (bool, string) {
			fp, err := api[f.ID].Partition(ctx, "r", 0)
			ok := err == nil && fp.Role == "follower" && fp.Leader == leader && fp.LeaderEpoch == lp.LeaderEpoch && fp.Followers == nil &&
				fp.LogEndOffset == 20 && fp.HighWatermark == 20 && slices.Equal(fp.ISR, lp.ISR)
			return ok, fmt.Sprintf("%+v %v", fp, err)
		})
	}

	// Kill a follower, preferably not the controller, and write past it.
	gone := lp.Followers[0].ID
	if gone == views[0].Controller {
		gone = lp.Followers[1].ID
	}
	cl.Node(gone).Kill()
	delete(api, gone)
	lc := cl.Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	produceEach(t, lc, "r", 5)
	testkit.WaitFor(t, fmt.Sprintf("the leader to see follower %d behind and fenced", gone), func() (bool, string) {
		p, err := api[leader].Partition(ctx, "r", 0)
		if err != nil {
			return false, err.Error()
		}
		v, err := api[leader].Cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		i := slices.IndexFunc(p.Followers, func(f nodeapi.Follower) bool { return f.ID == gone })
		j := slices.IndexFunc(v.Brokers, func(b nodeapi.Broker) bool { return b.ID == gone })
		if p.LogEndOffset != 25 || i < 0 || j < 0 {
			return false, fmt.Sprintf("%+v %+v", p, v)
		}
		f, b := p.Followers[i], v.Brokers[j]
		return f.LogEndOffset == 20 && f.Lag == 5 && b.Fenced && !b.Alive, fmt.Sprintf("follower %+v, broker %+v", f, b)
	})
}

// TestClusterObserver: a broker-only node (the fourth, past the three
// voters) is an observer of the quorum, and listed as one.
func TestClusterObserver(t *testing.T) {
	cl := brokertest.StartCluster(t, 4)
	ctx := testkit.Context(t)
	c := nodeapi.NewClient(cl.Node(3).AdminAddr(), 0)
	testkit.WaitFor(t, "node 3 to observe the quorum", func() (bool, string) {
		v, err := c.Cluster(ctx)
		if err != nil {
			return false, err.Error()
		}
		ok := v.Raft.Role == "observer" && v.Raft.Leader == v.Controller && v.Controller >= 0 && v.Controller < 3 && len(v.Brokers) == 4 &&
			len(v.Voters) == 3 && len(v.Observers) == 1 && v.Observers[0].ID == 3 && v.Observers[0].Address != "" && v.Raft.MetadataOffset > 0
		return ok, fmt.Sprintf("%+v", v)
	})
}
