package wire_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// fakeHandler serves every request kmsg knows with handle.
type fakeHandler struct {
	handle func(ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (wire.Reply, error)
}

func (h fakeHandler) Serves(key, version int16) bool {
	req := kmsg.RequestForKey(key)
	return req != nil && version >= 0 && version <= req.MaxVersion()
}

func (h fakeHandler) Unserved(rc *wire.RequestContext) (kmsg.Response, error) {
	return nil, errors.New("not served")
}

func (h fakeHandler) Handle(ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
	return h.handle(ctx, rc, req)
}

// respond answers req with its empty response.
func respond(req kmsg.Request) wire.Reply {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	return wire.Reply{Response: resp}
}

// testLimits are generous bounds, for a test to change.
func testLimits() wire.Limits {
	return wire.Limits{
		ProgressTimeout:        30 * time.Second,
		MaxIdle:                -1,
		MaxInflight:            16,
		MaxQueuedResponseBytes: 16 << 20,
		MaxConnections:         100,
		MaxConnectionsPerIP:    100,
	}
}

// serve starts a Server of h on loopback; the test's end stops it and
// waits for Serve to return.
func serve(t *testing.T, h wire.Handler, lim wire.Limits, maxRequest int32) (*wire.Server, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, ln, h, lim, func(cfg *wire.ServerConfig) { cfg.MaxRequestBytes = maxRequest })
}

// serveOn starts a Server of h on ln, its config changed by edit.
func serveOn(t *testing.T, ln net.Listener, h wire.Handler, lim wire.Limits, edit func(*wire.ServerConfig)) (*wire.Server, net.Listener) {
	t.Helper()
	cfg := wire.ServerConfig{
		Listener:        "TEST",
		MaxRequestBytes: 1 << 20,
		Requests:        wire.NewPool(64 << 20),
		Responses:       wire.NewPool(64 << 20),
		Limits:          func() wire.Limits { return lim },
	}
	edit(&cfg)
	s := wire.NewServer(cfg, h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		ln.Close()
		cancel()
		<-done
	})
	return s, ln
}

// client is a raw connection to a Server that pipelines requests.
type client struct {
	t  *testing.T
	nc net.Conn
	rd *bufio.Reader
	f  *kmsg.RequestFormatter
}

func dial(t *testing.T, ln net.Listener) *client {
	t.Helper()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, rd: bufio.NewReader(nc), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("test"))}
}

func (c *client) send(req kmsg.Request, corr int32) {
	c.t.Helper()
	if _, err := c.nc.Write(c.f.AppendRequest(nil, req, corr)); err != nil {
		c.t.Fatal(err)
	}
}

// recv returns the correlation id of the next response.
func (c *client) recv() (int32, error) {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	frame, _, err := wire.ReadFrame(c.rd, 1<<20, nil, nil)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(frame)), nil
}

// closed waits until the Server closes the connection, failing the test
// if it has not after 10 s, and returns how long that took.
func (c *client) closed() time.Duration {
	c.t.Helper()
	start := time.Now()
	c.nc.SetReadDeadline(start.Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c.rd)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatal("connection still open after 10 s")
	}
	return time.Since(start)
}

func produce() kmsg.Request {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.Acks = -1
	return req
}

func metadata() kmsg.Request {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(9)
	return req
}

// Answers are written in request order: a produce answered later
// (Reply.Later) holds back the answer of the produce pipelined after it,
// which is handled meanwhile; a request of another API is handled only
// once the deferred answer is ready.
func TestAnswersInOrderAroundADeferredAnswer(t *testing.T) {
	release := make(chan struct{})
	handled := make(chan int32, 3)
	var produces atomic.Int32
	_, ln := serve(t, fakeHandler{func(_ context.Context, rc *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		handled <- rc.Header.CorrelationID
		reply := respond(req)
		if req.Key() != kmsg.Produce.Int16() {
			select {
			case <-release:
			default:
				t.Errorf("request %d handled before the deferred answer was ready", rc.Header.CorrelationID)
			}
			return reply, nil
		}
		if produces.Add(1) == 1 {
			resp := reply.Response
			return wire.Reply{Later: func(context.Context) kmsg.Response {
				<-release
				return resp
			}}, nil
		}
		return reply, nil
	}}, testLimits(), 1<<20)
	c := dial(t, ln)
	c.send(produce(), 1)
	c.send(produce(), 2)
	c.send(metadata(), 3)
	// The second produce is handled while the first one's answer waits.
	for _, want := range []int32{1, 2} {
		if got := <-handled; got != want {
			t.Fatalf("handled request %d, want %d", got, want)
		}
	}
	close(release)
	if got := <-handled; got != 3 {
		t.Fatalf("handled request %d, want 3", got)
	}
	for _, want := range []int32{1, 2, 3} {
		got, err := c.recv()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("answer to request %d, want %d", got, want)
		}
	}
}

// A frame over the size bound (socket.request.max.bytes) closes its
// connection unread and unanswered; other connections are served.
func TestFrameOverTheBoundClosesTheConnection(t *testing.T) {
	var handled atomic.Int32
	_, ln := serve(t, fakeHandler{func(_ context.Context, _ *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		handled.Add(1)
		return respond(req), nil
	}}, testLimits(), 1024)
	c := dial(t, ln)
	var frame [8]byte
	binary.BigEndian.PutUint32(frame[:], 2048)
	binary.BigEndian.PutUint16(frame[4:], uint16(kmsg.Metadata))
	binary.BigEndian.PutUint16(frame[6:], 9)
	if _, err := c.nc.Write(frame[:]); err != nil {
		t.Fatal(err)
	}
	c.closed()
	if n := handled.Load(); n != 0 {
		t.Fatalf("%d requests handled", n)
	}

	other := dial(t, ln)
	other.send(metadata(), 7)
	if got, err := other.recv(); err != nil || got != 7 {
		t.Fatalf("next connection: answer %d, %v", got, err)
	}
}

// A connection that starts no request for connections.max.idle.ms is
// closed, whether or not it sent requests before.
func TestIdleConnectionCloses(t *testing.T) {
	const idle = 300 * time.Millisecond
	lim := testLimits()
	lim.MaxIdle = idle
	lim.ProgressTimeout = 50 * time.Millisecond
	_, ln := serve(t, fakeHandler{func(_ context.Context, _ *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		return respond(req), nil
	}}, lim, 1<<20)

	// The Server's clock starts at accept, a little before dial returns
	// and this test's clock starts: allow for it.
	silent := dial(t, ln)
	if took := silent.closed(); took < idle-50*time.Millisecond {
		t.Fatalf("silent connection closed after %v, before %v idle", took, idle)
	}
	used := dial(t, ln)
	used.send(metadata(), 1)
	if _, err := used.recv(); err != nil {
		t.Fatal(err)
	}
	if took := used.closed(); took < idle-50*time.Millisecond {
		t.Fatalf("connection closed %v after its last answer, before %v idle", took, idle)
	}
}

// Drain lets a connection finish the request it is handling and write its
// answer, handles none it pipelined after it, closes an idle connection
// at once, and returns once both have ended.
func TestDrainAnswersTheRequestInFlight(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var handled atomic.Int32
	s, ln := serve(t, fakeHandler{func(_ context.Context, _ *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		if handled.Add(1) == 1 {
			close(entered)
			<-release
		}
		return respond(req), nil
	}}, testLimits(), 1<<20)
	idle := dial(t, ln)
	busy := dial(t, ln)
	busy.send(metadata(), 1)
	busy.send(metadata(), 2)
	<-entered
	// The idle connection is accepted before the busy one's request
	// was handled: its read of nothing shows it registered.
	idle.send(produce(), 9)
	if _, err := idle.recv(); err != nil {
		t.Fatal(err)
	}

	ln.Close()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		s.Drain(10 * time.Second)
	}()
	idle.closed()
	select {
	case <-drained:
		t.Fatal("drained while a request was being handled")
	default:
	}
	close(release)
	<-drained
	if got, err := busy.recv(); err != nil || got != 1 {
		t.Fatalf("answer %d, %v; want the answer to request 1", got, err)
	}
	busy.closed()
	if n := handled.Load(); n != 2 { // request 1 and the idle one's
		t.Fatalf("%d requests handled, want 2", n)
	}
	if !s.Draining() {
		t.Fatal("not draining after Drain")
	}
}

// A valid ApiVersions v3+ names the client's software for the
// connection's later requests.
func TestClientSoftwareFromApiVersions(t *testing.T) {
	seen := make(chan [2]string, 2)
	_, ln := serve(t, fakeHandler{func(_ context.Context, rc *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		if rc.Listener != "TEST" || rc.Principal != wire.AnonymousPrincipal || rc.ClientID != "test" {
			t.Errorf("request context %+v", rc)
		}
		seen <- [2]string{rc.ClientSoftwareName, rc.ClientSoftwareVersion}
		return respond(req), nil
	}}, testLimits(), 1<<20)
	c := dial(t, ln)
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	av.ClientSoftwareName, av.ClientSoftwareVersion = "klog-test", "1.0"
	c.send(av, 1)
	c.send(metadata(), 2)
	for i := range 2 {
		if got := <-seen; got != [2]string{"klog-test", "1.0"} {
			t.Fatalf("request %d: client software %q", i+1, got)
		}
	}
}
