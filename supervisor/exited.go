package supervisor

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/klogdev/klog/nodeapi"
)

// exitNoticeTimeout bounds the notice of a node's unasked exit: with a
// quorum the fencing commits within milliseconds; without one (a majority
// of the voters down) it cannot, and the broker stays registered until a
// quorum is back and its session expires.
const exitNoticeTimeout = 3 * time.Second

// tellExited asks a live node, through its admin API, to fence node id's
// broker, whose process has just exited unasked: the controller
// quorum's session (broker.session.timeout.ms) would notice only once it
// expired, while the supervisor, the process's parent, knew at once. The
// nodes are asked in turn, skipping the stopped and isolated, until one
// answers; a cluster run without admin APIs is told nothing.
func (s *Supervisor) tellExited(id int32) {
	ctx, cancel := context.WithTimeout(context.Background(), exitNoticeTimeout)
	defer cancel()
	start := time.Now()
	asked := false
	for _, n := range s.nodes {
		addr := s.admin(n.layout.ID)
		if n.layout.ID == id || addr == "" || !n.reachable() {
			continue
		}
		asked = true
		_, err := nodeapi.NewClient(addr, exitNoticeTimeout).BrokerExited(ctx, id)
		var st *nodeapi.StatusError
		if errors.As(err, &st) && st.Status == http.StatusNotFound {
			return // never registered: nothing to fence
		}
		if err == nil {
			s.logger.Info("node fenced after its exit", "node", id, "asked", n.layout.ID, "took", time.Since(start).Round(time.Millisecond))
			return
		}
		s.logger.Debug("exit notice failed", "node", id, "asked", n.layout.ID, "err", err)
		if ctx.Err() != nil {
			break
		}
	}
	if asked {
		s.logger.Warn("no node fenced the exited node; its session will expire instead", "node", id)
	}
}

// reachable reports whether n runs, ready, neither stopped nor isolated:
// a node that can answer for the cluster.
func (n *node) reachable() bool {
	proc, _ := n.live()
	n.mu.Lock()
	defer n.mu.Unlock()
	return proc != nil && n.mu.ready && !n.mu.stopped && !n.mu.isolated
}
