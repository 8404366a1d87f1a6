package broker_test

import (
	"encoding/binary"
	"runtime"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/brokertest"
)

// waitFor polls cond until it holds, failing the test after bound.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", bound, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A size prefix alone must not make the node allocate what it claims:
// request memory is taken as the bytes arrive (issue 9, slowloris).
func TestClaimedFrameSizeIsNotAllocated(t *testing.T) {
	n := brokertest.Start(t)
	const (
		conns   = 8
		claimed = 100 << 20 // socket.request.max.bytes
		sent    = 16
	)
	before := heapAlloc()
	for range conns {
		r := dialRaw(t, n.Addr())
		msg := binary.BigEndian.AppendUint32(nil, claimed)
		msg = append(msg, make([]byte, sent)...)
		if _, err := r.c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "node has not read the bytes sent", func() bool {
		return n.Broker().QueuedRequestBytes() == conns*sent
	})
	grown := int64(heapAlloc()) - int64(before)
	if grown > 32<<20 {
		t.Fatalf("heap grew by %d MiB for %d frames of which %d bytes arrived", grown>>20, conns, conns*sent)
	}
}
