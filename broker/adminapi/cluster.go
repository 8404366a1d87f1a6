package adminapi

import (
	"net/http"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/nodeapi"
)

func (h *handler) cluster(w http.ResponseWriter, _ *http.Request) {
	st := h.node.ClusterState()
	r := st.Raft
	out := nodeapi.Cluster{
		NodeID: st.NodeID, ClusterID: st.ClusterID, Controller: st.Controller,
		Raft: nodeapi.Raft{
			Role: r.Role, Term: r.Term, Leader: r.Leader,
			CommitIndex: r.CommitIndex, AppliedIndex: r.AppliedIndex, LastLogIndex: r.LastLogIndex, MetadataOffset: r.MetadataIndex,
			LastContact: utcOrNil(r.LastContact),
		},
		Brokers:   make([]nodeapi.Broker, 0, len(st.Brokers)),
		Voters:    quorumMembers(r.Voters, len(r.Voters)+len(r.Observers) > 1),
		Observers: quorumMembers(r.Observers, true),
	}
	for _, b := range st.Brokers {
		out.Brokers = append(out.Brokers, nodeapi.Broker{ID: b.ID, Kafka: b.Addr(), Rack: b.Rack, Fenced: b.Fenced, ShuttingDown: b.ShuttingDown, Alive: b.Active()})
	}
	writeJSON(w, out)
}

// quorumMembers maps Raft's members; withAddr false drops the addresses
// (the single-node quorum's is an in-memory transport's).
func quorumMembers(ms []controller.QuorumMember, withAddr bool) []nodeapi.QuorumMember {
	out := make([]nodeapi.QuorumMember, 0, len(ms))
	for _, m := range ms {
		q := nodeapi.QuorumMember{ID: m.ID}
		if withAddr {
			q.Address = m.Addr
		}
		out = append(out, q)
	}
	return out
}

// throughput is GET /v1/throughput.
func (h *handler) throughput(w http.ResponseWriter, _ *http.Request) {
	st := h.node.Stats()
	out := nodeapi.Throughput{NodeID: h.node.ID()}
	for _, t := range st.Topics {
		out.BytesIn += t.BytesIn
		out.BytesOut += t.BytesOut
		out.MessagesIn += t.MessagesIn
	}
	for _, r := range st.Requests {
		if r.Request != "FetchConsumer" && r.Request != "FetchFollower" { // Fetch again, split
			out.Requests += r.Count
		}
	}
	writeJSON(w, out)
}
