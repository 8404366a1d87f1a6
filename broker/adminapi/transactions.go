package adminapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/klogdev/klog/nodeapi"
)

// transactionRoutes serves the producer state of partitions and the
// transaction coordinator's transactions.
func (h *handler) transactionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+nodeapi.PathProducers, h.producers)
	mux.HandleFunc("GET "+nodeapi.PathTransactions, h.transactions)
}

func (h *handler) producers(w http.ResponseWriter, r *http.Request) {
	topic, v := r.PathValue("topic"), r.PathValue("partition")
	partition, err := strconv.ParseInt(v, 10, 32)
	if err != nil || partition < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("partition %q: want a partition number", v))
		return
	}
	states, ok := h.node.Producers(topic, int32(partition))
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("node %d has no replica of %s/%d", h.node.ID(), topic, partition))
		return
	}
	out := nodeapi.Producers{NodeID: h.node.ID(), Topic: topic, Partition: int32(partition), Count: len(states), Producers: []nodeapi.Producer{}}
	for _, s := range states[:min(len(states), nodeapi.MaxListed)] {
		p := nodeapi.Producer{
			ProducerID: s.ProducerID, ProducerEpoch: s.ProducerEpoch, LastSequence: s.LastSequence, LastOffset: s.LastOffset,
			CoordinatorEpoch: s.CoordinatorEpoch, CurrentTxnStartOffset: s.CurrentTxnStartOffset,
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
			ProducerID: s.ProducerID, ProducerEpoch: s.ProducerEpoch, State: s.State,
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
		out.Transactions = append(out.Transactions, t)
	}
	writeJSON(w, out)
}
