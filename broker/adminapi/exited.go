package adminapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/nodeapi"
)

// exitedTimeout bounds the fencing of a broker whose process exited: the
// quorum commits it within milliseconds when it has a majority.
const exitedTimeout = 5 * time.Second

// brokerExited fences the broker the path names, its process having
// exited (nodeapi.PathBrokerExited).
func (h *handler) brokerExited(w http.ResponseWriter, r *http.Request) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 32)
	if err != nil || id < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("broker %q: want a node id", v))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), exitedTimeout)
	defer cancel()
	switch err := h.node.FenceExited(ctx, int32(id)); {
	case errors.Is(err, controller.ErrUnknownBroker):
		writeError(w, http.StatusNotFound, err.Error())
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeJSON(w, nodeapi.BrokerExited{NodeID: h.node.ID(), Broker: int32(id)})
	}
}
