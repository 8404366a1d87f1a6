package brokertest

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// MaxClusterNodes is the most nodes StartCluster runs, as for klog up -n.
const MaxClusterNodes = 9

// maxVoters is how many of a cluster's first nodes are the metadata
// quorum's voters; the rest are broker-only nodes.
const maxVoters = 3

// Cluster is one or more in-process nodes forming one cluster.
type Cluster struct {
	t     testing.TB
	nodes []*Node
	// controls are the request controls of every node (controls.go).
	controls controls
}

// StartCluster starts n memory nodes forming one cluster, as New with
// Nodes(n) does; opts apply after Nodes(n).
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	return New(t, append([]Option{Nodes(n)}, opts...)...)
}

// clusterConfigs are the static configs of node id of a cluster of n
// nodes whose voters are at voters (StartCluster's doc says why).
func clusterConfigs(id, n int, voters []string) map[string]string {
	rf := min(n, 3)
	minISR := 1
	if n >= 3 {
		minISR = 2
	}
	return map[string]string{
		"node.id":                                  strconv.Itoa(id),
		"controller.quorum.voters":                 strings.Join(voters, ","),
		"default.replication.factor":               strconv.Itoa(rf),
		"min.insync.replicas":                      strconv.Itoa(minISR),
		"offsets.topic.replication.factor":         strconv.Itoa(rf),
		"transaction.state.log.replication.factor": strconv.Itoa(rf),
		"transaction.state.log.min.isr":            strconv.Itoa(minISR),
		"broker.heartbeat.interval.ms":             "500",
		"broker.session.timeout.ms":                "3000",
	}
}

// reserveVoters picks a free port for each of the first min(n, maxVoters)
// nodes' Raft address, fixed for the cluster's life.
func reserveVoters(t testing.TB, n int) []string {
	t.Helper()
	var voters []string
	for id, port := range testkit.FreePorts(t, min(n, maxVoters)) {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", id, port))
	}
	return voters
}

// bootAll starts every node at once (the voters wait for each other to
// elect a controller) and then waits until each lists all of them.
func (c *Cluster) bootAll() {
	c.t.Helper()
	if id, err := c.tryBoot(); err != nil {
		c.t.Fatalf("brokertest: start node %d: %v", id, err)
	}
	if len(c.nodes) > 1 {
		c.waitBrokers()
	}
}

// tryBoot starts every node at once and returns the first that failed.
func (c *Cluster) tryBoot() (int, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, node := range c.nodes {
		wg.Go(func() { errs[i] = node.boot() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return 0, nil
}

// waitBrokers waits until every node's Metadata lists every node, so that
// a test's first request may name any of them.
func (c *Cluster) waitBrokers() {
	c.t.Helper()
	for _, n := range c.nodes {
		cl := n.Client()
		testkit.WaitFor(c.t, fmt.Sprintf("node %s to list all %d nodes", n.cfg.Configs["node.id"], len(c.nodes)), func() (bool, string) {
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = []kmsg.MetadataRequestTopic{}
			resp, err := req.RequestWith(context.Background(), cl)
			if err != nil {
				return false, err.Error()
			}
			return len(resp.Brokers) == len(c.nodes), fmt.Sprintf("%d brokers", len(resp.Brokers))
		})
		cl.Close()
	}
}

// Nodes returns the cluster's nodes, by node id.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Node returns node id.
func (c *Cluster) Node(id int32) *Node {
	c.t.Helper()
	if id < 0 || int(id) >= len(c.nodes) {
		c.t.Fatalf("brokertest: no node %d in a cluster of %d", id, len(c.nodes))
	}
	return c.nodes[id]
}

// Bootstrap returns every node's address, running or not.
func (c *Cluster) Bootstrap() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// Client returns a franz-go client seeded with every node, closed at
// cleanup.
func (c *Cluster) Client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)}, opts...)...)
	if err != nil {
		c.t.Fatalf("new client: %v", err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// Isolate cuts the node off from the other nodes of its cluster, both
// ways, until Heal; its clients stay connected.
func (n *Node) Isolate() {
	n.t.Helper()
	if n.node == nil {
		n.t.Fatal("brokertest: Isolate of a node not running")
	}
	n.node.Isolate()
}

// Heal ends Isolate.
func (n *Node) Heal() {
	n.t.Helper()
	if n.node == nil {
		n.t.Fatal("brokertest: Heal of a node not running")
	}
	n.node.Heal()
}

// nodeLogger logs node id's errors to t: at warn level, peers coming and
// going would drown what matters.
func nodeLogger(t testing.TB, id int) *slog.Logger {
	return testkit.Logger(t, slog.LevelError).With("node", id)
}
