package group

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// shareHarness drives share groups of a coordinator whose one topic "t"
// has two partitions, recording the members it is told are gone.
type shareHarness struct {
	t     *testing.T
	c     *Coordinator
	clock *testkit.Clock
	mu    sync.Mutex
	gone  []string
}

func newShareHarness(t *testing.T, mod func(*Config)) *shareHarness {
	h := &shareHarness{t: t}
	topics := map[string]TopicInfo{"t": {Name: "t", ID: [16]byte{7}, Partitions: 2}}
	h.c, _, h.clock = newTestCoordinator(t, func(cfg *Config) {
		cfg.Topics = func() map[string]TopicInfo { return topics }
		cfg.ShareSessionTimeout = 45 * time.Second
		cfg.OnShareMemberGone = func(group, member string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.gone = append(h.gone, group+"/"+member)
		}
		if mod != nil {
			mod(cfg)
		}
	})
	return h
}

func (h *shareHarness) heartbeat(group, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.MemberEpoch = group, member, epoch
	if topics != nil {
		req.SubscribedTopicNames = topics
	}
	return h.c.ShareGroupHeartbeat(context.Background(), req)
}

// join joins member to group subscribed to t, failing the test otherwise.
func (h *shareHarness) join(group, member string) *kmsg.ShareGroupHeartbeatResponse {
	h.t.Helper()
	resp := h.heartbeat(group, member, 0, "t")
	if resp.ErrorCode != 0 {
		h.t.Fatalf("join %s: %s", member, errName(resp.ErrorCode))
	}
	return resp
}

// partitions is what resp assigns, or nil when it assigns nothing new.
func partitions(resp *kmsg.ShareGroupHeartbeatResponse) []int32 {
	if resp.Assignment == nil {
		return nil
	}
	out := []int32{}
	for _, tp := range resp.Assignment.TopicPartitions {
		out = append(out, tp.Partitions...)
	}
	return out
}

func TestShareGroupAssignsAndSharesPartitions(t *testing.T) {
	h := newShareHarness(t, nil)
	a := h.join("g", "a")
	if got := partitions(a); !slices.Equal(got, []int32{0, 1}) || a.MemberEpoch != 1 {
		t.Fatalf("lone member: epoch %d partitions %v, want 1 [0 1]", a.MemberEpoch, got)
	}
	b := h.join("g", "b")
	if got := partitions(b); !slices.Equal(got, []int32{1}) || b.MemberEpoch != 2 {
		t.Fatalf("second member: epoch %d partitions %v, want 2 [1]", b.MemberEpoch, got)
	}
	// a takes its new target at once, without revoking first.
	a = h.heartbeat("g", "a", 1)
	if got := partitions(a); !slices.Equal(got, []int32{0}) || a.MemberEpoch != 2 {
		t.Fatalf("first member after the second joined: epoch %d partitions %v", a.MemberEpoch, got)
	}
	// A third member of two partitions shares one.
	c := h.join("g", "c")
	if got := partitions(c); !slices.Equal(got, []int32{0}) {
		t.Fatalf("third member: partitions %v, want [0] shared with a", got)
	}
	// A heartbeat with nothing new assigns nothing new.
	if got := partitions(h.heartbeat("g", "c", 3)); got != nil {
		t.Fatalf("steady heartbeat sent assignment %v", got)
	}

	d := h.c.ShareGroupDescribe(context.Background(), &kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{"g", "missing"}})
	g := d.Groups[0]
	if g.ErrorCode != 0 || g.GroupState != "Stable" || g.GroupEpoch != 3 || g.Assignor != "simple" || len(g.Members) != 3 {
		t.Fatalf("describe: %+v", g)
	}
	if d.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe of a missing group: %s", errName(d.Groups[1].ErrorCode))
	}
}

func TestShareGroupRefusals(t *testing.T) {
	h := newShareHarness(t, func(cfg *Config) { cfg.ShareMaxSize = 1 })
	cases := []struct {
		name        string
		group, memb string
		epoch       int32
		topics      []string
		want        *kerr.Error
	}{
		{"empty member id", "g", " ", 0, []string{"t"}, kerr.InvalidRequest},
		{"empty group id", "", "a", 0, []string{"t"}, kerr.InvalidRequest},
		{"join without topics", "g", "a", 0, nil, kerr.InvalidRequest},
		{"epoch -2", "g", "a", -2, nil, kerr.InvalidRequest},
		{"heartbeat to no group", "nog", "a", 1, nil, kerr.GroupIDNotFound},
	}
	for _, c := range cases {
		if got := h.heartbeat(c.group, c.memb, c.epoch, c.topics...); got.ErrorCode != c.want.Code {
			t.Errorf("%s: %s, want %s", c.name, errName(got.ErrorCode), c.want.Message)
		}
	}
	h.join("g", "a")
	for _, c := range []struct {
		name   string
		memb   string
		epoch  int32
		topics []string
		want   *kerr.Error
	}{
		{"unknown member", "x", 1, nil, kerr.UnknownMemberID},
		{"epoch ahead", "a", 5, nil, kerr.FencedMemberEpoch},
		{"past the group's size", "b", 0, []string{"t"}, kerr.GroupMaxSizeReached},
		{"unknown member leaving", "x", -1, nil, kerr.UnknownMemberID},
	} {
		if got := h.heartbeat("g", c.memb, c.epoch, c.topics...); got.ErrorCode != c.want.Code {
			t.Errorf("%s: %s, want %s", c.name, errName(got.ErrorCode), c.want.Message)
		}
	}
	// A share group is no consumer group, and the other way round.
	creq := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	creq.Version, creq.Group, creq.MemberID, creq.RebalanceTimeoutMillis = 1, "g", "c", 1000
	creq.Topics, creq.SubscribedTopicNames = []kmsg.ConsumerGroupHeartbeatRequestTopic{}, []string{"t"}
	if got := h.c.ConsumerGroupHeartbeat(context.Background(), creq); got.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("consumer heartbeat to a share group: %s", errName(got.ErrorCode))
	}
	creq.Group = "cg"
	if got := h.c.ConsumerGroupHeartbeat(context.Background(), creq); got.ErrorCode != 0 {
		t.Fatalf("consumer join: %s", errName(got.ErrorCode))
	}
	if got := h.heartbeat("cg", "a", 0, "t"); got.ErrorCode != kerr.GroupIDNotFound.Code || *got.ErrorMessage != "Group cg is not a share group." {
		t.Errorf("share heartbeat to a consumer group: %s", errName(got.ErrorCode))
	}
}

func TestShareGroupMembersGone(t *testing.T) {
	h := newShareHarness(t, nil)
	h.join("g", "a")
	h.join("g", "b")
	if got := h.heartbeat("g", "a", -1); got.ErrorCode != 0 || got.MemberEpoch != -1 {
		t.Fatalf("leave: %s epoch %d", errName(got.ErrorCode), got.MemberEpoch)
	}
	// b's session lapses: the group's timer fences it.
	h.clock.Advance(45 * time.Second)
	h.c.Tick(context.Background())
	h.mu.Lock()
	gone := slices.Clone(h.gone)
	h.mu.Unlock()
	if !slices.Equal(gone, []string{"g/a", "g/b"}) {
		t.Fatalf("members reported gone: %v, want [g/a g/b]", gone)
	}
	d := h.c.ShareGroupDescribe(context.Background(), &kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{"g"}})
	if g := d.Groups[0]; g.GroupState != "Empty" || len(g.Members) != 0 {
		t.Fatalf("describe after both left: %+v", g)
	}
	lg := h.c.ListGroups(context.Background(), &kmsg.ListGroupsRequest{Version: 5})
	if len(lg.Groups) != 1 || lg.Groups[0].GroupType != "share" || lg.Groups[0].ProtocolType != "share" {
		t.Fatalf("list groups: %+v", lg.Groups)
	}
}
