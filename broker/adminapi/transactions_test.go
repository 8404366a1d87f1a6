package adminapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// TestProducersAndTransactions: a partition's producers show the
// idempotent producer's last batch, and an open transaction's first
// offset, which its commit clears; the coordinator lists the
// transaction with its partitions while it is open.
func TestProducersAndTransactions(t *testing.T) {
	n, c, _ := startNode(t)
	ctx := testkit.Context(t)

	ps, err := c.Producers(ctx, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	// startNode produced 81 records to c, one batch each.
	if ps.NodeID != 0 || ps.Topic != "c" || ps.Count != 1 || len(ps.Producers) != 1 {
		t.Fatalf("producers of c/0: %+v", ps)
	}
	if p := ps.Producers[0]; p.LastSequence != 80 || p.LastOffset != 80 || p.CurrentTxnStartOffset != -1 || p.LastTimestamp == nil || p.CoordinatorEpoch != -1 {
		t.Fatalf("producer of c/0: %+v", p)
	}

	tx := n.Client(kgo.TransactionalID("tx"), kgo.TransactionTimeout(20*time.Second), kgo.DefaultProduceTopic("d"))
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	txns, err := c.Transactions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if txns.Count != 1 || len(txns.Transactions) != 1 {
		t.Fatalf("transactions %+v", txns)
	}
	if got := txns.Transactions[0]; got.TransactionalID != "tx" || got.State != "Ongoing" || got.TimeoutMs != 20000 || got.StartTime == nil ||
		len(got.Partitions) != 1 || got.Partitions[0] != (nodeapi.TransactionPartition{Topic: "d", Partition: 0}) || got.ProducerID < 0 {
		t.Fatalf("transaction %+v", got)
	}
	ps, err = c.Producers(ctx, "d", 0)
	if err != nil || len(ps.Producers) != 1 || ps.Producers[0].CurrentTxnStartOffset != 0 || ps.Producers[0].ProducerID != txns.Transactions[0].ProducerID {
		t.Fatalf("producers of d/0 in the transaction: %+v %v", ps, err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the commit", func() (bool, string) {
		txns, err := c.Transactions(ctx)
		ps, perr := c.Producers(ctx, "d", 0)
		if err != nil || perr != nil {
			return false, "error"
		}
		return txns.Transactions[0].State == "CompleteCommit" && len(txns.Transactions[0].Partitions) == 0 && ps.Producers[0].CurrentTxnStartOffset == -1,
			fmt.Sprintf("%+v %+v", txns.Transactions[0], ps.Producers[0])
	})

	for _, tc := range []struct {
		topic     string
		partition int32
		status    int
	}{{"nope", 0, http.StatusNotFound}, {"c", 7, http.StatusNotFound}} {
		_, err := c.Producers(ctx, tc.topic, tc.partition)
		if se, ok := err.(*nodeapi.StatusError); !ok || se.Status != tc.status {
			t.Errorf("producers of %s/%d: %v, want %d", tc.topic, tc.partition, err, tc.status)
		}
	}
}
