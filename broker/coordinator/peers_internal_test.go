package coordinator

import (
	"context"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/broker/wire/wiretest"
	"github.com/klogdev/klog/internal/testkit"
)

func addPartitionsRequest() *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(5)
	rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
	rt.TransactionalID = "t"
	req.Transactions = append(req.Transactions, rt)
	return req
}

// TestPeersRequest: a response is matched by correlation id and decoded
// past the tagged fields of a flexible header; a wrong correlation id
// fails the request and closes the connection, and the next request dials
// again; an unknown node is unavailable without a dial; a cancelled
// context ends a request the node does not answer.
func TestPeersRequest(t *testing.T) {
	var wrongCorrelation, stall atomic.Bool
	f := wiretest.Serve(t, func(h wire.Header) []byte {
		if stall.Load() {
			return nil
		}
		resp := kmsg.NewPtrAddPartitionsToTxnResponse()
		resp.SetVersion(h.Version)
		resp.ThrottleMillis = 7
		corr := h.CorrelationID
		if wrongCorrelation.Load() {
			corr++
		}
		b := binary.BigEndian.AppendUint32(nil, uint32(corr))
		b = append(b, 1, 5, 2, 0xaa, 0xbb) // one header tag: 5, two bytes
		return resp.AppendTo(b)
	})
	p := NewPeers(0, func(id int32) (string, bool) { return f.Addr, id == 1 }, nil, wire.DialConfig{})
	defer p.Close()
	ctx := testkit.Context(t)

	for range 2 {
		resp, err := p.Request(ctx, 1, addPartitionsRequest())
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.(*kmsg.AddPartitionsToTxnResponse).ThrottleMillis; got != 7 {
			t.Fatalf("decoded throttle %d, want 7", got)
		}
	}
	if got := f.Accepts.Load(); got != 1 {
		t.Fatalf("%d connections for two requests, want 1", got)
	}

	wrongCorrelation.Store(true)
	if _, err := p.Request(ctx, 1, addPartitionsRequest()); !errors.Is(err, ErrPeerUnavailable) {
		t.Fatalf("a wrong correlation id: %v, want ErrPeerUnavailable", err)
	}
	wrongCorrelation.Store(false)
	if _, err := p.Request(ctx, 1, addPartitionsRequest()); err != nil {
		t.Fatal(err)
	}
	if got := f.Accepts.Load(); got != 2 {
		t.Fatalf("%d connections after a failed exchange, want 2 (a new dial)", got)
	}

	if _, err := p.Request(ctx, 2, addPartitionsRequest()); !errors.Is(err, ErrPeerUnavailable) {
		t.Fatalf("an unknown node: %v, want ErrPeerUnavailable", err)
	}

	stall.Store(true)
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := p.Request(cctx, 1, addPartitionsRequest()); !errors.Is(err, ErrPeerUnavailable) {
		t.Fatalf("a stalled node: %v, want ErrPeerUnavailable", err)
	}
	if d := time.Since(start); d > testkit.HangBound {
		t.Fatalf("a stalled request took %v after its context ended", d)
	}
}

// TestPeersIsolated: the node's fault switch cuts the peers' open
// connection and refuses new dials until healed.
func TestPeersIsolated(t *testing.T) {
	f := wiretest.Serve(t, func(h wire.Header) []byte {
		resp := kmsg.NewPtrAddPartitionsToTxnResponse()
		resp.SetVersion(h.Version)
		return resp.AppendTo(append(binary.BigEndian.AppendUint32(nil, uint32(h.CorrelationID)), 0))
	})
	cut := &wire.Switch{}
	p := NewPeers(0, func(int32) (string, bool) { return f.Addr, true }, cut, wire.DialConfig{})
	defer p.Close()
	ctx := testkit.Context(t)
	if _, err := p.Request(ctx, 1, addPartitionsRequest()); err != nil {
		t.Fatal(err)
	}
	if n := cut.Isolate(); n != 1 {
		t.Fatalf("Isolate cut %d connections, want the peers' one", n)
	}
	// The first request finds its connection closed, the next cannot dial.
	if _, err := p.Request(ctx, 1, addPartitionsRequest()); !errors.Is(err, ErrPeerUnavailable) {
		t.Fatalf("a request on the cut connection: %v, want ErrPeerUnavailable", err)
	}
	if _, err := p.Request(ctx, 1, addPartitionsRequest()); !errors.Is(err, ErrPeerUnavailable) || !errors.Is(err, wire.ErrIsolated) {
		t.Fatalf("a request while isolated: %v, want ErrPeerUnavailable and wire.ErrIsolated", err)
	}
	if got := f.Accepts.Load(); got != 1 {
		t.Fatalf("%d connections accepted while isolated, want the first only", got)
	}
	cut.Heal()
	if _, err := p.Request(ctx, 1, addPartitionsRequest()); err != nil {
		t.Fatalf("a request once healed: %v", err)
	}
}
