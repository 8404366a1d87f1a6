package adminapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/adminapi"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// kinds counts the events of each kind, and of each kind and topic.
func kinds(evs []nodeapi.Event) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		out[e.Kind]++
		if e.Topic != "" {
			out[e.Kind+" "+e.Topic]++
		}
	}
	return out
}

// TestEvents: the node's events hold its replicas' leader changes, the
// rolls of topic c's small segments and a requested cleaning, in order;
// a reader since the last one waits for the next (a rebalance), and one
// with a run of another node run starts over.
func TestEvents(t *testing.T) {
	n, c, _ := startNode(t)
	ctx := testkit.Context(t)
	if _, err := c.Compact(ctx, "c", 0, false); err != nil {
		t.Fatal(err)
	}
	all, err := c.Events(ctx, nodeapi.EventsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(all.Events)
	if all.NodeID != 0 || all.Run == "" || all.Capacity != 1024 || all.FirstSeq != 1 || all.LastSeq != uint64(len(all.Events)) || all.Missed != 0 ||
		k["leader_change c"] != 1 || k["leader_change d"] != 1 || k["segment_roll c"] < 2 || k["cleaning c"] != 1 {
		t.Fatalf("events %+v (kinds %v)", all, k)
	}
	for i, e := range all.Events {
		if e.Seq != uint64(i+1) || e.NodeID != 0 || e.Time.IsZero() || e.Time.Location() != time.UTC {
			t.Fatalf("event %d: %+v", i, e)
		}
		switch e.Kind {
		case nodeapi.EventLeaderChange:
			if e.Detail["role"] != "leader" || e.Detail["leader"] != 0.0 || e.Detail["old_leader"] != -1.0 {
				t.Fatalf("leader change %+v", e)
			}
		case nodeapi.EventSegmentRoll:
			if e.Topic == "c" && (e.Detail["reason"] != "segment.bytes" || e.Detail["new_base"].(float64) <= e.Detail["old_base"].(float64)) {
				t.Fatalf("roll %+v", e)
			}
		case nodeapi.EventCleaning:
			if e.Detail["trigger"] != "request" || e.Detail["records_removed"] != 46.0 {
				t.Fatalf("cleaning %+v", e)
			}
		}
	}

	last := all.LastSeq
	if page, err := c.Events(ctx, nodeapi.EventsQuery{Since: 2, Limit: 3}); err != nil || len(page.Events) != 3 || page.Events[0].Seq != 3 || !page.More {
		t.Fatalf("since 2, limit 3: %+v %v", page, err)
	}
	if page, err := c.Events(ctx, nodeapi.EventsQuery{Since: last, Run: all.Run, Wait: time.Millisecond}); err != nil || len(page.Events) != 0 || page.LastSeq != last {
		t.Fatalf("a wait that ends: %+v %v", page, err)
	}
	if page, err := c.Events(ctx, nodeapi.EventsQuery{Since: last, Run: "another"}); err != nil || !page.Reset || len(page.Events) != int(last) {
		t.Fatalf("since of another run: %+v %v", page, err)
	}
	if page, err := c.Events(ctx, nodeapi.EventsQuery{Since: last + 100}); err != nil || !page.Reset || len(page.Events) != int(last) {
		t.Fatalf("since past the last: %+v %v", page, err)
	}

	// A long poll since the last event answers with the next ones: those
	// of a consumer group joining (the leader changes of
	// __consumer_offsets' partitions, created for it, then the group's
	// rebalance).
	polled := make(chan nodeapi.Events, 1)
	go func() {
		page, err := c.Events(ctx, nodeapi.EventsQuery{Since: last, Run: all.Run, Wait: nodeapi.MaxEventsWait})
		if err != nil {
			t.Error(err)
		}
		polled <- page
	}()
	cl := n.Client(kgo.ConsumerGroup("g"), kgo.ConsumeTopics("d"))
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	cl.PollFetches(pctx)
	cancel()
	if page := <-polled; len(page.Events) == 0 || page.Events[0].Seq != last+1 {
		t.Fatalf("long poll since %d: %+v", last, page)
	}
	testkit.WaitFor(t, "the group's rebalance", func() (bool, string) {
		page, err := c.Events(ctx, nodeapi.EventsQuery{Since: last})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range page.Events {
			if e.Kind == nodeapi.EventRebalance && e.Group == "g" && e.Partition == -1 && e.Detail["reason"] == "member joined" {
				return true, ""
			}
		}
		return false, fmt.Sprint(kinds(page.Events))
	})
}

// TestEventsErrors: bad parameters are 400s.
func TestEventsErrors(t *testing.T) {
	_, _, url := startNode(t)
	for _, tc := range []struct{ query, msg string }{
		{"since=x", `since "x": want a sequence number`},
		{"wait=soon", `wait "soon": want a duration such as 10s`},
		{"limit=0", `limit "0": want a number from 1 to 1024`},
	} {
		resp, err := http.Get(url + nodeapi.PathEvents + "?" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), fmt.Sprintf("%q", tc.msg)[1:len(tc.msg)]) {
			t.Errorf("%s: %d %s, want 400 %s", tc.query, resp.StatusCode, body, tc.msg)
		}
	}
}

// TestEventsPollEndsAtClose: closing the server ends a long poll at once
// with an answer, not when its wait is over.
func TestEventsPollEndsAtClose(t *testing.T) {
	n := brokertest.Start(t)
	s, err := adminapi.Listen("127.0.0.1:0", n.Broker(), adminapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := nodeapi.NewClient(s.Addr(), time.Minute)
	ctx := testkit.Context(t)
	all, err := c.Events(ctx, nodeapi.EventsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	polled := make(chan error, 1)
	go func() {
		_, err := c.Events(ctx, nodeapi.EventsQuery{Since: all.LastSeq, Run: all.Run, Wait: time.Hour})
		polled <- err
	}()
	testkit.WaitFor(t, "the poll to wait", func() (bool, string) {
		return n.Broker().Events().Waiting(), "not waiting"
	})
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-polled:
		// An answer, not a connection the server cut after its grace
		// period.
		var se *nodeapi.StatusError
		if !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable {
			t.Fatalf("poll after close: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the poll outlived the server")
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
