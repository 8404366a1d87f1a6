package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

// txnCommit commits offsets of topic t in producer pid's transaction and
// returns the code of each partition.
func txnCommit(t *testing.T, c *Coordinator, group string, pid int64, memberID string, gen int32, offsets map[int32]int64) map[int32]int16 {
	t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = 3
	req.TransactionalID = fmt.Sprint("tx-", pid)
	req.Group, req.ProducerID, req.MemberID, req.Generation = group, pid, memberID, gen
	rt := kmsg.TxnOffsetCommitRequestTopic{Topic: "t"}
	for _, p := range slices.Sorted(maps.Keys(offsets)) {
		rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{Partition: p, Offset: offsets[p], LeaderEpoch: -1})
	}
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{rt}
	resp := c.TxnOffsetCommit(testkit.Context(t), req)
	out := make(map[int32]int16)
	for _, rp := range resp.Topics[0].Partitions {
		out[rp.Partition] = rp.ErrorCode
	}
	return out
}

// fetchStable fetches group's offset of t/part with RequireStable.
func fetchStable(t *testing.T, c *Coordinator, group string, part int32) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	req.RequireStable = true
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{part}}}}}
	resp := c.OffsetFetch(testkit.Context(t), req)
	if code := resp.Groups[0].ErrorCode; code != 0 {
		return -1, code
	}
	rp := resp.Groups[0].Topics[0].Partitions[0]
	return rp.Offset, rp.ErrorCode
}

// TestTxnConsumerGroupChecks checks TxnOffsetCommit against the members of
// a consumer-protocol group: the generation is the member epoch.
func TestTxnConsumerGroupChecks(t *testing.T) {
	topics := map[string]TopicInfo{"t": {Name: "t", ID: [16]byte{1}, Partitions: 2}}
	c, _, _ := newTestCoordinator(t, func(cfg *Config) {
		cfg.Topics = func() map[string]TopicInfo { return topics }
	})
	ctx := testkit.Context(t)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "cg", "m1", 0, 30000
	hb.SubscribedTopicNames = []string{"t"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	hresp := c.ConsumerGroupHeartbeat(ctx, hb)
	if hresp.ErrorCode != 0 || hresp.MemberEpoch <= 0 {
		t.Fatalf("heartbeat = %s epoch %d", errName(hresp.ErrorCode), hresp.MemberEpoch)
	}
	epoch := hresp.MemberEpoch

	for _, tc := range []struct {
		name   string
		member string
		gen    int32
		want   int16
	}{
		{"member at its epoch", "m1", epoch, 0},
		{"stale epoch", "m1", epoch - 1, kerr.IllegalGeneration.Code},
		{"future epoch", "m1", epoch + 1, kerr.IllegalGeneration.Code},
		{"unknown member", "m9", epoch, kerr.UnknownMemberID.Code},
		{"no member information", "", -1, 0},
	} {
		if got := txnCommit(t, c, "cg", 1, tc.member, tc.gen, map[int32]int64{0: 5})[0]; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, errName(got), errName(tc.want))
		}
	}
	if got := txnCommit(t, c, "cg", 1, "m1", epoch, map[int32]int64{7: 5})[7]; got != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown partition: %s", errName(got))
	}
	if _, code := fetchStable(t, c, "cg", 0); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("stable fetch with pending offsets: %s", errName(code))
	}
	c.CompleteTransaction(0, 1, true)
	if off, code := fetchStable(t, c, "cg", 0); code != 0 || off != 5 {
		t.Fatalf("after commit: %d %s", off, errName(code))
	}
}

// TestTxnNewGroupGeneration checks that a transactional commit with a
// generation for a group that does not exist answers ILLEGAL_GENERATION and
// leaves nothing behind, while an anonymous one creates the group.
func TestTxnNewGroupGeneration(t *testing.T) {
	c, store, _ := newTestCoordinator(t, nil)
	if got := txnCommit(t, c, "g", 1, "m", 3, map[int32]int64{0: 1})[0]; got != kerr.IllegalGeneration.Code {
		t.Fatalf("commit with generation to a missing group: %s", errName(got))
	}
	if n := len(store.Records(0)); n != 0 {
		t.Fatalf("records written: %d", n)
	}
	if got := txnCommit(t, c, "g", 1, "", -1, map[int32]int64{0: 1})[0]; got != 0 {
		t.Fatalf("anonymous commit: %s", errName(got))
	}
	// The group holds only a pending offset; it is kept, then dropped with
	// the abort.
	if s := c.Snapshot(); len(s) != 1 || len(s[0].Pending) != 1 || len(s[0].Offsets) != 0 {
		t.Fatalf("snapshot with a pending offset: %+v", s)
	}
	store.marker(0, 1, false)
	c.CompleteTransaction(0, 1, false)
	testkit.WaitFor(t, "the group to be dropped after the abort", func() (bool, string) {
		s := c.Snapshot()
		return len(s) == 0, fmt.Sprintf("%+v", s)
	})
}

// plainStore is a Store without the TxnStore extension.
type plainStore struct{ mem *memStore }

func (s plainStore) Append(ctx context.Context, p int32, records []Record) error {
	return s.mem.Append(ctx, p, records)
}

func (s plainStore) Replay(ctx context.Context, p int32, fn func(Record) error) error {
	return s.mem.Replay(ctx, p, fn)
}

func TestTxnWithoutTxnStore(t *testing.T) {
	c := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: plainStore{newMemStore()}, Partitions: 1})
	defer c.Close()
	if err := c.LoadPartition(testkit.Context(t), 0); err != nil {
		t.Fatal(err)
	}
	if got := txnCommit(t, c, "g", 1, "", -1, map[int32]int64{0: 1})[0]; got != kerr.UnsupportedVersion.Code {
		t.Fatalf("commit without TxnStore: %s", errName(got))
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0}}}}
	if got := c.TxnOffsetCommit(testkit.Context(t), req).Topics[0].Partitions[0].ErrorCode; got != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %s", errName(got))
	}
}

func TestTxnAppendErrorCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int16
	}{
		{fmt.Errorf("x: %w", kerr.ProducerFenced), kerr.ProducerFenced.Code},
		{fmt.Errorf("x: %w", kerr.InvalidProducerEpoch), kerr.InvalidProducerEpoch.Code},
		{fmt.Errorf("x: %w", kerr.NotLeaderForPartition), kerr.NotCoordinator.Code},
		{fmt.Errorf("x: %w", kerr.NotEnoughReplicas), kerr.CoordinatorNotAvailable.Code},
		{fmt.Errorf("x: %w", kerr.MessageTooLarge), kerr.InvalidCommitOffsetSize.Code},
		{fmt.Errorf("x: %w", ErrNotLeader), kerr.NotCoordinator.Code},
		{context.Canceled, kerr.NotCoordinator.Code},
		{errInjected, kerr.CoordinatorNotAvailable.Code},
	} {
		if got := txnAppendErrorCode(tc.err); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.err, errName(got), errName(tc.want))
		}
	}
}

// TestTxnDeleteDropsPending checks that OffsetDelete and DeleteGroups drop
// pending offsets with tombstones, so a replay agrees and a later COMMIT
// marker brings nothing back.
func TestTxnDeleteDropsPending(t *testing.T) {
	c, store, _ := newTestCoordinator(t, nil)
	ctx := testkit.Context(t)
	commitSimple(t, c, "g", "t", 0, 1)
	if got := txnCommit(t, c, "g", 1, "", -1, map[int32]int64{0: 10, 1: 11, 2: 12}); got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("txn commit: %v", got)
	}
	dreq := kmsg.NewPtrOffsetDeleteRequest()
	dreq.Group = "g"
	dreq.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 1}}}}
	if resp := c.OffsetDelete(ctx, dreq); resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete: %+v", resp)
	}
	if s := c.Snapshot(); len(s) != 1 || len(s[0].Pending) != 2 {
		t.Fatalf("pending after offset delete: %+v", s)
	}
	greq := kmsg.NewPtrDeleteGroupsRequest()
	greq.Groups = []string{"g"}
	if code := c.DeleteGroups(ctx, greq).Groups[0].ErrorCode; code != 0 {
		t.Fatalf("delete group: %s", errName(code))
	}
	var got []string
	for _, r := range store.Records(0) {
		got = append(got, describeRecord(t, r, func(s string) string { return s }))
	}
	want := []string{
		"offset g t/0=1",
		"txn pid=1 offset g t/0=10", "txn pid=1 offset g t/1=11", "txn pid=1 offset g t/2=12",
		"offset g t/1 tombstone",
		"offset g t/0 tombstone", "offset g t/2 tombstone", "group g tombstone",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records = %q\nwant %q", got, want)
	}
	store.marker(0, 1, true)
	c.CompleteTransaction(0, 1, true)
	if s := c.Snapshot(); len(s) != 0 {
		t.Fatalf("deleted group came back: %+v", s)
	}
	c.UnloadPartition(0)
	if err := c.LoadPartition(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if s := c.Snapshot(); len(s) != 0 {
		t.Fatalf("deleted group after reload: %+v", s)
	}
}

// TestTxnMarkerDuringLoad checks that a marker reported while the
// partition is being replayed is applied when the load ends, whether or not
// the replay saw it.
func TestTxnMarkerDuringLoad(t *testing.T) {
	for _, replayed := range []bool{false, true} {
		t.Run(fmt.Sprint("replayed=", replayed), func(t *testing.T) {
			mem := newMemStore()
			ctx := testkit.Context(t)
			_ = mem.AppendTransactional(ctx, 0, 1, 0, []Record{offsetRecord("g", "t", 0, offset{Offset: 10, LeaderEpoch: -1})})
			_ = mem.AppendTransactional(ctx, 0, 2, 0, []Record{offsetRecord("g", "t", 1, offset{Offset: 20, LeaderEpoch: -1})})
			if replayed {
				mem.marker(0, 1, true)
				mem.marker(0, 2, false)
			}
			bs := &blockingStore{memStore: mem, release: make(chan struct{}), started: make(chan struct{})}
			c := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: bs, Partitions: 1})
			defer c.Close()
			errc := make(chan error, 1)
			go func() { errc <- c.LoadPartition(ctx, 0) }()
			<-bs.started
			c.CompleteTransaction(0, 1, true)
			c.CompleteTransaction(0, 2, false)
			close(bs.release)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if off, code := fetchStable(t, c, "g", 0); code != 0 || off != 10 {
				t.Fatalf("t/0 = %d %s", off, errName(code))
			}
			if off, code := fetchStable(t, c, "g", 1); code != 0 || off != -1 {
				t.Fatalf("t/1 = %d %s", off, errName(code))
			}
			if s := c.Snapshot(); len(s) != 1 || len(s[0].Pending) != 0 {
				t.Fatalf("snapshot: %+v", s)
			}
		})
	}
}

// TestTxnReplayEdgeCases replays records a coordinator may meet in a log:
// a transactional tombstone withdraws the producer's pending offset, a
// plain tombstone drops every pending offset of the partition, and a
// marker of an unknown producer is harmless.
func TestTxnReplayEdgeCases(t *testing.T) {
	mem := newMemStore()
	ctx := testkit.Context(t)
	txn := func(pid int64, r Record) { _ = mem.AppendTransactional(ctx, 0, pid, 0, []Record{r}) }
	txn(1, offsetRecord("g", "t", 0, offset{Offset: 10}))
	txn(1, offsetRecord("g", "t", 1, offset{Offset: 11}))
	txn(1, offsetTombstone("g", "t", 0))
	txn(2, offsetRecord("g", "t", 2, offset{Offset: 22}))
	_ = mem.Append(ctx, 0, []Record{offsetTombstone("g", "t", 2)})
	txn(3, offsetRecord("h", "t", 0, offset{Offset: 30}))
	mem.marker(0, 9, true)
	mem.marker(0, 1, true)
	mem.marker(0, 2, true)

	c := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: mem, Partitions: 1})
	defer c.Close()
	if err := c.LoadPartition(ctx, 0); err != nil {
		t.Fatal(err)
	}
	s := c.Snapshot()
	if len(s) != 2 || s[0].Group != "g" || s[1].Group != "h" {
		t.Fatalf("groups: %+v", s)
	}
	if g := s[0]; len(g.Offsets) != 1 || g.Offsets[0].Partition != 1 || g.Offsets[0].Offset != 11 || len(g.Pending) != 0 {
		t.Fatalf("g: %+v", g)
	}
	if h := s[1]; len(h.Offsets) != 0 || len(h.Pending) != 1 || h.Pending[0].ProducerID != 3 {
		t.Fatalf("h: %+v", h)
	}
	// The open transaction of h completes after the load.
	c.CompleteTransaction(0, 3, true)
	if off, code := fetchStable(t, c, "h", 0); code != 0 || off != 30 {
		t.Fatalf("h t/0 = %d %s", off, errName(code))
	}
	// Markers for partitions this node does not serve are ignored.
	c.CompleteTransaction(5, 3, true)
	c.Close()
	c.CompleteTransaction(0, 3, true)
}

// TestTxnConcurrent runs transactions of many producers over many groups
// at once, with plain commits and stable fetches in between, for -race: at
// the end every committed transaction's offset is visible and every aborted
// one's is not.
func TestTxnConcurrent(t *testing.T) {
	store := newMemStore()
	c := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: store, Partitions: 3})
	defer c.Close()
	ctx := testkit.Context(t)
	for p := int32(0); p < 3; p++ {
		if err := c.LoadPartition(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	const producers, rounds = 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for i := 0; i < producers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			group := fmt.Sprintf("group-%d", i%3)
			pid := int64(100 + i)
			part := metadata.CoordinatorPartition(group, 3)
			for r := 1; r <= rounds; r++ {
				req := kmsg.NewPtrTxnOffsetCommitRequest()
				req.Version = 3
				req.Group, req.ProducerID = group, pid
				req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: int32(i), Offset: int64(r), LeaderEpoch: -1}}}}
				if code := c.TxnOffsetCommit(ctx, req).Topics[0].Partitions[0].ErrorCode; code != 0 {
					errs <- fmt.Errorf("producer %d round %d: %s", pid, r, errName(code))
					return
				}
				freq := kmsg.NewPtrOffsetFetchRequest()
				freq.Version = 8
				freq.RequireStable = true
				freq.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{int32(i)}}}}}
				if code := c.OffsetFetch(ctx, freq).Groups[0].Topics[0].Partitions[0].ErrorCode; code != kerr.UnstableOffsetCommit.Code {
					errs <- fmt.Errorf("producer %d round %d: stable fetch %s", pid, r, errName(code))
					return
				}
				commit := r%2 == 0
				store.marker(part, pid, commit)
				c.CompleteTransaction(part, pid, commit)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	check := func(c *Coordinator, when string) {
		for i := 0; i < producers; i++ {
			off, code := fetchStable(t, c, fmt.Sprintf("group-%d", i%3), int32(i))
			if code != 0 || off != rounds {
				t.Errorf("%s: producer %d: %d %s, want %d", when, i, off, errName(code), rounds)
			}
		}
	}
	check(c, "live")
	c2 := New(Config{Logger: testkit.Logger(t, slog.LevelDebug), Store: store, Partitions: 3})
	defer c2.Close()
	for p := int32(0); p < 3; p++ {
		if err := c2.LoadPartition(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	check(c2, "replayed")
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("test ran out of time")
	}
}
