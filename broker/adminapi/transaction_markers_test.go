package adminapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// TestTransactionMarkers: a transaction over two partitions, committed,
// lists a COMMIT marker written on each, in snake_case JSON.
func TestTransactionMarkers(t *testing.T) {
	n := brokertest.Start(t)
	ctx := testkit.Context(t)
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 2, 1, nil, "m"); err != nil {
		t.Fatal(err)
	}
	c := nodeapi.NewClient(n.AdminAddr(), 0)

	tx := n.Client(kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("m"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer tx.Close()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if err := tx.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	txns, err := c.Transactions(ctx)
	if err != nil || len(txns.Transactions) != 1 || len(txns.Transactions[0].Markers) != 0 {
		t.Fatalf("before the end, no markers: %+v %v", txns, err)
	}
	before := time.Now().Add(-time.Second)
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	var got nodeapi.Transaction
	testkit.WaitFor(t, "the commit", func() (bool, string) {
		txns, err := c.Transactions(ctx)
		if err != nil || len(txns.Transactions) != 1 {
			return false, fmt.Sprint(txns, err)
		}
		got = txns.Transactions[0]
		return got.State == "CompleteCommit" && !got.MarkersPending, fmt.Sprintf("%+v", got)
	})
	if len(got.Markers) != 2 {
		t.Fatalf("markers %+v", got.Markers)
	}
	for i, m := range got.Markers {
		if m.Topic != "m" || m.Partition != int32(i) || m.Type != nodeapi.MarkerCommit || m.State != nodeapi.MarkerWritten ||
			m.Error != "" || m.Attempts != 1 || m.WrittenAt == nil || m.WrittenAt.Before(before) || m.WrittenAt.Location() != time.UTC {
			t.Errorf("marker %d: %+v", i, m)
		}
	}

	resp, err := http.Get("http://" + n.AdminAddr() + nodeapi.PathTransactions)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw struct {
		Transactions []struct {
			Markers []map[string]any `json:"markers"`
		} `json:"transactions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || len(raw.Transactions) != 1 || len(raw.Transactions[0].Markers) != 2 {
		t.Fatalf("raw answer %+v %v", raw, err)
	}
	m := raw.Transactions[0].Markers[0]
	for _, key := range []string{"topic", "partition", "type", "state", "attempts", "written_at"} {
		if _, ok := m[key]; !ok {
			t.Errorf("marker JSON without %q: %v", key, m)
		}
	}
	if _, ok := m["error"]; ok {
		t.Errorf("a marker without error has an error field: %v", m)
	}
}
