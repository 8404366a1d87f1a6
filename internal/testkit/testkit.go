// Package testkit holds what klog's tests share below brokertest: waiting
// on a condition and routing logs to the test. Every package's tests use
// it, store/ included, so it imports nothing of klog.
package testkit

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// WaitTimeout bounds every WaitFor. It is generous: it only decides how
// long a broken test takes to fail, never whether a working one passes.
const WaitTimeout = 30 * time.Second

// HangBound is how long a call that should end at a short deadline (its
// context's, a write timeout, a closed connection) may take before a test
// calls it hung. It only tells "ended at its deadline" from "waited for
// something else" (the test's context, a fetch's 30 s MaxWait): a busy
// machine delays the first by seconds, never by this much. A test using it
// makes sure that the other wait is longer.
const HangBound = 20 * time.Second

// pollInterval is how often WaitFor checks its condition.
const pollInterval = 5 * time.Millisecond

// WaitFor polls cond until it reports true, and fails the test when it has
// not after WaitTimeout. cond also says what it saw, which the failure
// shows; return "" when there is nothing to tell. what names the awaited
// state ("the group to be Stable").
func WaitFor(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if seen == "" {
				t.Fatalf("timed out after %v waiting for %s", WaitTimeout, what)
			}
			t.Fatalf("timed out after %v waiting for %s; last saw: %s", WaitTimeout, what, seen)
		}
		<-tick.C
	}
}

// SeedEnv names the environment variable that gives Seed its seed, to
// rerun a randomised test with the seed a failed run logged.
const SeedEnv = "KLOG_TEST_SEED"

// Seed returns the seed of a randomised test: $KLOG_TEST_SEED when set,
// else a new one. It logs the seed with how to rerun the test on it, a
// line that go test shows with the test's failure and scripts/test.sh's
// summary repeats.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(SeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", SeedEnv, s, err)
		}
	}
	t.Logf("seed %d (rerun with %s=%d)", seed, SeedEnv, seed)
	return seed
}

// FreePorts returns n distinct loopback ports that were free just now:
// each listener stays open until all are taken, so none is handed out
// twice. They are closed on return, so another process may take one
// before its user binds it: where a component can take a listener, hand
// it one instead; else start again on new ports when a bind fails with
// EADDRINUSE (brokertest's New and Restore do).
//
// The ports are below the machine's ephemeral range, where the kernel
// gives no outgoing connection its local port: a node killed and started
// again on its port (a test's restart) finds it free, unless another
// listener bound that very port meanwhile, where a port of the ephemeral
// range is soon some connection's.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		ln, err := listenBelowEphemeral()
		if err != nil {
			t.Fatalf("reserve a free port: %v", err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// stablePorts is how many ports below the ephemeral range FreePorts
// draws from.
const stablePorts = 12000

// handedOut are the ports FreePorts returned in this process: none is
// returned twice, so that the ports of one test (a cluster's listeners
// and voters, reserved by separate calls) never clash with each other or
// with another test's of the same process, while each is bound only
// later.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// listenBelowEphemeral listens on a random free loopback port of the
// stablePorts below the ephemeral range (never under 10000, clear of
// Kafka's and klog's defaults), or on any free port when none of a few
// hundred tries binds.
func listenBelowEphemeral() (net.Listener, error) {
	high := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				high = v
			}
		}
	}
	low := max(10000, high-stablePorts)
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 300 {
		if high <= low {
			break
		}
		port := low + rand.IntN(high-low)
		if handedOut.ports[port] {
			continue
		}
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			handedOut.ports[port] = true
			return ln, nil
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// Logger returns a logger that writes records at level and above to t.Log.
func Logger(t testing.TB, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(writer{t}, &slog.HandlerOptions{Level: level}))
}

// ContextTimeout bounds the context of Context. It bounds all of a
// test's calls together, not each, and a long test (clusters started,
// snapshotted, restored, under the race detector) on a busy machine runs
// for minutes: like WaitTimeout it only decides how long a hung test takes
// to fail, never whether a working one passes.
const ContextTimeout = 5 * time.Minute

// Context returns a context cancelled when the test ends or after
// ContextTimeout, whichever comes first, so no client call in a test can
// hang it.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), ContextTimeout)
	t.Cleanup(cancel)
	return ctx
}

// writer turns each line the handler writes into one t.Log call.
type writer struct{ t testing.TB }

func (w writer) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// Clock is a clock a test moves by hand; safe for concurrent use. Pass
// its Now where a component takes a clock function.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// UnixMilli is the clock's time in Kafka's unit, milliseconds since the
// epoch.
func (c *Clock) UnixMilli() int64 { return c.Now().UnixMilli() }

// Buffer is a bytes.Buffer that a writer (a node's logger, a command's
// output) and the test reading it may use at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// DummyProcess starts a harmless process (sleep) that stands for another
// program's process, such as another cluster's, killed when the test ends;
// it returns its pid.
func DummyProcess(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// Refuses connects to addr, in plaintext (cfg nil) or over TLS with cfg,
// sends send, and returns an error unless the server closes the
// connection (a failed handshake included) within WaitTimeout instead of
// taking what was sent. Under TLS 1.3 a client's handshake may end before
// the server has checked the client's certificate: the refusal is then
// the next read.
func Refuses(addr string, cfg *tls.Config, send []byte) error {
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(WaitTimeout))
	var conn net.Conn = raw
	if cfg != nil {
		tc := tls.Client(raw, cfg)
		if err := tc.Handshake(); err != nil {
			return nil
		}
		conn = tc
	}
	if _, err := conn.Write(send); err != nil {
		return nil
	}
	_, err = io.ReadAll(conn)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return errors.New("the connection stayed open")
	}
	return nil
}
