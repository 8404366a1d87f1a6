package adminapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/klogdev/klog/nodeapi"
)

// transactionRoutes serves the producer state of partitions, the
// transaction coordinator's transactions and the group coordinator's
// groups, with the principals of producers and members.
func (h *handler) transactionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+nodeapi.PathProducers, h.producers)
	mux.HandleFunc("GET "+nodeapi.PathTransactions, h.transactions)
	mux.HandleFunc("GET "+nodeapi.PathGroup, h.group)
}

// group is GET /v1/groups/{group}, from the group's coordinator.
func (h *handler) group(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("group")
	g, ok := h.node.Group(r.Context(), id)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("node %d does not coordinate group %q", h.node.ID(), id))
		return
	}
	out := nodeapi.Group{NodeID: h.node.ID(), Group: g.Group, Type: g.Type, State: g.State, Generation: g.Generation,
		Members: make([]nodeapi.GroupMember, 0, len(g.Members))}
	for _, m := range g.Members {
		out.Members = append(out.Members, nodeapi.GroupMember{
			MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost, Principal: m.Principal,
		})
	}
	writeJSON(w, out)
}

func (h *handler) producers(w http.ResponseWriter, r *http.Request) {
	topic, partition, states, ok := local(w, r, h.node.Producers)
	if !ok {
		return
	}
	out := nodeapi.Producers{NodeID: h.node.ID(), Topic: topic, Partition: partition, Count: len(states), Producers: []nodeapi.Producer{}}
	for _, s := range states[:min(len(states), nodeapi.MaxListed)] {
		p := nodeapi.Producer{
			ProducerID: s.ProducerID, ProducerEpoch: s.ProducerEpoch, LastSequence: s.LastSequence, LastOffset: s.LastOffset,
			CoordinatorEpoch: s.CoordinatorEpoch, CurrentTxnStartOffset: s.CurrentTxnStartOffset,
			Principal: h.node.ProducerPrincipal(s.ProducerID),
		}
		if s.LastTimestamp >= 0 {
			ts := time.UnixMilli(s.LastTimestamp).UTC()
			p.LastTimestamp = &ts
		}
		out.Producers = append(out.Producers, p)
	}
	writeJSON(w, out)
}

func (h *handler) transactions(w http.ResponseWriter, _ *http.Request) {
	txns := h.node.Transactions()
	out := nodeapi.Transactions{NodeID: h.node.ID(), Count: len(txns), Transactions: []nodeapi.Transaction{}}
	for _, s := range txns[:min(len(txns), nodeapi.MaxListed)] {
		t := nodeapi.Transaction{
			TransactionalID: s.TransactionalID, CoordinatorPartition: s.Partition,
			ProducerID: s.ProducerID, ProducerEpoch: s.ProducerEpoch, Principal: h.node.ProducerPrincipal(s.ProducerID), State: s.State,
			TimeoutMs: s.Timeout.Milliseconds(), LastUpdate: s.LastUpdate.UTC(),
			Partitions: make([]nodeapi.TransactionPartition, 0, len(s.Partitions)), MarkersPending: s.MarkersPending,
		}
		if !s.StartTime.IsZero() {
			st := s.StartTime.UTC()
			t.StartTime = &st
		}
		for _, tp := range s.Partitions {
			t.Partitions = append(t.Partitions, nodeapi.TransactionPartition{Topic: tp.Topic, Partition: tp.Partition})
		}
		t.Markers = transactionMarkers(s.Markers)
		out.Transactions = append(out.Transactions, t)
	}
	writeJSON(w, out)
}
