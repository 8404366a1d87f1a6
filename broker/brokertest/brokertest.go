// Package brokertest runs klog clusters in-process for Go tests, the way
// net/http/httptest runs HTTP servers: real klog nodes, the same code as
// klog up, on 127.0.0.1 and free ports, in memory, logging to t.Log and
// stopped by t.Cleanup. Tests importing it need no Docker, no JVM and no
// fixed ports, and run in parallel (t.Parallel), each with its own
// cluster.
//
// # Starting a cluster
//
// New starts one node, or Nodes(n) nodes forming one cluster, and returns
// once it is ready; Bootstrap gives the seed addresses and Client a
// franz-go client closed at cleanup:
//
//	c := brokertest.New(t, brokertest.Nodes(3), brokertest.Topic("orders", 6, 3, "retention.ms=60000"))
//	cl := c.Client(kgo.ConsumeTopics("orders"))
//
// Options: Nodes; Topic, a topic created with a leader for each partition
// before New returns; Config and NodeConfig, static broker configs (as
// klog up -X key=value); Memory (the default) or DataDir storage; Ports,
// fixed listener ports; Logger. Start (one node) and StartCluster (n
// nodes) are the shorthands older tests use.
//
// # Faults and operations
//
// A node (Cluster.Node) can be stopped and started again on the same
// address and data: Close (graceful, as SIGTERM), Kill (as SIGKILL:
// what it wrote survives) or Crash (as a power loss: what it synced
// survives), then Start; Restart. Hang stops it answering with its
// connections open, as SIGSTOP, until Resume. In a cluster, Isolate cuts
// it off from the other nodes until Heal.
//
// The cluster moves a partition's leadership through the controller
// (MoveLeader), compacts a topic now (CompactNow) and runs retention now
// (RetentionNow), whatever the cleaner's and the retention check's
// schedules.
//
// # Between tests
//
// Reset deletes every topic and consumer group, so that one cluster can
// serve test after test. Snapshot takes a memory cluster's whole state
// (records, committed offsets, transactions, metadata) and Restore starts
// a new cluster on a copy of it, as often as wanted, each independent of
// the others: set a cluster up once, then give each test its own.
//
//	snap := c.Snapshot()
//	r := brokertest.Restore(t, snap)
//
// # Request controls
//
// Control has a function see every request of an API key, on any node,
// before its handler: it may answer it (with an error code, say), delay
// it or only watch it. FailRequests and DelayRequests are the common
// cases:
//
//	c.FailRequests(kmsg.Produce, kerr.NotEnoughReplicas, 2) // the next two produces
//	remove := c.DelayRequests(kmsg.Fetch, time.Second)       // every fetch, until remove()
//
// Without controls or a hang, a request costs two atomic loads more than
// in klog up, where the hook point is a nil comparison.
//
// The Test functions of example_test.go are this package's examples:
// starting a cluster needs a testing.TB, which an Example function has
// none of.
package brokertest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/adminapi"
	"github.com/klogdev/klog/broker/config"
)

// Node is an in-process node: running from Start until Close, Kill or
// Crash, and again after Start.
type Node struct {
	t    testing.TB
	cfg  broker.Config
	node *broker.Node
	// admin serves the node's admin API while it runs, on adminLn,
	// bound once for the node's whole test: every start hands it over.
	admin   *adminapi.Server
	adminLn *keptListener
	id      int32 // node id
	// cluster is the cluster the node is part of (one node's own, for
	// Start); its controls see the node's requests (requestHook).
	cluster *Cluster
	// hung, while Hang holds the node, is closed by Resume; hangIsolated
	// says whether Hang isolated it too.
	hung         atomic.Pointer[chan struct{}]
	hangIsolated bool
}

// Start starts a node on 127.0.0.1 with a free port, as New with one node
// does, and returns it. Logs go to t.Log at warn level and above.
func Start(t testing.TB, opts ...Option) *Node {
	t.Helper()
	return New(t, append(opts, Nodes(1))...).nodes[0]
}

func newNode(t testing.TB, c *Cluster, cfg broker.Config) *Node {
	if cfg.Memory && cfg.MemoryState == nil {
		cfg.MemoryState = broker.NewMemoryState()
	}
	n := &Node{t: t, cfg: cfg, cluster: c, id: cfg.NodeID}
	if id, err := strconv.ParseInt(cfg.Configs["node.id"], 10, 32); err == nil {
		n.id = int32(id)
	}
	n.cfg.RequestHook = n.requestHook
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("brokertest: admin API listener: %v", err)
	}
	n.adminLn = &keptListener{TCPListener: ln.(*net.TCPListener)}
	// Cleanups run last first: the listener closes after the node.
	t.Cleanup(func() { n.adminLn.TCPListener.Close() })
	// At cleanup every node stops at once: a controlled shutdown would
	// find no node to move leadership to.
	t.Cleanup(func() { n.close(false) })
	return n
}

// keptListener is a node's admin API listener, bound once and handed to
// each admin API the node runs: a restart serves on the same port without
// binding it again, which another process could have taken meanwhile (a
// port closed and bound again is a race, never a reservation). Close, the
// admin API's stop, only ends that API's Accept; connections made while
// the node is down wait in the backlog for the next start's.
type keptListener struct {
	*net.TCPListener
	closed atomic.Bool
}

// handOver returns the listener for the next admin API.
func (l *keptListener) handOver() (*keptListener, error) {
	if err := l.TCPListener.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return &keptListener{TCPListener: l.TCPListener}, nil
}

func (l *keptListener) Accept() (net.Conn, error) {
	c, err := l.TCPListener.Accept()
	if l.closed.Load() {
		if c != nil {
			c.Close()
		}
		return nil, net.ErrClosed
	}
	return c, err
}

// Close wakes Accept with a deadline in the past; the socket stays open.
func (l *keptListener) Close() error {
	l.closed.Store(true)
	return l.TCPListener.SetDeadline(time.Unix(1, 0))
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
	ln, err := n.adminLn.handOver()
	if err != nil {
		_ = node.Close()
		n.node = nil
		return fmt.Errorf("admin API listener: %w", err)
	}
	n.adminLn = ln
	n.admin = adminapi.Serve(ln, node, adminapi.Options{Version: "brokertest", Logger: n.cfg.Logger})
	return nil
}

// ID is the node's node id.
func (n *Node) ID() int32 { return n.id }

// AdminAddr is the address of the node's admin HTTP API (package
// nodeapi); it stays the same across restarts.
func (n *Node) AdminAddr() string { return n.adminLn.Addr().String() }

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

// QuorumAddr is the node's address in the metadata quorum, its entry of
// controller.quorum.voters; "" for a node that is not a voter.
func (n *Node) QuorumAddr() string {
	voters, _ := config.ParseVoters(n.cfg.Configs[votersConfig])
	for _, v := range voters {
		if v.ID == n.id {
			return v.Addr()
		}
	}
	return ""
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
	n.resume()
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
	n.resume()
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
