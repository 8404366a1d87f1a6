package wire_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/broker/wire/wiretest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestConnDo: the client id is sent; ApiVersions is read with header v0
// and other flexible responses past their header tags; a wrong
// correlation id is wire.ErrBadResponse, a frame over MaxFrame is
// wire.ErrFrameTooLarge, and a request nobody answers ends at its timeout or
// when its context is cancelled, whichever is first.
func TestConnDo(t *testing.T) {
	var clientID atomic.Value
	addr := wiretest.Serve(t, func(h wire.Header) []byte {
		clientID.Store(*h.ClientID)
		b := binary.BigEndian.AppendUint32(nil, uint32(h.CorrelationID))
		switch h.Key {
		case kmsg.ApiVersions.Int16():
			resp := kmsg.NewPtrApiVersionsResponse()
			resp.SetVersion(h.Version)
			resp.ThrottleMillis = 3
			return resp.AppendTo(b)
		case kmsg.Metadata.Int16(): // correlation id off by one
			return append(binary.BigEndian.AppendUint32(nil, uint32(h.CorrelationID+1)), 0, 0, 0, 0)
		case kmsg.FindCoordinator.Int16(): // too large
			return make([]byte, 2<<10)
		case kmsg.Heartbeat.Int16(): // never answered
			return nil
		}
		resp := kmsg.NewPtrAddPartitionsToTxnResponse()
		resp.SetVersion(h.Version)
		resp.ThrottleMillis = 7
		return resp.AppendTo(append(b, 1, 5, 2, 0xaa, 0xbb)) // one header tag
	}).Addr
	ctx := context.Background()
	dial := func() *wire.Conn {
		c, err := wire.Dial(ctx, addr, wire.DialConfig{ClientID: wire.PeerClientID(4), Timeout: time.Second, MaxFrame: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c := dial()
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	resp, err := c.Do(ctx, av, time.Second)
	if err != nil || resp.(*kmsg.ApiVersionsResponse).ThrottleMillis != 3 {
		t.Fatalf("ApiVersions v3: %v, %v", resp, err)
	}
	if id := clientID.Load().(string); !wire.IsPeerClientID(id) || id != "klog-broker-4" {
		t.Fatalf("client id %q", id)
	}
	apt := kmsg.NewPtrAddPartitionsToTxnRequest()
	apt.SetVersion(5)
	for range 2 {
		resp, err := c.Do(ctx, apt, time.Second)
		if err != nil || resp.(*kmsg.AddPartitionsToTxnResponse).ThrottleMillis != 7 {
			t.Fatalf("AddPartitionsToTxn v5: %v, %v", resp, err)
		}
	}

	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	if _, err := dial().Do(ctx, md, time.Second); !errors.Is(err, wire.ErrBadResponse) {
		t.Fatalf("a wrong correlation id: %v, want wire.ErrBadResponse", err)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.SetVersion(4)
	if _, err := dial().Do(ctx, fc, time.Second); !errors.Is(err, wire.ErrFrameTooLarge) {
		t.Fatalf("a frame over MaxFrame: %v, want wire.ErrFrameTooLarge", err)
	}

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.SetVersion(4)
	start := time.Now()
	if _, err := dial().Do(ctx, hb, 50*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("an unanswered request: %v, want a timeout", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := dial().Do(cctx, hb, time.Hour); err == nil {
		t.Fatal("a cancelled request succeeded")
	}
	if d := time.Since(start); d > testkit.HangBound {
		t.Fatalf("the two unanswered requests took %v", d)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// fetchServer answers every Fetch with records bytes of record data in
// one partition, the byte at index 0 counting the fetches answered.
// One connection at a time: the answer is encoded into one buffer.
func fetchServer(t testing.TB, records int) string {
	var fetches atomic.Int32
	data := make([]byte, records)
	var b []byte
	return wiretest.Serve(t, func(h wire.Header) []byte {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(h.Version)
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchResponseTopicPartition()
		data[0] = byte(fetches.Add(1))
		rp.RecordBatches = data
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		b = binary.BigEndian.AppendUint32(b[:0], uint32(h.CorrelationID))
		if resp.IsFlexible() {
			b = append(b, 0)
		}
		b = resp.AppendTo(b)
		return b
	}).Addr
}

func fetchReq() *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	return req
}

func fetchedBatches(t testing.TB, resp kmsg.Response) []byte {
	fr := resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch response %+v", fr)
	}
	return fr.Topics[0].Partitions[0].RecordBatches
}

// TestConnDoReused: DoReused reads each answer into the buffer of the
// one before it (what that one pointed to is overwritten), and Do never
// does.
func TestConnDoReused(t *testing.T) {
	ctx := context.Background()
	c, err := wire.Dial(ctx, fetchServer(t, 64<<10), wire.DialConfig{ClientID: "test", Timeout: time.Second, MaxFrame: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.DoReused(ctx, fetchReq(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	first := fetchedBatches(t, resp)
	if first[0] != 1 {
		t.Fatalf("first answer's data %d, want 1", first[0])
	}
	if resp, err = c.DoReused(ctx, fetchReq(), time.Second); err != nil {
		t.Fatal(err)
	}
	second := fetchedBatches(t, resp)
	if second[0] != 2 || &first[0] != &second[0] {
		t.Fatalf("second answer's data %d at %p, want 2 in the first one's buffer at %p", second[0], &second[0], &first[0])
	}
	if resp, err = c.Do(ctx, fetchReq(), time.Second); err != nil {
		t.Fatal(err)
	}
	if third := fetchedBatches(t, resp); third[0] != 3 || second[0] != 2 || &third[0] == &second[0] {
		t.Fatalf("Do read into the reused buffer: data %d, the one before %d", third[0], second[0])
	}
}

// BenchmarkConnFetch is a follower's fetch of 1 MiB of records from its
// leader, each answer read into a new buffer (Do) or into the one before
// (DoReused, what the replica fetcher uses).
func BenchmarkConnFetch(b *testing.B) {
	for _, reuse := range []bool{false, true} {
		name := "Do"
		if reuse {
			name = "DoReused"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			c, err := wire.Dial(ctx, fetchServer(b, 1<<20), wire.DialConfig{ClientID: "test", Timeout: time.Second, MaxFrame: 2 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for range b.N {
				do := c.Do
				if reuse {
					do = c.DoReused
				}
				if _, err := do(ctx, fetchReq(), time.Second); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
