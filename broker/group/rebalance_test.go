package group

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// TestOnRebalance: Config.OnRebalance hears a classic group's rebalances
// as they begin and as its generation advances, and each group epoch of a
// consumer group, with the reason.
func TestOnRebalance(t *testing.T) {
	topics := map[string]TopicInfo{"t": {Name: "t", ID: [16]byte{1}, Partitions: 2}}
	var mu sync.Mutex
	var got []string
	c, _, _ := newTestCoordinator(t, func(cfg *Config) {
		cfg.Topics = func() map[string]TopicInfo { return topics }
		cfg.OnRebalance = func(r Rebalance) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%s %s %s gen=%d members=%d protocol=%q reason=%q",
				r.Group, r.GroupProtocol, r.State, r.Generation, r.Members, r.Protocol, r.Reason))
		}
	})
	ctx := testkit.Context(t)

	jresp := joinRange(ctx, t, c, "g", "t")
	lreq := kmsg.NewPtrLeaveGroupRequest()
	lreq.Version = 1
	lreq.Group, lreq.MemberID = "g", jresp.MemberID
	if code := c.LeaveGroup(ctx, lreq).ErrorCode; code != 0 {
		t.Fatalf("leave: %s", errName(code))
	}

	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "cg", "m1", 0, 30000
	hb.SubscribedTopicNames = []string{"t"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if resp := c.ConsumerGroupHeartbeat(ctx, hb); resp.ErrorCode != 0 {
		t.Fatalf("heartbeat: %s", errName(resp.ErrorCode))
	}
	hb.MemberEpoch = epochLeave
	if resp := c.ConsumerGroupHeartbeat(ctx, hb); resp.ErrorCode != 0 {
		t.Fatalf("leave heartbeat: %s", errName(resp.ErrorCode))
	}

	mu.Lock()
	defer mu.Unlock()
	want := []string{
		`g classic PreparingRebalance gen=0 members=1 protocol="" reason="member joined"`,
		`g classic CompletingRebalance gen=1 members=1 protocol="range" reason="member joined"`,
		`g classic PreparingRebalance gen=1 members=0 protocol="range" reason="member left"`,
		`g classic Empty gen=2 members=0 protocol="" reason="member left"`,
		`cg consumer Assigning gen=1 members=1 protocol="" reason="member joined"`,
		`cg consumer Empty gen=2 members=0 protocol="" reason="member left"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rebalances:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
