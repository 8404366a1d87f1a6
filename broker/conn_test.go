package broker_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
)

// closedWithin reads from r until the node closes the connection and
// returns how long that took; the test fails if it stays open for bound.
func closedWithin(t *testing.T, r *rawConn, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	r.c.SetReadDeadline(start.Add(bound))
	buf := make([]byte, 4096)
	for {
		if _, err := r.c.Read(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("connection still open after %v", bound)
			}
			return time.Since(start)
		}
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
	testkit.WaitFor(t, "the node to have read the bytes sent", func() (bool, string) {
		got := n.Broker().QueuedRequestBytes()
		return got == conns*sent, fmt.Sprintf("%d bytes queued", got)
	})
	grown := int64(heapAlloc()) - int64(before)
	if grown > 32<<20 {
		t.Fatalf("heap grew by %d MiB for %d frames of which %d bytes arrived", grown>>20, conns, conns*sent)
	}
}

// An incomplete request that makes no progress closes the connection after
// socket.request.progress.timeout.ms.
func TestStalledRequestClosesConnection(t *testing.T) {
	const timeout = 200 * time.Millisecond
	n := brokertest.Start(t, brokertest.Config("socket.request.progress.timeout.ms", strconv.Itoa(int(timeout.Milliseconds()))))
	r := dialRaw(t, n.Addr())
	msg := binary.BigEndian.AppendUint32(nil, 100)
	msg = append(msg, 0, 18, 0, 0, 0) // a few bytes of an ApiVersions header
	if _, err := r.c.Write(msg); err != nil {
		t.Fatal(err)
	}
	if took := closedWithin(t, r, 10*time.Second); took < timeout {
		t.Fatalf("closed after %v, before the %v timeout", took, timeout)
	}
	testkit.WaitFor(t, "the pool to release the stalled request's bytes", func() (bool, string) {
		got := n.Broker().QueuedRequestBytes()
		return got == 0, fmt.Sprintf("%d bytes queued", got)
	})
}

// A request that arrives slowly but steadily is served: the timeout is on
// progress, not on the whole request. Its bytes come one at a time, 30 ms
// apart, for longer than the 3 s timeout in all: a gap that a busy machine
// stretched to the timeout (100 times as long) would close the
// connection, so the window is wide enough to be certain.
func TestTricklingRequestIsServed(t *testing.T) {
	const (
		timeout = 3 * time.Second
		gap     = 30 * time.Millisecond
	)
	n := brokertest.Start(t, brokertest.Config("socket.request.progress.timeout.ms", strconv.Itoa(int(timeout.Milliseconds()))))
	r := dialRaw(t, n.Addr())
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = strings.Repeat("k", 120) // bytes enough to outlast the timeout
	req.ClientSoftwareVersion = "1"
	frame := rawFrame(18, 3, 5, true, req.AppendTo(nil))
	if lasts := time.Duration(len(frame)-1) * gap; lasts <= timeout {
		t.Fatalf("a %d-byte trickle lasts %v, not longer than the %v timeout", len(frame), lasts, timeout)
	}
	tick := time.NewTicker(gap)
	defer tick.Stop()
	for i := range frame {
		<-tick.C
		if _, err := r.c.Write(frame[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	corr, _, err := r.recv()
	if err != nil {
		t.Fatalf("trickled request: %v", err)
	}
	if corr != 5 {
		t.Fatalf("correlation id %d", corr)
	}
}

// Large frames sent partly and stalled hold the request pool to its limit,
// yet a new client is served at once: small frames do not wait behind
// them (issue 9, hostile probe slowloris, where a client's ApiVersions
// waited for the pool until the progress timeout closed it).
//
// The stalled frames must hold the pool from the first look until the
// client is served, however slow the machine: the progress timeout that
// would close them is longer than the test can last (testkit's waits and
// contexts end it well before), so it never fires. A node that made small
// frames wait behind them would then keep the client waiting until its
// context ends, and the test fails.
func TestSmallRequestsPassStalledLargeOnes(t *testing.T) {
	const (
		pool  = 8 << 20 // queued.max.request.bytes
		frame = 4 << 20 // socket.request.max.bytes
		never = time.Hour
	)
	n := brokertest.Start(t,
		brokertest.Config("queued.max.request.bytes", strconv.Itoa(pool)),
		brokertest.Config("socket.request.max.bytes", strconv.Itoa(frame)),
		brokertest.Config("socket.request.progress.timeout.ms", strconv.Itoa(int(never.Milliseconds()))))
	ctx := testkit.Context(t)
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	stall := func(sent int) {
		r := dialRaw(t, n.Addr())
		msg := append(binary.BigEndian.AppendUint32(nil, frame), make([]byte, sent)...)
		// The node may stop reading; the write ends at cleanup.
		go r.c.Write(msg)
	}
	// A frame's buffer grows by doubling as its bytes arrive, so 3 MiB of
	// a 4 MiB frame hold 3 to 4 MiB of the pool, depending on how the
	// bytes came: two such frames leave at most 2 MiB, and a third one
	// sent as far cannot fit beside them. Its wait for the pool is the
	// state the test needs: the pool held by large frames.
	b := n.Broker()
	held := func() (bool, string) {
		return b.RequestsWaitingForTest() > 0, fmt.Sprintf("%d bytes queued, %d large frames waiting", b.QueuedRequestBytes(), b.RequestsWaitingForTest())
	}
	for range 3 {
		stall(3 << 20)
	}
	testkit.WaitFor(t, "a stalled frame to wait for the pool", held)

	start := time.Now()
	cl := n.Client()
	adm := kadm.NewClient(cl)
	if _, err := adm.ApiVersions(ctx); err != nil {
		t.Fatalf("ApiVersions with the pool held: %v after %v", err, time.Since(start))
	}
	if _, err := adm.Metadata(ctx, "t"); err != nil {
		t.Fatalf("Metadata with the pool held: %v after %v", err, time.Since(start))
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce with the pool held: %v after %v", err, time.Since(start))
	}
	t.Logf("served in %v with the pool held", time.Since(start))
	if ok, seen := held(); !ok {
		t.Fatalf("the stalled frames let go of the pool while the client was served: %s", seen)
	}
}

// A connection that sends nothing closes after connections.max.idle.ms,
// whether or not it sent requests before; the progress timeout applies
// only within a request.
func TestIdleConnectionCloses(t *testing.T) {
	const idle = 600 * time.Millisecond
	n := brokertest.Start(t,
		brokertest.Config("connections.max.idle.ms", strconv.Itoa(int(idle.Milliseconds()))),
		brokertest.Config("socket.request.progress.timeout.ms", "50"))

	// The node's clock starts at accept, a little before dialRaw returns
	// and this test's clock starts: allow for it, as below.
	silent := dialRaw(t, n.Addr())
	if took := closedWithin(t, silent, 10*time.Second); took < idle-50*time.Millisecond {
		t.Fatalf("silent connection closed after %v, before connections.max.idle.ms %v", took, idle)
	}

	used := dialRaw(t, n.Addr())
	used.send(18, 0, 1, false, nil)
	if _, _, err := used.recv(); err != nil {
		t.Fatal(err)
	}
	if took := closedWithin(t, used, 10*time.Second); took < idle-50*time.Millisecond {
		t.Fatalf("connection closed %v after its last response, before connections.max.idle.ms %v", took, idle)
	}
}

// Connections over max.connections.per.ip or max.connections are closed as
// they are accepted; the ones already open keep working, and a slot freed
// by a close is given to the next connection.
func TestConnectionLimits(t *testing.T) {
	for _, key := range []string{"max.connections.per.ip", "max.connections"} {
		t.Run(key, func(t *testing.T) {
			n := brokertest.Start(t, brokertest.Config(key, "2"))
			first, second := dialRaw(t, n.Addr()), dialRaw(t, n.Addr())
			for i, r := range []*rawConn{first, second} {
				r.send(18, 0, int32(i), false, nil)
				if _, _, err := r.recv(); err != nil {
					t.Fatalf("connection %d within the limit: %v", i, err)
				}
			}
			closedWithin(t, dialRaw(t, n.Addr()), 10*time.Second)
			second.send(18, 0, 3, false, nil)
			if _, _, err := second.recv(); err != nil {
				t.Fatalf("open connection after a refused one: %v", err)
			}

			first.c.Close()
			testkit.WaitFor(t, "a connection admitted after one closed", func() (bool, string) {
				r := dialRaw(t, n.Addr())
				defer r.c.Close()
				r.c.SetDeadline(time.Now().Add(5 * time.Second))
				r.send(18, 0, 4, false, nil)
				if _, _, err := r.recv(); err != nil {
					return false, err.Error()
				}
				return true, ""
			})
		})
	}
}

// Clients that pipeline fetches and never read the responses are not read
// any further once their responses hold the per-connection bound (issue 9,
// slow readers): the node holds one response each, and a normal client is
// still served. The node's bound is TestFetchStaysWithinResponseBudget's.
func TestSlowReadersAreNotRead(t *testing.T) {
	for _, bound := range []string{"klog.queued.max.response.bytes.per.connection"} {
		t.Run(bound, func(t *testing.T) {
			ctx := testkit.Context(t)
			n := brokertest.Start(t, brokertest.Config(bound, "1"))
			cl := nameClient(n)
			const slow = 3
			var slowConns []*rawConn
			for range slow {
				slowConns = append(slowConns, slowReader(ctx, t, n, cl))
			}
			b := n.Broker()
			testkit.WaitFor(t, "the slow readers to be paused", func() (bool, string) {
				return b.PausedConnections() == slow, fmt.Sprintf("%d paused, %d response bytes queued", b.PausedConnections(), b.QueuedResponseBytes())
			})
			// A response may sit in a pooled buffer up to twice its size.
			if got, most := b.QueuedResponseBytes(), int64(slow*2*slowResponseMax); got > most {
				t.Errorf("%d response bytes queued for %d paused connections, want at most one response each (%d)", got, slow, most)
			}

			resp, err := fetchRequest("big", 1, 1<<20, 1<<20).RequestWith(ctx, cl)
			if err != nil {
				t.Fatalf("normal client beside slow readers: %v", err)
			}
			if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) < slowBatchSize {
				t.Fatalf("normal client got error %d and %d bytes", p.ErrorCode, len(p.RecordBatches))
			}

			for _, r := range slowConns {
				r.c.Close()
			}
			testkit.WaitFor(t, "the slow readers' responses to be dropped", func() (bool, string) {
				return b.QueuedResponseBytes() == 0 && b.PausedConnections() == 0, fmt.Sprintf("%d paused, %d response bytes queued", b.PausedConnections(), b.QueuedResponseBytes())
			})
		})
	}
}

// Fetches read record data only within the node's response budget
// (klog.queued.max.response.bytes): with many slow readers of big batches
// the node holds about the budget, not a response per connection; a fetch
// under the full budget returns without data instead of growing memory;
// and once the slow readers are gone a consumer gets a batch larger than
// the whole budget, the first batch KIP-74 always returns.
func TestFetchStaysWithinResponseBudget(t *testing.T) {
	ctx := testkit.Context(t)
	const budget = 2 << 20
	n := brokertest.Start(t,
		brokertest.Config("klog.queued.max.response.bytes", strconv.Itoa(budget)),
		// The slow readers hold the budget for the whole test.
		brokertest.Config("socket.request.progress.timeout.ms", "600000"))
	cl := nameClient(n)
	const slow = 8
	// Long polls: a fetch the budget has no room for parks.
	slowReq := fetchRequest("big", 1, 1<<20, 1<<20)
	slowReq.MinBytes, slowReq.MaxWaitMillis = 1, 30000
	var slowConns []*rawConn
	for range slow {
		slowConns = append(slowConns, slowReaderOf(ctx, t, n, cl, slowReq))
	}
	b := n.Broker()
	// Past the budget: one first batch taken while nothing else held it,
	// counted twice while it is encoded, and a pooled buffer per slow
	// reader (a small response's, or a parked fetch's).
	most := int64(max(budget, 2*slowResponseMax) + slow*64<<10)
	var peak int64
	testkit.WaitFor(t, "the slow readers to be paused or parked", func() (bool, string) {
		got := b.QueuedResponseBytes()
		peak = max(peak, got)
		paused, parked := b.PausedConnections(), b.ParkedFetches()
		return paused+parked == slow, fmt.Sprintf("%d paused, %d parked, %d response bytes reserved", paused, parked, got)
	})
	if peak > most {
		t.Fatalf("%d response bytes reserved for %d slow readers, want at most %d (budget %d)", peak, slow, most, budget)
	}

	req := fetchRequest("big", 1, 1<<20, 1<<20)
	req.MinBytes, req.MaxWaitMillis = 1, 100
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("fetch under a full budget: %v", err)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("fetch under a full budget got error %d and %d bytes, want no data", p.ErrorCode, len(p.RecordBatches))
	}
	if got := b.QueuedResponseBytes(); got > most {
		t.Fatalf("%d response bytes reserved after a fetch under a full budget, want at most %d", got, most)
	}

	for _, r := range slowConns {
		r.c.Close()
	}
	testkit.WaitFor(t, "the slow readers' responses to be dropped", func() (bool, string) {
		return b.QueuedResponseBytes() == 0, fmt.Sprintf("%d response bytes reserved", b.QueuedResponseBytes())
	})
	maxMessage := strconv.Itoa(4 * budget)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": &maxMessage}, "huge"); err != nil {
		t.Fatal(err)
	}
	const hugeBatch = 3 * budget / 2
	if p := produceRaw(ctx, t, cl, "huge", 0, logtest.Batch(logtest.Values(1, hugeBatch)...)); p.ErrorCode != 0 {
		t.Fatalf("produce of a batch larger than the budget: error %d", p.ErrorCode)
	}
	// Requests the slow readers pipelined may still be answered (into
	// closed sockets) for a moment: the consumer is delayed, not stuck.
	testkit.WaitFor(t, "a batch larger than the budget", func() (bool, string) {
		resp, err := fetchRequest("huge", 1, 1<<20, 1<<20).RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("fetch of a batch larger than the budget: %v", err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("fetch of a batch larger than the budget: error %d", p.ErrorCode)
		}
		return len(p.RecordBatches) >= hugeBatch, fmt.Sprintf("%d bytes", len(p.RecordBatches))
	})
	testkit.WaitFor(t, "the budget to be given back", func() (bool, string) {
		return b.QueuedResponseBytes() == 0, fmt.Sprintf("%d response bytes reserved", b.QueuedResponseBytes())
	})
}

// A response the client does not take for
// socket.request.progress.timeout.ms closes the connection, as a request
// that stops arriving does, and frees what it held: a slow reader holds
// the response budget that long at most, not for connections.max.idle.ms.
func TestStalledWriteClosesConnection(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("socket.request.progress.timeout.ms", "500"))
	slowReader(ctx, t, n, nameClient(n))
	b := n.Broker()
	testkit.WaitFor(t, "the slow reader to be paused", func() (bool, string) {
		return b.PausedConnections() == 1, fmt.Sprintf("%d paused", b.PausedConnections())
	})
	testkit.WaitFor(t, "the stalled write to close its connection", func() (bool, string) {
		return b.QueuedResponseBytes() == 0 && b.PausedConnections() == 0, fmt.Sprintf("%d paused, %d response bytes queued", b.PausedConnections(), b.QueuedResponseBytes())
	})
}

// slowBatchSize is the batch slowReader fetches; slowResponseMax bounds the
// buffer of one response carrying it.
const (
	slowBatchSize   = 600 << 10
	slowResponseMax = slowBatchSize + 64<<10
)

// slowReader produces a batch of slowBatchSize to partition 0 of topic
// "big" (created on first use) and returns a connection that asks for it
// 40 times, pipelined, far more than the socket buffers between the node
// and the client hold, and never reads.
func slowReader(ctx context.Context, t *testing.T, n *brokertest.Node, cl *kgo.Client) *rawConn {
	t.Helper()
	return slowReaderOf(ctx, t, n, cl, fetchRequest("big", 1, 1<<20, 1<<20))
}

// slowReaderOf is slowReader sending req, a fetch of partition 0 of "big".
func slowReaderOf(ctx context.Context, t *testing.T, n *brokertest.Node, cl *kgo.Client, req *kmsg.FetchRequest) *rawConn {
	t.Helper()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "big"); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatal(err)
	}
	produceRaw(ctx, t, cl, "big", 0, logtest.Batch(logtest.Values(1, slowBatchSize)...))
	body := req.AppendTo(nil)
	var pipelined []byte
	for corr := range int32(40) {
		pipelined = append(pipelined, rawFrame(1, 12, corr, true, body)...)
	}
	r := dialRaw(t, n.Addr())
	r.c.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := r.c.Write(pipelined); err != nil {
		t.Fatal(err)
	}
	return r
}

// A produce waiting for its followers does not hold back the produces a
// client pipelined behind it on the same connection: their appends happen
// while it waits, and the answers still come back in the order asked.
func TestProduceWaitOverlapsPipelinedProduces(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(nameClient(n))
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "piped"); err != nil {
		t.Fatal(err)
	}
	// A follower in the ISR that never fetches: an acks=all produce
	// waits until the ISR shrinks back to the leader.
	p := n.Broker().PartitionForTest("piped", 0)
	st := p.LeaderState()
	alone := st
	st.Replicas = append(slices.Clone(st.Replicas), 1)
	st.ISR = append(slices.Clone(st.ISR), 1)
	p.SetLeaderState(st)

	r := dialRaw(t, n.Addr())
	r.c.SetDeadline(time.Now().Add(2 * testkit.WaitTimeout))
	produce := func(corr int32, acks int16, value string) {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(9)
		req.Acks, req.TimeoutMillis = acks, int32(2*testkit.WaitTimeout/time.Millisecond)
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "piped"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = rawBatch(value)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		r.send(req.Key(), req.GetVersion(), corr, true, req.AppendTo(nil))
	}
	produce(1, -1, "waits for the follower")
	produce(2, 1, "pipelined behind it")
	testkit.WaitFor(t, "the pipelined produce appended while the first waits", func() (bool, string) {
		end := p.LogEndOffset()
		return end == 2, fmt.Sprintf("log end offset %d", end)
	})
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d while the follower has fetched nothing, want 0", hw)
	}
	p.SetLeaderState(alone)

	for i, want := range []struct {
		corr   int32
		offset int64
	}{{1, 0}, {2, 1}} {
		corr, body, err := r.recv()
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(9)
		if err := resp.ReadFrom(body[1:]); err != nil { // body[0]: the flexible header's tags
			t.Fatal(err)
		}
		sp := resp.Topics[0].Partitions[0]
		if corr != want.corr || sp.ErrorCode != 0 || sp.BaseOffset != want.offset {
			t.Fatalf("answer %d: correlation id %d, %v, base offset %d; want correlation id %d, no error, base offset %d",
				i, corr, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, want.corr, want.offset)
		}
	}
}
