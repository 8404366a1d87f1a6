package group

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

func TestRecordRoundTrip(t *testing.T) {
	o := offset{Offset: 42, LeaderEpoch: 7, Metadata: "meta", CommitTimestamp: 1700000000000}
	r := offsetRecord("g", "topic", 3, o)
	// Kafka's layout: int16 version 1, int16-length strings, int32 partition.
	wantKey := []byte{0, 1, 0, 1, 'g', 0, 5, 't', 'o', 'p', 'i', 'c', 0, 0, 0, 3}
	if !bytes.Equal(r.Key, wantKey) {
		t.Fatalf("offset key = %v, want %v", r.Key, wantKey)
	}
	if r.Value[0] != 0 || r.Value[1] != 3 {
		t.Fatalf("offset value version = %v, want 3", r.Value[:2])
	}
	d, ok, err := decodeRecord(r)
	if err != nil || !ok || !d.isOffset || d.group != "g" || d.topic != "topic" || d.part != 3 {
		t.Fatalf("decode = %+v %v %v", d, ok, err)
	}
	if got := (offset{d.offset.Offset, d.offset.LeaderEpoch, d.offset.Metadata, d.offset.CommitTimestamp}); got != o {
		t.Fatalf("offset round trip = %+v, want %+v", got, o)
	}

	g := newTestGroup()
	g.protocolType, g.protocol, g.generation, g.leader = "consumer", "range", 4, "m1"
	iid := "i1"
	g.members["m1"] = &member{id: "m1", instanceID: &iid, clientID: "c", clientHost: "h", sessionTimeout: 10 * time.Second, rebalanceTimeout: time.Minute,
		protocols: []protocol{{"range", []byte("sub")}}, assignment: []byte("asg")}
	r = g.metadataRecord()
	if !bytes.Equal(r.Key, []byte{0, 2, 0, 1, 'g'}) {
		t.Fatalf("group key = %v", r.Key)
	}
	d, ok, err = decodeRecord(r)
	if err != nil || !ok || d.isOffset || d.meta == nil {
		t.Fatalf("decode group = %+v %v %v", d, ok, err)
	}
	m := d.meta
	if m.Version != 3 || m.ProtocolType != "consumer" || *m.Protocol != "range" || *m.Leader != "m1" || m.Generation != 4 || len(m.Members) != 1 {
		t.Fatalf("group value = %+v", m)
	}
	mm := m.Members[0]
	if mm.MemberID != "m1" || *mm.InstanceID != "i1" || mm.ClientID != "c" || mm.ClientHost != "h" || mm.SessionTimeoutMillis != 10000 ||
		mm.RebalanceTimeoutMillis != 60000 || string(mm.Subscription) != "sub" || string(mm.Assignment) != "asg" {
		t.Fatalf("member = %+v", mm)
	}

	d, ok, err = decodeRecord(groupTombstone("g"))
	if err != nil || !ok || d.meta != nil || d.group != "g" {
		t.Fatalf("tombstone = %+v %v %v", d, ok, err)
	}
	if _, ok, err := decodeRecord(Record{Key: []byte{0, 9, 1}}); ok || err != nil {
		t.Fatalf("unknown key version: ok=%v err=%v", ok, err)
	}
	if _, _, err := decodeRecord(Record{Key: []byte{0}}); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("short key: %v", err)
	}
	if _, _, err := decodeRecord(Record{Key: offsetKey("g", "t", 0), Value: []byte{0, 3, 1}}); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("short value: %v", err)
	}
}

func newTestGroup() *group {
	c := New(Config{})
	return c.newGroup("g", 0)
}

// seedOffset appends an offset record to partition 0 as another coordinator would.
func seedOffset(s *memStore, group, topic string, part int32, off int64, ts time.Time) {
	s.Write(0, offsetRecord(group, topic, part, offset{Offset: off, LeaderEpoch: 1, CommitTimestamp: ts.UnixMilli()}))
}

func TestLoadPartition(t *testing.T) {
	store := newMemStore()
	clock := newFakeClock()
	now := clock.Now()
	seedOffset(store, "g1", "t", 0, 10, now)
	seedOffset(store, "g1", "t", 1, 11, now)
	seedOffset(store, "g1", "t", 0, 12, now) // latest wins
	store.Write(0, offsetTombstone("g1", "t", 1))
	seedOffset(store, "gone", "t", 0, 1, now)
	store.Write(0, offsetTombstone("gone", "t", 0), groupTombstone("gone"))

	// A stable classic group with two members.
	src := newTestGroup()
	src.id = "g2"
	src.protocolType, src.protocol, src.generation, src.leader = "consumer", "range", 3, "m1"
	for _, id := range []string{"m1", "m2"} {
		src.members[id] = &member{id: id, sessionTimeout: 10 * time.Second, rebalanceTimeout: 20 * time.Second,
			protocols: []protocol{{"range", []byte("sub-" + id)}}, assignment: []byte("asg-" + id)}
	}
	store.Write(0, src.metadataRecord())
	// An empty group that once had members, then a deleted group.
	empty := newTestGroup()
	empty.id, empty.protocolType, empty.generation = "g3", "consumer", 5
	store.Write(0, empty.metadataRecord())
	store.Write(0, Record{Key: []byte{0, 7}, Value: []byte{1}}) // unknown, skipped

	c := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: store, Partitions: 1, Now: clock.Now})
	defer c.Close()
	ctx := testkit.Context(t)

	// Not loaded yet: NOT_COORDINATOR.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g2", "m1", 3
	if got := c.Heartbeat(ctx, hb).ErrorCode; got != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat before load = %d", got)
	}
	if err := c.LoadPartition(ctx, 0); err != nil {
		t.Fatal(err)
	}

	snaps := c.Snapshot()
	if len(snaps) != 3 {
		t.Fatalf("groups after load = %+v", snaps)
	}
	g1, g2, g3 := snaps[0], snaps[1], snaps[2]
	if g1.Group != "g1" || len(g1.Offsets) != 1 || g1.Offsets[0].Offset != 12 || g1.Offsets[0].LeaderEpoch != 1 {
		t.Fatalf("g1 = %+v", g1)
	}
	if g2.State != "Stable" || g2.Generation != 3 || g2.Leader != "m1" || len(g2.Members) != 2 {
		t.Fatalf("g2 = %+v", g2)
	}
	if g3.State != "Empty" || g3.Generation != 5 || g3.ProtocolType != "consumer" {
		t.Fatalf("g3 = %+v", g3)
	}

	// Reloaded members resume: heartbeat works, sync returns the assignment.
	if got := c.Heartbeat(ctx, hb).ErrorCode; got != 0 {
		t.Fatalf("heartbeat after load = %s", errName(got))
	}
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Group, sreq.MemberID, sreq.Generation = "g2", "m2", 3
	if resp := c.SyncGroup(ctx, sreq); resp.ErrorCode != 0 || string(resp.MemberAssignment) != "asg-m2" {
		t.Fatalf("sync after load = %s %q", errName(resp.ErrorCode), resp.MemberAssignment)
	}
	// Their session timers restarted at load: m1 keeps heartbeating, m2 does not.
	clock.Advance(6 * time.Second)
	c.Tick(ctx)
	if got := c.Heartbeat(ctx, hb).ErrorCode; got != 0 {
		t.Fatalf("heartbeat = %s", errName(got))
	}
	clock.Advance(6 * time.Second)
	c.Tick(ctx)
	if got := c.Heartbeat(ctx, hb).ErrorCode; got != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after m2 expired = %s", errName(got))
	}

	// Offsets fetched after load.
	freq := kmsg.NewPtrOffsetFetchRequest()
	freq.Version = 5
	freq.Group = "g1"
	freq.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	fresp := c.OffsetFetch(ctx, freq)
	if len(fresp.Topics) != 1 || fresp.Topics[0].Partitions[0].Offset != 12 || fresp.Topics[0].Partitions[1].Offset != -1 {
		t.Fatalf("fetch = %+v", fresp.Topics)
	}

	// Unload: NOT_COORDINATOR again.
	c.UnloadPartition(0)
	if got := c.Heartbeat(ctx, hb).ErrorCode; got != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat after unload = %s", errName(got))
	}
	if n := len(c.Snapshot()); n != 0 {
		t.Fatalf("groups after unload = %d", n)
	}
}

// blockingStore blocks Replay until released, to observe loading.
type blockingStore struct {
	*memStore
	release chan struct{}
	started chan struct{}
}

func (s *blockingStore) Replay(ctx context.Context, p int32, fn func(Record) error) error {
	close(s.started)
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.memStore.Replay(ctx, p, fn)
}

func TestLoadInProgress(t *testing.T) {
	bs := &blockingStore{memStore: newMemStore(), release: make(chan struct{}), started: make(chan struct{})}
	c := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: bs, Partitions: 1})
	defer c.Close()
	ctx := testkit.Context(t)
	errc := make(chan error, 1)
	go func() { errc <- c.LoadPartition(ctx, 0) }()
	<-bs.started
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}}
	if got := c.OffsetFetch(ctx, req).Groups[0].ErrorCode; got != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("fetch while loading = %s", errName(got))
	}
	close(bs.release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := c.OffsetFetch(ctx, req).Groups[0].ErrorCode; got != 0 {
		t.Fatalf("fetch after load = %s", errName(got))
	}
}

func commitSimple(t *testing.T, c *Coordinator, group, topic string, part int32, off int64) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.Generation = group, -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: part, Offset: off}}}}
	resp := c.OffsetCommit(testkit.Context(t), req)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("commit %s %s/%d: %s", group, topic, part, errName(code))
	}
}

func TestOffsetRetention(t *testing.T) {
	c, store, clock := newTestCoordinator(t, func(cfg *Config) {
		cfg.OffsetsRetention = time.Hour
		cfg.OffsetsRetentionCheckInterval = time.Minute
	})
	ctx := testkit.Context(t)
	commitSimple(t, c, "g", "t", 0, 1)
	clock.Advance(30 * time.Minute)
	commitSimple(t, c, "g", "t", 1, 2)
	clock.Advance(31 * time.Minute) // t/0 is 61 minutes old, t/1 31
	c.Tick(ctx)
	snaps := c.Snapshot()
	if len(snaps) != 1 || len(snaps[0].Offsets) != 1 || snaps[0].Offsets[0].Partition != 1 {
		t.Fatalf("after first expiry: %+v", snaps)
	}
	clock.Advance(30 * time.Minute)
	c.Tick(ctx)
	if snaps := c.Snapshot(); len(snaps) != 0 {
		t.Fatalf("group should be gone: %+v", snaps)
	}
	var got []string
	for _, r := range store.Records(0) {
		got = append(got, describeRecord(t, r, func(s string) string { return s }))
	}
	want := []string{"offset g t/0=1", "offset g t/1=2", "offset g t/0 tombstone", "offset g t/1 tombstone", "group g tombstone"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records = %q, want %q", got, want)
	}
	// Reloading sees nothing.
	c.UnloadPartition(0)
	if err := c.LoadPartition(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if snaps := c.Snapshot(); len(snaps) != 0 {
		t.Fatalf("after reload: %+v", snaps)
	}
}

func TestOffsetDeleteAndDeleteGroups(t *testing.T) {
	c, _, _ := newTestCoordinator(t, nil)
	ctx := testkit.Context(t)
	commitSimple(t, c, "g", "t", 0, 1)
	commitSimple(t, c, "g", "u", 0, 1)

	// A member subscribed to t.
	jresp := joinRange(ctx, t, c, "g", "t")

	dreq := kmsg.NewPtrOffsetDeleteRequest()
	dreq.Group = "g"
	dreq.Topics = []kmsg.OffsetDeleteRequestTopic{
		{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
		{Topic: "u", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
	}
	dresp := c.OffsetDelete(ctx, dreq)
	if dresp.ErrorCode != 0 || dresp.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code || dresp.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete = %+v", dresp)
	}

	greq := kmsg.NewPtrDeleteGroupsRequest()
	greq.Groups = []string{"g", "nope"}
	gresp := c.DeleteGroups(ctx, greq)
	if gresp.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code || gresp.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete groups = %+v", gresp.Groups)
	}
	lreq := kmsg.NewPtrLeaveGroupRequest()
	lreq.Version = 1
	lreq.Group, lreq.MemberID = "g", jresp.MemberID
	if code := c.LeaveGroup(ctx, lreq).ErrorCode; code != 0 {
		t.Fatalf("leave: %s", errName(code))
	}
	greq.Groups = []string{"g"}
	if code := c.DeleteGroups(ctx, greq).Groups[0].ErrorCode; code != 0 {
		t.Fatalf("delete: %s", errName(code))
	}
	if snaps := c.Snapshot(); len(snaps) != 0 {
		t.Fatalf("after delete: %+v", snaps)
	}
	dreq.Topics = dreq.Topics[:1]
	if code := c.OffsetDelete(ctx, dreq).ErrorCode; code != kerr.GroupIDNotFound.Code {
		t.Fatalf("offset delete of deleted group: %s", errName(code))
	}
}

func TestListAndDescribe(t *testing.T) {
	c, _, _ := newTestCoordinator(t, nil)
	ctx := testkit.Context(t)
	commitSimple(t, c, "simple", "t", 0, 1)
	jreq := kmsg.NewPtrJoinGroupRequest()
	jreq.Version = 3
	jreq.Group, jreq.ProtocolType, jreq.SessionTimeoutMillis, jreq.RebalanceTimeoutMillis = "joined", "consumer", 10000, 10000
	jreq.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte("m")}}
	jresp := c.JoinGroup(WithClient(ctx, "cli", "10.0.0.1"), jreq)
	if jresp.ErrorCode != 0 {
		t.Fatalf("join: %s", errName(jresp.ErrorCode))
	}

	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.Version = 5
	lresp := c.ListGroups(ctx, lreq)
	if len(lresp.Groups) != 2 || lresp.Groups[0].Group != "joined" || lresp.Groups[0].GroupState != "CompletingRebalance" ||
		lresp.Groups[1].Group != "simple" || lresp.Groups[1].GroupState != "Empty" || lresp.Groups[1].GroupType != "classic" {
		t.Fatalf("list = %+v", lresp.Groups)
	}
	lreq.StatesFilter = []string{"empty"}
	if lresp := c.ListGroups(ctx, lreq); len(lresp.Groups) != 1 || lresp.Groups[0].Group != "simple" {
		t.Fatalf("list empty = %+v", lresp.Groups)
	}
	lreq.StatesFilter, lreq.TypesFilter = nil, []string{"consumer"}
	if lresp := c.ListGroups(ctx, lreq); len(lresp.Groups) != 0 {
		t.Fatalf("list consumer = %+v", lresp.Groups)
	}

	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Version = 5
	dreq.Groups = []string{"joined", "missing"}
	dresp := c.DescribeGroups(ctx, dreq)
	g := dresp.Groups[0]
	if g.State != "CompletingRebalance" || g.Protocol != "range" || len(g.Members) != 1 || g.Members[0].ClientID != "cli" ||
		g.Members[0].ClientHost != "10.0.0.1" || g.Members[0].MemberID != jresp.MemberID {
		t.Fatalf("describe = %+v", g)
	}
	if dresp.Groups[1].State != "Dead" || dresp.Groups[1].ErrorCode != 0 {
		t.Fatalf("describe missing = %+v", dresp.Groups[1])
	}
}

// TestConcurrentGroups runs many members of many groups through joins,
// syncs, heartbeats and commits at once, with the real clock, for -race.
func TestConcurrentGroups(t *testing.T) {
	store := newMemStore()
	c := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: store, Partitions: 4})
	defer c.Close()
	ctx := testkit.Context(t)
	for p := int32(0); p < 4; p++ {
		if err := c.LoadPartition(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	const groups, members = 4, 3
	var wg sync.WaitGroup
	errs := make(chan error, groups*members)
	for gi := 0; gi < groups; gi++ {
		for mi := 0; mi < members; mi++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- runMember(ctx, c, fmt.Sprintf("group-%d", gi), members)
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// runMember joins group until a generation with all n members is stable,
// then commits an offset.
func runMember(ctx context.Context, c *Coordinator, group string, n int) error {
	memberID := ""
	for ctx.Err() == nil {
		jreq := kmsg.NewPtrJoinGroupRequest()
		jreq.Version = 9
		jreq.Group, jreq.MemberID, jreq.ProtocolType = group, memberID, "consumer"
		jreq.SessionTimeoutMillis, jreq.RebalanceTimeoutMillis = 30000, 30000
		jreq.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte("m")}}
		jresp := c.JoinGroup(ctx, jreq)
		switch jresp.ErrorCode {
		case kerr.MemberIDRequired.Code:
			memberID = jresp.MemberID
			continue
		case 0:
		default:
			return fmt.Errorf("join %s: %s", group, errName(jresp.ErrorCode))
		}
		sreq := kmsg.NewPtrSyncGroupRequest()
		sreq.Group, sreq.MemberID, sreq.Generation = group, memberID, jresp.Generation
		for _, m := range jresp.Members {
			sreq.GroupAssignment = append(sreq.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.MemberID, MemberAssignment: []byte(fmt.Sprint(len(jresp.Members)))})
		}
		sresp := c.SyncGroup(ctx, sreq)
		if sresp.ErrorCode == kerr.RebalanceInProgress.Code {
			continue
		}
		if sresp.ErrorCode != 0 {
			return fmt.Errorf("sync %s: %s", group, errName(sresp.ErrorCode))
		}
		if string(sresp.MemberAssignment) != fmt.Sprint(n) {
			// Not everyone was in this generation: heartbeat until the
			// rebalance shows, then rejoin.
			for ctx.Err() == nil {
				hreq := kmsg.NewPtrHeartbeatRequest()
				hreq.Group, hreq.MemberID, hreq.Generation = group, memberID, jresp.Generation
				code := c.Heartbeat(ctx, hreq).ErrorCode
				if code == kerr.RebalanceInProgress.Code {
					break
				}
				if code != 0 {
					return fmt.Errorf("heartbeat %s: %s", group, errName(code))
				}
				runtime.Gosched()
			}
			continue
		}
		creq := kmsg.NewPtrOffsetCommitRequest()
		creq.Version = 8
		creq.Group, creq.MemberID, creq.Generation = group, memberID, jresp.Generation
		creq.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
		if code := c.OffsetCommit(ctx, creq).Topics[0].Partitions[0].ErrorCode; code != 0 && code != kerr.RebalanceInProgress.Code {
			return fmt.Errorf("commit %s: %s", group, errName(code))
		}
		return nil
	}
	return ctx.Err()
}

// TestUnloadAnswersWaiters checks that a JoinGroup waiting for a rebalance
// gets NOT_COORDINATOR when the partition is unloaded, and that a caller
// that gives up gets an answer of its own.
func TestUnloadAnswersWaiters(t *testing.T) {
	c, _, _ := newTestCoordinator(t, func(cfg *Config) { cfg.InitialRebalanceDelay = time.Hour })
	ctx := testkit.Context(t)
	jreq := kmsg.NewPtrJoinGroupRequest()
	jreq.Version = 3
	jreq.Group, jreq.ProtocolType, jreq.SessionTimeoutMillis, jreq.RebalanceTimeoutMillis = "g", "consumer", 10000, 10000
	jreq.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}

	// The initial delay is an hour on the fake clock: the join waits.
	short, cancel := context.WithCancel(ctx)
	w := c.startJoin(short, jreq)
	if _, ok := w.poll(); ok {
		t.Fatal("join answered before the delay")
	}
	cancel()
	if resp := w.wait(short); resp.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("abandoned join = %s", errName(resp.ErrorCode))
	}

	w = c.startJoin(ctx, jreq)
	done := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { done <- w.wait(ctx) }()
	c.UnloadPartition(0)
	if resp := <-done; resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join after unload = %s", errName(resp.ErrorCode))
	}
	if resp := c.JoinGroup(ctx, jreq); resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join on unloaded partition = %s", errName(resp.ErrorCode))
	}
	c.Close()
	if resp := c.JoinGroup(ctx, jreq); resp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("join after close = %s", errName(resp.ErrorCode))
	}
}

// TestAppendFailureKeepsState checks that nothing changes in memory when
// the write to __consumer_offsets fails, and that ErrNotLeader answers
// NOT_COORDINATOR.
func TestAppendFailureKeepsState(t *testing.T) {
	c, store, _ := newTestCoordinator(t, nil)
	commitSimple(t, c, "g", "t", 0, 1)
	store.mu.Lock()
	store.SetFail(fmt.Errorf("append: %w", ErrNotLeader))
	store.mu.Unlock()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.Generation = "g", -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 9}}}}
	if code := c.OffsetCommit(testkit.Context(t), req).Topics[0].Partitions[0].ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("commit with failing store = %s", errName(code))
	}
	if s := c.Snapshot(); len(s) != 1 || s[0].Offsets[0].Offset != 1 {
		t.Fatalf("offset changed after a failed append: %+v", s)
	}
}

// TestGroupsFollowTheLivePartitionCount: with PartitionCount set, groups
// hash over the topic's count as it is now. A group whose actor was loaded
// from a partition it no longer hashes to answers NOT_COORDINATOR, even
// when its new partition is loaded, until the node unloads the old one.
func TestGroupsFollowTheLivePartitionCount(t *testing.T) {
	var count atomic.Int32
	count.Store(1)
	c, _, _ := newTestCoordinator(t, func(cfg *Config) { cfg.PartitionCount = count.Load })
	ctx := testkit.Context(t)
	const moved = "g2" // partition 1 of 2
	if p := metadata.CoordinatorPartition(moved, 2); p != 1 {
		t.Fatalf("%s hashes to %d of 2", moved, p)
	}
	commit := func() int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = moved, -1
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
		return c.OffsetCommit(ctx, req).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(); code != 0 {
		t.Fatalf("commit over one partition: %v", kerr.ErrorForCode(code))
	}
	count.Store(2)
	if err := c.LoadPartition(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if code := commit(); code != kerr.NotCoordinator.Code {
		t.Errorf("commit through the actor of partition 0: %v, want NOT_COORDINATOR", kerr.ErrorForCode(code))
	}
	c.UnloadPartition(0)
	if code := commit(); code != 0 {
		t.Errorf("commit once partition 0 is unloaded: %v", kerr.ErrorForCode(code))
	}
}

// unreplicatedStore is a Store whose appends never get replicated: each
// waits, as the broker's does for the high watermark, until its context
// ends.
type unreplicatedStore struct{ *memStore }

func (s unreplicatedStore) Append(ctx context.Context, _ int32, _ []Record) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestWriteTimeout: a commit whose write is not replicated within
// WriteTimeout (offsets.commit.timeout.ms) is answered
// COORDINATOR_NOT_AVAILABLE, as Kafka's group coordinator answers a write
// that timed out (REQUEST_TIMED_OUT, remapped), and the offset does not
// change.
func TestWriteTimeout(t *testing.T) {
	c, _, _ := newTestCoordinator(t, func(cfg *Config) {
		cfg.Store = unreplicatedStore{cfg.Store.(*memStore)}
		cfg.WriteTimeout = 50 * time.Millisecond
	})
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.Generation = "g", -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 9}}}}
	start := time.Now()
	if code := c.OffsetCommit(testkit.Context(t), req).Topics[0].Partitions[0].ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit never replicated = %s", errName(code))
	}
	// Not at its write timeout would be at the end of the test's context.
	if took := time.Since(start); took >= testkit.HangBound {
		t.Fatalf("the commit was answered after %v, not at its write timeout", took)
	}
	// The group the commit made goes once the write fails, which may be a
	// moment after the answer.
	testkit.WaitFor(t, "the group of a commit never replicated to go", func() (bool, string) {
		s := c.Snapshot()
		for _, g := range s {
			if len(g.Offsets) > 0 {
				t.Fatalf("a commit never replicated is visible: %+v", s)
			}
		}
		return len(s) == 0, fmt.Sprintf("%+v", s)
	})
}
