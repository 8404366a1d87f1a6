package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/internal/testkit"
)

// findEvent returns the first event of n's ring of kind on topic t that
// match accepts.
func findEvent(n *brokertest.Node, kind events.Kind, topic string, match func(events.Event) bool) (events.Event, bool) {
	for _, e := range n.Broker().Events().Since(0, 0).Events {
		if e.Kind == kind && e.Topic == topic && match(e) {
			return e, true
		}
	}
	return events.Event{}, false
}

// TestClusterEvents: a partition's leader records its ISR shrinking when a
// follower dies and expanding when it returns; when the leader dies, the
// new leader records that it leads at a new epoch, and the other replica
// that it follows it.
func TestClusterEvents(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 3, brokertest.Config("replica.lag.time.max.ms", "1000"))
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "t"); err != nil {
		t.Fatal(err)
	}
	part := func() kadm.PartitionDetail { return partition0(ctx, t, adm, "t") }
	d := part()
	leader := d.Leader
	var followers []int32
	for _, id := range d.Replicas {
		if id != leader {
			followers = append(followers, id)
		}
	}
	ln := c.Node(leader)
	// Each node records its role as it applies the topic's metadata.
	testkit.WaitFor(t, "the leader's leader_change", func() (bool, string) {
		_, ok := findEvent(ln, events.LeaderChange, "t", func(e events.Event) bool {
			return e.Detail["role"] == "leader" && e.Detail["leader"] == leader
		})
		return ok, fmt.Sprintf("%+v", ln.Broker().Events().Since(0, 0).Events)
	})
	for _, id := range followers {
		testkit.WaitFor(t, fmt.Sprintf("follower %d's leader_change", id), func() (bool, string) {
			_, ok := findEvent(c.Node(id), events.LeaderChange, "t", func(e events.Event) bool {
				return e.Detail["role"] == "follower" && e.Detail["leader"] == leader
			})
			return ok, fmt.Sprintf("%+v", c.Node(id).Broker().Events().Since(0, 0).Events)
		})
	}

	gone := followers[0]
	c.Node(gone).Kill()
	// A follower slow under load may leave and rejoin the ISR too: look
	// for the killed one's events.
	testkit.WaitFor(t, "the leader's isr_shrink", func() (bool, string) {
		_, ok := findEvent(ln, events.ISRShrink, "t", func(e events.Event) bool {
			return slices.Contains(e.Detail["removed"].([]int32), gone) && slices.Contains(e.Detail["old_isr"].([]int32), gone) &&
				!slices.Contains(e.Detail["new_isr"].([]int32), gone)
		})
		return ok, fmt.Sprintf("%+v", ln.Broker().Events().Since(0, 0).Events)
	})
	c.Node(gone).Start()
	testkit.WaitFor(t, "the leader's isr_expand", func() (bool, string) {
		_, ok := findEvent(ln, events.ISRExpand, "t", func(e events.Event) bool {
			return slices.Contains(e.Detail["added"].([]int32), gone) && slices.Contains(e.Detail["new_isr"].([]int32), gone)
		})
		return ok, fmt.Sprintf("%+v", ln.Broker().Events().Since(0, 0).Events)
	})
	for _, id := range followers {
		if _, ok := findEvent(c.Node(id), events.ISRShrink, "t", func(events.Event) bool { return true }); ok {
			t.Fatalf("follower %d recorded the ISR change its leader records", id)
		}
	}

	ln.Kill()
	var next int32 = -1
	testkit.WaitFor(t, "a new leader", func() (bool, string) {
		d := part()
		next = d.Leader
		return d.Leader >= 0 && d.Leader != leader, fmt.Sprintf("leader %d", d.Leader)
	})
	testkit.WaitFor(t, "the new leader's leader_change", func() (bool, string) {
		_, ok := findEvent(c.Node(next), events.LeaderChange, "t", func(e events.Event) bool {
			return e.Detail["role"] == "leader" && e.Detail["old_leader"] == leader && e.Detail["leader_epoch"].(int32) > 0
		})
		return ok, fmt.Sprintf("%+v", c.Node(next).Broker().Events().Since(0, 0).Events)
	})
}
