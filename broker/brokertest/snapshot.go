package brokertest

import (
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/klogdev/klog/broker"
)

// votersConfig is the static config naming a cluster's quorum voters.
const votersConfig = "controller.quorum.voters"

// Snapshot is the whole state of a memory cluster at one point, taken by
// Cluster.Snapshot: every node's logs (the topics' records, committed
// offsets in __consumer_offsets, transactions in __transaction_state and
// the open ones' records), its metadata and Raft state, and its static
// configs. Restore starts a cluster on a copy of it, as often as wanted;
// a Snapshot may be shared by tests running in parallel.
type Snapshot struct {
	nodes []snapshotNode
}

// snapshotNode is one node of a Snapshot.
type snapshotNode struct {
	cfg   broker.Config
	state *broker.MemoryState
}

// Snapshot takes the cluster's whole state and returns it, for Restore.
// Every node stops at once (without a controlled shutdown, so leadership
// stays where it is), is copied and starts again on the same addresses
// and data; Snapshot returns once every node lists every node and leads
// every partition again, as New does. Only a memory cluster, every node
// running, can be taken.
func (c *Cluster) Snapshot() *Snapshot {
	c.t.Helper()
	for _, n := range c.nodes {
		if !n.cfg.Memory {
			c.t.Fatalf("brokertest: Snapshot needs memory nodes; node %d has a data directory", n.id)
		}
		if !n.Running() {
			c.t.Fatalf("brokertest: Snapshot with node %d not running", n.id)
		}
	}
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Go(func() { n.close(false) })
	}
	wg.Wait()
	// The snapshot keeps the state the nodes stopped on, and they start
	// again on copies of it, as a restored cluster does.
	snap := &Snapshot{}
	for _, n := range c.nodes {
		st, err := n.cfg.MemoryState.Clone(nil)
		if err != nil {
			c.t.Fatalf("brokertest: snapshot of node %d: %v", n.id, err)
		}
		cfg := n.cfg
		cfg.Configs = maps.Clone(n.cfg.Configs)
		snap.nodes = append(snap.nodes, snapshotNode{cfg: cfg, state: n.cfg.MemoryState})
		n.cfg.MemoryState = st
	}
	c.bootAll()
	c.waitLeaders(nil, nil)
	return snap
}

// Restore starts a cluster on a copy of snap's state, each node on a free
// port (its quorum too), and returns once it is ready as New does: same
// node ids, cluster id, static configs, topics, records, committed
// offsets and transactions as the cluster Snapshot was taken of, running
// beside it and beside every other cluster restored from snap. Of opts,
// Nodes, Memory and DataDir do not apply (a restored cluster has snap's
// nodes, in memory); Topic and Seed add topics, Config, NodeConfig,
// Logger and Clock apply to each node as in New.
func Restore(t testing.TB, snap *Snapshot, opts ...Option) *Cluster {
	t.Helper()
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	n := len(snap.nodes)
	if len(o.ports) != 0 && len(o.ports) != n {
		t.Fatalf("brokertest: %d ports for %d nodes", len(o.ports), n)
	}
	c := bootFresh(t, n, true, func(voters []string) *Cluster {
		readdress := map[string]string{}
		if n > 1 {
			old := map[string]string{}
			for _, v := range strings.Split(snap.nodes[0].cfg.Configs[votersConfig], ",") {
				id, addr, _ := strings.Cut(v, "@")
				old[id] = addr
			}
			for _, v := range voters {
				id, addr, _ := strings.Cut(v, "@")
				readdress[old[id]] = addr
			}
		}
		c := &Cluster{t: t}
		for id, sn := range snap.nodes {
			st, err := sn.state.Clone(readdress)
			if err != nil {
				t.Fatalf("brokertest: restore node %d: %v", id, err)
			}
			cfg := broker.Config{
				NodeID:      sn.cfg.NodeID,
				Memory:      true,
				MemoryState: st,
				Configs:     maps.Clone(sn.cfg.Configs),
			}
			if n > 1 {
				cfg.Configs[votersConfig] = strings.Join(voters, ",")
			}
			o.place(t, &cfg, id, n)
			c.nodes = append(c.nodes, newNode(t, c, cfg))
		}
		return c
	})
	if n > 1 {
		c.waitBrokers()
	}
	c.waitLeaders(nil, nil)
	if len(o.topics) > 0 {
		c.seed(o.topics)
	}
	return c
}
