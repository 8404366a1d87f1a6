package brokertest

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/seed"
)

// Option configures New (and Start and StartCluster).
type Option func(*options)

type options struct {
	nodes   int
	dataDir string // "": memory
	ports   []int
	topics  []seedTopic
	// node are applied to each node's config in order, after the
	// defaults.
	node []func(*broker.Config)
}

// Principal names the principal of each request every node serves, in
// place of the connection's (broker.Config.Principal): tests of the
// authorizer name users by client id, say.
func Principal(of func(rc *wire.RequestContext) string) Option {
	return func(o *options) {
		o.node = append(o.node, func(c *broker.Config) { c.Principal = of })
	}
}

// Nodes sets how many nodes New starts: 1 (the default) to
// MaxClusterNodes.
func Nodes(n int) Option { return func(o *options) { o.nodes = n } }

// Memory keeps every node's data in memory, the default: nothing is
// written to disk, and Kill and Crash work.
func Memory() Option { return func(o *options) { o.dataDir = "" } }

// DataDir keeps the nodes' data on disk under dir, so that it survives
// Restart, instead of in memory: in dir itself for one node, in
// dir/node-ID for each node of a cluster.
func DataDir(dir string) Option { return func(o *options) { o.dataDir = dir } }

// Ports sets the Kafka listener ports of the nodes, one a node in node id
// order, instead of free ones; 0 picks a free port for that node. Fixed
// ports clash when tests run in parallel: use them only when a client
// needs a known address.
func Ports(ports ...int) Option {
	return func(o *options) { o.ports = ports }
}

// Config sets a static broker config on every node, as -X key=value does.
func Config(key, value string) Option {
	return nodeOption(func(c *broker.Config) {
		if c.Configs == nil {
			c.Configs = make(map[string]string)
		}
		c.Configs[key] = value
	})
}

// NodeConfig sets a static broker config on node id only, as -X
// key=value does; it does nothing on the other nodes. For clusters of
// more than one node (node ids are set there).
func NodeConfig(id int32, key, value string) Option {
	return nodeOption(func(c *broker.Config) {
		if c.Configs["node.id"] == strconv.Itoa(int(id)) {
			c.Configs[key] = value
		}
	})
}

// SASLMechanisms gives every node SASL mechanisms beside klog's (a test's
// own): its SASL listeners offer those sasl.enabled.mechanisms names.
func SASLMechanisms(mechs ...auth.Mechanism) Option {
	return nodeOption(func(c *broker.Config) { c.SASLMechanisms = append(c.SASLMechanisms, mechs...) })
}

// Logger sends the nodes' logs to l instead of t.Log.
func Logger(l *slog.Logger) Option {
	return nodeOption(func(c *broker.Config) { c.Logger = l })
}

func nodeOption(f func(*broker.Config)) Option {
	return func(o *options) { o.node = append(o.node, f) }
}

// New starts a cluster of in-process nodes (one unless Nodes says more)
// on 127.0.0.1, each on a free port, in memory, with logs to t.Log, and
// returns once it is ready: every node lists every node, and the topics
// of Topic options exist with a leader for each partition. t.Cleanup
// stops every node. The nodes run the same code as klog up.
//
// One node is a cluster of one, as klog up starts. More nodes form one
// cluster as klog up -n does:
//   - node ids 0 to n-1;
//   - the first three nodes (all, if fewer) are the metadata quorum's
//     voters, the others broker-only nodes;
//   - topics default to replication factor min(n, 3) and, from three
//     nodes, min.insync.replicas 2; the internal topics are replicated as
//     much;
//   - heartbeats every 500 ms and a 3 s session, so a killed or hung node
//     is fenced and its partitions led elsewhere within seconds;
//   - logs to t.Log at error level (warn for one node): peers coming and
//     going would drown what matters.
//
// Config and NodeConfig apply after these defaults.
func New(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	o := options{nodes: 1}
	for _, opt := range opts {
		opt(&o)
	}
	n := o.nodes
	if n < 1 || n > MaxClusterNodes {
		t.Fatalf("brokertest: a cluster of %d nodes; 1 to %d", n, MaxClusterNodes)
	}
	if len(o.ports) != 0 && len(o.ports) != n {
		t.Fatalf("brokertest: %d ports for %d nodes", len(o.ports), n)
	}
	c := bootFresh(t, n, o.dataDir == "", func(voters []string) *Cluster {
		c := &Cluster{t: t}
		for id := range n {
			cfg := broker.Config{Memory: o.dataDir == "", DataDir: o.dataDir}
			if n > 1 {
				cfg.Configs = clusterConfigs(id, n, voters)
				if o.dataDir != "" {
					cfg.DataDir = filepath.Join(o.dataDir, fmt.Sprintf("node-%d", id))
				}
			}
			o.place(t, &cfg, id, n)
			c.nodes = append(c.nodes, newNode(t, c, cfg))
		}
		return c
	})
	if n > 1 {
		c.waitBrokers()
	}
	if len(o.topics) > 0 {
		c.seed(o.topics)
	}
	return c
}

// bootFresh starts the cluster of n nodes that build makes for the quorum
// voters it is given (none for one node), on newly reserved ports. They
// are free when reserved, but another process may take one before its
// node listens there: then, if retry (memory clusters: a data directory
// keeps its voters), the whole cluster starts again on other ports, a
// few times.
func bootFresh(t testing.TB, n int, retry bool, build func(voters []string) *Cluster) *Cluster {
	t.Helper()
	for attempt := 1; ; attempt++ {
		var voters []string
		if n > 1 {
			voters = reserveVoters(t, n)
		}
		c := build(voters)
		id, err := c.tryBoot()
		if err == nil {
			return c
		}
		if attempt == 3 || !errors.Is(err, syscall.EADDRINUSE) || !retry {
			t.Fatalf("brokertest: start node %d: %v", id, err)
		}
		for _, node := range c.nodes {
			if node.Running() {
				node.close(false)
			}
		}
		t.Logf("brokertest: start node %d: %v; starting the cluster again on other ports", id, err)
	}
}

// place sets node id's listener and logger (New's doc says which) and
// then applies the node options, for a cluster of n nodes.
func (o *options) place(t testing.TB, cfg *broker.Config, id, n int) {
	// A port of testkit.FreePorts, not port 0: a node killed and started
	// again (Restart) listens on its port again, and a port of the
	// ephemeral range may be an outgoing connection's by then.
	port := testkit.FreePorts(t, 1)[0]
	if len(o.ports) > 0 {
		port = o.ports[id]
	}
	cfg.Listen = "127.0.0.1:" + strconv.Itoa(port)
	if n == 1 {
		cfg.Logger = testkit.Logger(t, slog.LevelWarn)
	} else {
		cfg.Logger = nodeLogger(t, id)
	}
	for _, f := range o.node {
		f(cfg)
	}
}

// seedTopic is one topic of a Topic or Seed option.
type seedTopic struct {
	seed.Topic
	// malformed are the configs not in key=value form; New fails on them.
	malformed []string
}

// Topic has New create topic name with partitions partitions and
// replication factor rf (-1: the cluster's default) before it returns,
// each partition with a leader. configs are topic configs as key=value,
// e.g. "cleanup.policy=compact".
func Topic(name string, partitions int32, rf int16, configs ...string) Option {
	return func(o *options) {
		st := seedTopic{Topic: seed.Topic{Name: name, Partitions: partitions, ReplicationFactor: max(rf, 0), Configs: map[string]string{}}}
		for _, kv := range configs {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				st.malformed = append(st.malformed, kv)
				continue
			}
			st.Configs[k] = v
		}
		o.topics = append(o.topics, st)
	}
}

// Seed has New create the topics of s and produce their records, as klog
// up --seed does with a seed file (package seed: seed.ParseFile reads
// one), before it returns.
func Seed(s seed.Spec) Option {
	return func(o *options) {
		for _, t := range s.Topics {
			o.topics = append(o.topics, seedTopic{Topic: t})
		}
	}
}
