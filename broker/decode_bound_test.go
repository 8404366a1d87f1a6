package broker_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/testkit"
)

// emptyTopicsMetadata is a Metadata v1 request naming topics empty topic
// names: 2 bytes a topic, each decoding into a struct and a string header
// (issue 26: 10 MiB of them decoded into about 700 MB).
func emptyTopicsMetadata(topics int) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 1
	req.Topics = make([]kmsg.MetadataRequestTopic, topics)
	for i := range req.Topics {
		req.Topics[i].Topic = new(string)
	}
	return req
}

// A request is charged to the request pool (queued.max.request.bytes) for
// what it decodes into, not only for its bytes: while a Metadata request
// naming many empty topics is handled, the pool holds at least what its
// topics decoded into, many times its bytes.
func TestRequestChargedByWhatItDecodesInto(t *testing.T) {
	c := brokertest.New(t,
		brokertest.Config("queued.max.request.bytes", strconv.Itoa(64<<20)),
		brokertest.Config("socket.request.max.bytes", strconv.Itoa(8<<20)))
	n := c.Nodes()[0]
	const topics = 100_000
	entered, release := make(chan int64, 1), make(chan struct{})
	c.Control(kmsg.Metadata, func(_ context.Context, _ int32, req kmsg.Request) (kmsg.Response, bool, error) {
		if m := req.(*kmsg.MetadataRequest); len(m.Topics) == topics {
			entered <- wire.DecodedSize(req)
			<-release
		}
		return nil, false, nil
	})
	r := dialRaw(t, n.Addr())
	req := emptyTopicsMetadata(topics)
	body := req.AppendTo(nil)
	r.send(req.Key(), req.Version, 1, false, body)
	decoded := <-entered
	held := n.Broker().QueuedRequestBytes()
	close(release)
	if _, _, err := r.recv(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes decoded into %d; the pool held %d", len(body), decoded, held)
	if decoded < 10*int64(len(body)) {
		t.Fatalf("%d bytes decoded into only %d: not the request this test needs", len(body), decoded)
	}
	if held < int64(len(body))+decoded {
		t.Fatalf("the pool held %d bytes while a request of %d bytes that decoded into %d was handled", held, len(body), decoded)
	}
	testkit.WaitFor(t, "the pool to be given back", func() (bool, string) {
		got := n.Broker().QueuedRequestBytes()
		return got == 0, fmt.Sprintf("%d bytes held", got)
	})
}

// A request that may decode into more than the request pool can ever
// hold is not decoded, nor even read: its connection closes, as for a
// request larger than socket.request.max.bytes, and the node serves the
// next client.
// A Produce that large is decoded, alone: its records decode into
// nothing.
func TestRequestDecodingPastThePoolIsRefused(t *testing.T) {
	const pool = 16 << 20
	c := brokertest.New(t,
		brokertest.Config("queued.max.request.bytes", strconv.Itoa(pool)),
		brokertest.Config("socket.request.max.bytes", strconv.Itoa(8<<20)),
		brokertest.Config("socket.request.progress.timeout.ms", "60000"))
	n := c.Nodes()[0]
	var decoded atomic.Int64
	c.Control(kmsg.Metadata, func(_ context.Context, _ int32, req kmsg.Request) (kmsg.Response, bool, error) {
		decoded.Add(1)
		return nil, false, nil
	})
	r := dialRaw(t, n.Addr())
	req := emptyTopicsMetadata(2 << 20) // 4 MiB, decoding into about 100 MiB
	// The node closes the connection after the frame's first bytes: the
	// rest of the write may fail.
	go r.c.Write(rawFrame(req.Key(), req.Version, 1, false, req.AppendTo(nil)))
	closedWithin(t, r, 10*time.Second)
	if got := decoded.Load(); got != 0 {
		t.Fatalf("the request was decoded (%d)", got)
	}
	testkit.WaitFor(t, "the pool to be given back", func() (bool, string) {
		got := n.Broker().QueuedRequestBytes()
		return got == 0, fmt.Sprintf("%d bytes held", got)
	})

	// Nor one whose bound fits the pool but not beside its own frame: it
	// would wait for the pool until the progress timeout.
	topics := 200_000 // a bound of about 12 MiB: the 16 MiB pool holds it
	frame := func(topics int) []byte {
		req := emptyTopicsMetadata(topics)
		return rawFrame(req.Key(), req.Version, 1, false, req.AppendTo(nil))
	}
	for {
		f := frame(topics)
		bound := wire.DecodeBound(kmsg.Metadata.Int16(), 1, len(f)-4)
		if bound > pool {
			t.Fatalf("no Metadata request whose bound fits the pool only without its frame")
		}
		if bound+int64(len(f)-4) > pool {
			break
		}
		topics += 4 << 10
	}
	r = dialRaw(t, n.Addr())
	go r.c.Write(frame(topics))
	closedWithin(t, r, 10*time.Second)
	if got := decoded.Load(); got != 0 {
		t.Fatalf("the request was decoded (%d)", got)
	}

	// A Produce of empty topics that decodes into more than the pool is
	// not handled: real records decode into nothing.
	var produced atomic.Int64
	c.Control(kmsg.Produce, func(context.Context, int32, kmsg.Request) (kmsg.Response, bool, error) {
		produced.Add(1)
		return nil, false, nil
	})
	empty := kmsg.NewPtrProduceRequest()
	empty.Version = 12
	empty.Acks = 1
	empty.TimeoutMillis = 5000
	empty.Topics = make([]kmsg.ProduceRequestTopic, 400_000) // 1.2 MB, decoding into 25 MB
	r = dialRaw(t, n.Addr())
	go r.c.Write(rawFrame(empty.Key(), empty.Version, 1, true, empty.AppendTo(nil)))
	closedWithin(t, r, 10*time.Second)
	if got := produced.Load(); got != 0 {
		t.Fatalf("the produce was handled (%d)", got)
	}

	// A Produce of 6 MiB of records, whose bound is far past the pool.
	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 9
	produce.Acks = 1
	produce.TimeoutMillis = 5000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "unknown"
	part := kmsg.NewProduceRequestTopicPartition()
	part.Records = make([]byte, 6<<20)
	topic.Partitions = append(topic.Partitions, part)
	produce.Topics = append(produce.Topics, topic)
	if bound := wire.DecodeBound(produce.Key(), produce.Version, len(produce.AppendTo(nil))); bound <= pool {
		t.Fatalf("a produce of 6 MiB is bound at %d bytes, within the pool: not the request this test needs", bound)
	}
	r = dialRaw(t, n.Addr())
	resp, err := r.do(produce)
	if err != nil {
		t.Fatalf("produce of 6 MiB: %v", err)
	}
	t.Logf("produce of 6 MiB answered: %+v", resp.(*kmsg.ProduceResponse).Topics)
	m := kmsg.NewPtrMetadataRequest()
	m.Version = 1
	if _, err := r.do(m); err != nil {
		t.Fatalf("metadata after: %v", err)
	}
	testkit.WaitFor(t, "the pool to be given back", func() (bool, string) {
		got := n.Broker().QueuedRequestBytes()
		return got == 0, fmt.Sprintf("%d bytes held", got)
	})
}

// A DeleteTopics request naming one topic a million times costs its
// handler about what it decoded into, not several times that: the
// handler's work, counted nowhere but in the request's decode bound,
// stays within it.
func TestDeleteTopicsOfOneNameRepeated(t *testing.T) {
	n := brokertest.Start(t)
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 4
	req.TimeoutMillis = 5000
	req.TopicNames = make([]string, 1<<20)
	r := dialRaw(t, n.Addr())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kresp, err := r.do(req) // its encoding counts too: a few MiB
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	resp := kresp.(*kmsg.DeleteTopicsResponse)
	if len(resp.Topics) != 1 {
		t.Fatalf("%d topics answered, want 1", len(resp.Topics))
	}
	bound := wire.DecodeBound(req.Key(), req.Version, len(req.AppendTo(nil)))
	got := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("%d names: %d bytes allocated, the request's bound %d", len(req.TopicNames), got, bound)
	if got > bound {
		t.Fatalf("%d bytes allocated for a request bound at %d", got, bound)
	}
}

// A request stalled within its first 8 bytes, where the node reads the
// size, key and version to refuse it early, closes after one progress
// timeout, not after one for the early look and another for the read.
func TestRequestStalledInItsHeaderClosesOnce(t *testing.T) {
	const timeout = 3 * time.Second
	n := brokertest.Start(t, brokertest.Config("socket.request.progress.timeout.ms", strconv.Itoa(int(timeout.Milliseconds()))))
	r := dialRaw(t, n.Addr())
	if _, err := r.c.Write([]byte{0, 0, 0, 100, 0, 18}); err != nil { // size, key: no version
		t.Fatal(err)
	}
	if took := closedWithin(t, r, timeout+2*time.Second); took < timeout {
		t.Fatalf("closed after %v, before the %v timeout", took, timeout)
	}
}
