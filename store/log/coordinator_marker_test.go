package log

import (
	"errors"
	"math"
	"testing"

	"github.com/klogdev/klog/store/log/logtest"
)

// TestCoordinatorMarkerOverForgedEpoch: a marker with a coordinator epoch
// from the future (2^31-1, which a client once could send) fences every
// later marker of the producer, as in Kafka. The coordinator's own marker,
// knowing no epoch above its ceiling was ever held, is not fenced by it,
// records its own epoch and ends the transaction; an epoch within the
// ceiling still fences, and the state survives a reopen.
func TestCoordinatorMarkerOverForgedEpoch(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	if _, err := l.AppendMarker(Marker{ProducerID: 7, CoordinatorEpoch: math.MaxInt32}, 0); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 7, 0, 0, 1, true), 0)
	if _, err := l.AppendMarker(Marker{ProducerID: 7, Commit: true}, 0); !errors.Is(err, ErrTransactionCoordinatorFenced) {
		t.Fatalf("marker under the forged epoch: %v, want fenced", err)
	}
	if _, err := l.AppendCoordinatorMarker(Marker{ProducerID: 7, Commit: true, CoordinatorEpoch: 2}, 0, 2); err != nil {
		t.Fatalf("coordinator marker over the forged epoch: %v", err)
	}
	if fuo := l.FirstUnstableOffset(); fuo != -1 {
		t.Fatalf("first unstable offset %d after the commit, want -1", fuo)
	}
	if _, err := l.AppendCoordinatorMarker(Marker{ProducerID: 7, Commit: true, CoordinatorEpoch: 1}, 0, 5); !errors.Is(err, ErrTransactionCoordinatorFenced) {
		t.Fatalf("coordinator marker under a real newer epoch: %v, want fenced", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open(0)
	for _, p := range l.Producers() {
		if p.ProducerID == 7 && (p.CoordinatorEpoch != 2 || p.CurrentTxnStartOffset != -1) {
			t.Fatalf("producer after reopen: %+v, want coordinator epoch 2 and no open transaction", p)
		}
	}
}

// TestTransactionVersion2MarkerEpoch: a marker of transaction version 2
// (KIP-1228) must carry an epoch above the producer's, since its
// coordinator bumped the epoch to end the transaction; the same epoch is
// refused while the transaction is open and accepted once it is not (a
// marker retried after a coordinator restart). A classic marker at the
// producer's epoch is accepted, one below it refused.
func TestTransactionVersion2MarkerEpoch(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 7, 3, 0, 1, true), 0)
	if _, err := l.AppendMarker(Marker{ProducerID: 7, ProducerEpoch: 3, Commit: true, TransactionVersion: 2}, 0); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("version 2 marker at the records' epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	if _, err := l.AppendMarker(Marker{ProducerID: 7, ProducerEpoch: 4, Commit: true, TransactionVersion: 2}, 0); err != nil {
		t.Fatalf("version 2 marker at the bumped epoch: %v", err)
	}
	if _, err := l.AppendMarker(Marker{ProducerID: 7, ProducerEpoch: 4, Commit: true, TransactionVersion: 2}, 0); err != nil {
		t.Fatalf("retried version 2 marker: %v", err)
	}
	if _, err := l.AppendMarker(Marker{ProducerID: 7, ProducerEpoch: 3}, 0); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("classic marker below the producer's epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	mustAppend(t, l, logtest.ProducerBatch(e.clk.UnixMilli(), 7, 4, 0, 1, true), 0)
	if _, err := l.AppendMarker(Marker{ProducerID: 7, ProducerEpoch: 4}, 0); err != nil {
		t.Fatalf("classic marker at the producer's epoch: %v", err)
	}
}
