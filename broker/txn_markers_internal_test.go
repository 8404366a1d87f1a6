package broker

import (
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
)

// TestCoordinatorMarkersHealAForgedCoordinatorEpoch: a data directory
// holding a marker with coordinator epoch 2^31-1, as a client could write
// before WriteTxnMarkers was checked, does not fence the coordinator for
// good: no coordinator ever held that epoch, so the coordinator's markers
// write over it, and the producer's later transactions commit and release
// the last stable offset, also after a restart.
func TestCoordinatorMarkersHealAForgedCoordinatorEpoch(t *testing.T) {
	ctx := testkit.Context(t)
	cfg := Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Logger: testkit.Logger(t, slog.LevelWarn)}
	start := func() *Node {
		t.Helper()
		n, err := Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Listen = n.Addr().String()
		return n
	}
	n := start()
	defer func() { _ = n.Close() }()
	client := func(opts ...kgo.Opt) *kgo.Client {
		t.Helper()
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.Advertised())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	if _, err := kadm.NewClient(client()).CreateTopic(ctx, 1, 1, nil, "poisoned"); err != nil {
		t.Fatal(err)
	}
	commit := func(value string) {
		t.Helper()
		p := client(kgo.TransactionalID("victim-txn"), kgo.DefaultProduceTopic("poisoned"), kgo.TransactionTimeout(20*time.Second))
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
		part := n.partition("poisoned", 0)
		testkit.WaitFor(t, "the commit marker of "+value+" to release the LSO", func() (bool, string) {
			return part.LastStableOffset() == part.HighWatermark(), ""
		})
		for _, ps := range part.Producers() {
			if ps.CoordinatorEpoch == math.MaxInt32 {
				t.Fatalf("producer %+v keeps the forged coordinator epoch", ps)
			}
		}
	}
	commit("first")
	part := n.partition("poisoned", 0)
	ps := part.Producers()
	if len(ps) != 1 {
		t.Fatalf("producers %+v", ps)
	}
	if _, err := part.AppendMarker(log.Marker{ProducerID: ps[0].ProducerID, ProducerEpoch: ps[0].ProducerEpoch, CoordinatorEpoch: math.MaxInt32}); err != nil {
		t.Fatal(err)
	}
	commit("second")
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = start()
	// Poison it again, on disk through a restart.
	part = n.partition("poisoned", 0)
	ps = part.Producers()
	if _, err := part.AppendMarker(log.Marker{ProducerID: ps[0].ProducerID, ProducerEpoch: ps[0].ProducerEpoch, CoordinatorEpoch: math.MaxInt32}); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = start()
	commit("third")
}
