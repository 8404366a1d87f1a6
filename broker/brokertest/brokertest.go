// Package brokertest runs klog nodes in-process for tests, the way
// net/http/httptest runs HTTP servers: on loopback, on a free port, in
// memory unless a data directory is asked for, and stopped by t.Cleanup.
package brokertest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker"
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

// Node is a running in-process node.
type Node struct {
	t    testing.TB
	cfg  broker.Config
	node *broker.Node
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
	n := &Node{t: t, cfg: cfg}
	n.start()
	t.Cleanup(func() { n.Close() })
	return n
}

func (n *Node) start() {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node, err := broker.Start(ctx, n.cfg)
	if err != nil {
		n.t.Fatalf("start klog node: %v", err)
	}
	n.node = node
	// Restarts keep the port so clients and their metadata stay valid.
	n.cfg.Listen = node.Addr().String()
}

// Addr is the node's bootstrap address.
func (n *Node) Addr() string { return n.node.Advertised() }

// Broker is the underlying node.
func (n *Node) Broker() *broker.Node { return n.node }

// Close stops the node gracefully. It is safe to call more than once.
func (n *Node) Close() {
	if n.node != nil {
		if err := n.node.Close(); err != nil {
			n.t.Errorf("close klog node: %v", err)
		}
	}
}

// Restart stops the node and starts it again on the same address and data
// directory.
func (n *Node) Restart() {
	n.t.Helper()
	n.Close()
	n.start()
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
