package adminapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/clock"
	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/store/log"
)

// advanceTimeout bounds the passes an advance of the clock runs.
const advanceTimeout = time.Minute

// clockRoutes serves the node's clock and its advance.
func (h *handler) clockRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+nodeapi.PathClock, h.clock)
	mux.HandleFunc("POST "+nodeapi.PathClockAdvance, h.advanceClock)
}

func (h *handler) clock(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, clockOf(h.node.ID(), h.node.Clock()))
}

func (h *handler) advanceClock(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query().Get("by")
	if v == "" {
		writeError(w, http.StatusBadRequest, "by: want a duration to advance the clock by (90s, 2h, 1h30m)")
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("by %q: want a duration (90s, 2h, 1h30m)", v))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), advanceTimeout)
	defer cancel()
	st, err := h.node.AdvanceClock(ctx, d)
	switch {
	case errors.Is(err, clock.ErrBackwards):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case errors.Is(err, log.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "the node is stopping")
		return
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, fmt.Sprintf("the clock is advanced; its passes did not finish within %v", advanceTimeout))
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, clockOf(h.node.ID(), st))
}

func clockOf(id int32, st broker.ClockState) nodeapi.Clock {
	return nodeapi.Clock{NodeID: id, Now: st.Now.UTC(), OffsetMs: st.Offset.Milliseconds()}
}
