// Package brokertest runs klog nodes in-process for tests, the way
// net/http/httptest runs HTTP servers: on loopback, on a free port, in
// memory unless a data directory is asked for, and stopped by t.Cleanup.
//
// Start runs one node; StartCluster runs several forming one cluster, as
// klog up -n does. A memory node keeps its state across Restart, and can be
// killed (Kill: every byte written survives, as after SIGKILL) or crashed
// (Crash: only the synced bytes survive, as after a power loss) and
// started again; a node of a cluster can be isolated from the others and
// healed.
package brokertest

import (
	"cmp"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/adminapi"
	"github.com/klogdev/klog/internal/testkit"
)

// Option configures a test node.
type Option func(*broker.Config)

// DataDir keeps the node's data in dir (so it survives Restart) instead of
// memory.
func DataDir(dir string) Option {
	return func(c *broker.Config) { c.DataDir, c.Memory = dir, false }
}

// Config sets a static broker config, as -X key=value does.
func Config(key, value string) Option {
	return func(c *broker.Config) {
		if c.Configs == nil {
			c.Configs = make(map[string]string)
		}
		c.Configs[key] = value
	}
}

// Logger sends the node's logs to l instead of t.Log.
func Logger(l *slog.Logger) Option {
	return func(c *broker.Config) { c.Logger = l }
}

// Node is an in-process node: running from Start until Close, Kill or
// Crash, and again after Start.
type Node struct {
	t    testing.TB
	cfg  broker.Config
	node *broker.Node
	// admin serves the node's admin API while it runs, on adminAddr
	// (kept across restarts, as the Kafka listener is).
	admin     *adminapi.Server
	adminAddr string
}

// Start starts a node on 127.0.0.1 with a free port. Logs go to t.Log at
// warn level and above (KLOG_TEST_DEBUG=1 in the environment is not needed:
// failures print them).
func Start(t testing.TB, opts ...Option) *Node {
	t.Helper()
	cfg := broker.Config{
		Listen: "127.0.0.1:0",
		Memory: true,
		Logger: testkit.Logger(t, slog.LevelWarn),
	}
	for _, o := range opts {
		o(&cfg)
	}
	n := newNode(t, cfg)
	n.start()
	return n
}

func newNode(t testing.TB, cfg broker.Config) *Node {
	if cfg.Memory && cfg.MemoryState == nil {
		cfg.MemoryState = broker.NewMemoryState()
	}
	n := &Node{t: t, cfg: cfg}
	// At cleanup every node stops at once: a controlled shutdown would
	// find no node to move leadership to.
	t.Cleanup(func() { n.close(false) })
	return n
}

func (n *Node) start() {
	n.t.Helper()
	if err := n.boot(); err != nil {
		n.t.Fatalf("start klog node: %v", err)
	}
}

func (n *Node) boot() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := broker.Start(ctx, n.cfg)
	if err != nil {
		return err
	}
	n.node = node
	// Restarts keep the port so clients and their metadata stay valid.
	n.cfg.Listen = node.Addr().String()
	admin, err := adminapi.Listen(cmp.Or(n.adminAddr, "127.0.0.1:0"), node, adminapi.Options{Version: "brokertest", Logger: n.cfg.Logger})
	if err != nil {
		_ = node.Close()
		n.node = nil
		return err
	}
	n.admin, n.adminAddr = admin, admin.Addr()
	return nil
}

// AdminAddr is the address of the node's admin HTTP API (package
// nodeapi); it stays the same across restarts.
func (n *Node) AdminAddr() string { return n.adminAddr }

// stopAdmin stops serving the admin API.
func (n *Node) stopAdmin() {
	if n.admin != nil {
		_ = n.admin.Close()
		n.admin = nil
	}
}

// Addr is the node's bootstrap address; it stays the same across restarts.
func (n *Node) Addr() string {
	if n.node == nil {
		return n.cfg.Listen
	}
	return n.node.Advertised()
}

// Broker is the underlying node, nil while it is not running.
func (n *Node) Broker() *broker.Node { return n.node }

// Running reports whether the node runs: started and not closed, killed
// or crashed since.
func (n *Node) Running() bool { return n.node != nil }

// Close stops the node gracefully, as klog up does on SIGTERM: in a
// cluster, a controlled shutdown first moves its leadership and ISR
// membership to the other nodes (bounded at controlledShutdownTimeout), so
// acks=all producers carry on. It is safe to call more than once, and on a
// node not running.
func (n *Node) Close() { n.close(true) }

// controlledShutdownTimeout bounds Close's controlled shutdown, as klog up
// bounds it.
const controlledShutdownTimeout = 10 * time.Second

func (n *Node) close(controlled bool) {
	if n.node == nil {
		return
	}
	n.stopAdmin()
	if controlled {
		ctx, cancel := context.WithTimeout(context.Background(), controlledShutdownTimeout)
		if err := n.node.ControlledShutdown(ctx); err != nil {
			n.t.Logf("klog node: controlled shutdown: %v", err)
		}
		cancel()
	}
	err := n.node.Close()
	n.node = nil
	if err != nil {
		n.t.Errorf("close klog node: %v", err)
	}
}

// Start starts a node not running (closed, killed or crashed) again on
// the same address and data.
func (n *Node) Start() {
	n.t.Helper()
	if n.node != nil {
		n.t.Fatal("brokertest: Start of a running node")
	}
	n.start()
}

// Restart stops the node gracefully and starts it again on the same
// address and data: its data directory, or its memory state.
func (n *Node) Restart() {
	n.t.Helper()
	n.Close()
	n.start()
}

// Kill stops the node as SIGKILL would: at once, with no controlled
// shutdown and no clean close of its logs. What it wrote survives, synced
// or not; Start brings it back to recover from it. Only a memory node
// (the default) can be killed.
func (n *Node) Kill() {
	n.t.Helper()
	n.abort("Kill", (*broker.MemoryState).Killed)
}

// Crash stops the node as a power loss would: only the bytes it synced,
// under the names it made durable, survive. Start brings it back to
// recover from them. Only a memory node (the default) can be crashed.
func (n *Node) Crash() {
	n.t.Helper()
	n.abort("Crash", (*broker.MemoryState).Crashed)
}

func (n *Node) abort(what string, leave func(*broker.MemoryState) *broker.MemoryState) {
	n.t.Helper()
	if !n.cfg.Memory {
		n.t.Fatalf("brokertest: %s needs a memory node, not a data directory", what)
	}
	if n.node == nil {
		n.t.Fatalf("brokertest: %s of a node not running", what)
	}
	// What survives is taken once the node has stopped serving, fetching
	// and voting, and before its logs close cleanly: that close writes
	// only to the state left behind, which nothing reads again.
	n.stopAdmin()
	st := n.cfg.MemoryState
	_ = n.node.Halt(func() { st = leave(st) })
	n.cfg.MemoryState = st
	n.node = nil
}

// Client returns a franz-go client seeded with the node, closed at cleanup.
func (n *Node) Client(opts ...kgo.Opt) *kgo.Client {
	n.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.Addr())}, opts...)...)
	if err != nil {
		n.t.Fatalf("new client: %v", err)
	}
	n.t.Cleanup(cl.Close)
	return cl
}
