package adminapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/nodeapi"
)

// events is GET /v1/events: the node's recent events after since, waiting
// up to wait for one when there is none. A waiting request holds nothing
// but its goroutine and timer: it waits on the ring's channel, which the
// next event closes; the node stopping or the server closing ends it.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var since uint64
	if v := q.Get("since"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("since %q: want a sequence number", v))
			return
		}
		since = s
	}
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("wait %q: want a duration such as 10s", v))
			return
		}
		wait = min(d, nodeapi.MaxEventsWait)
	}
	ring := h.node.Events()
	limit, ok := intParam(w, q.Get("limit"), "limit", 0, 1, ring.Capacity())
	if !ok {
		return
	}
	reset := false
	if run := q.Get("run"); run != "" && run != ring.Run() {
		reset, since = true, 0
	}
	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	for {
		page := ring.Since(since, limit)
		if since > page.Last {
			// A sequence number of another run of the node.
			reset, since = true, 0
			continue
		}
		if len(page.Events) > 0 || page.Missed > 0 || expired == nil {
			writeJSON(w, h.eventsPage(ring, page, reset))
			return
		}
		select {
		case <-ring.Changed(since):
		case <-expired:
			expired = nil
		case <-h.node.Done():
			expired = nil
		case <-r.Context().Done():
			// The client went (this answer is lost) or the server
			// closes.
			writeError(w, http.StatusServiceUnavailable, "the admin API is closing")
			return
		}
	}
}

func (h *handler) eventsPage(ring *events.Ring, page events.Page, reset bool) nodeapi.Events {
	out := nodeapi.Events{
		NodeID: h.node.ID(), Run: ring.Run(), Capacity: ring.Capacity(),
		FirstSeq: page.First, LastSeq: page.Last, Missed: page.Missed, More: page.More, Reset: reset,
		Events: make([]nodeapi.Event, 0, len(page.Events)),
	}
	for _, e := range page.Events {
		detail := e.Detail
		if detail == nil {
			detail = map[string]any{}
		}
		out.Events = append(out.Events, nodeapi.Event{
			Seq: e.Seq, Time: e.Time.UTC(), NodeID: h.node.ID(), Kind: string(e.Kind),
			Topic: e.Topic, Partition: e.Partition, Group: e.Group, Detail: detail,
		})
	}
	return out
}
