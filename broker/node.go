// Package broker is one klog node: the Kafka-facing server and the
// composition root that wires the controller (cluster metadata through Raft),
// the partition logs (store/log) and the Kafka API handlers together.
//
// Each Kafka API lives in its own file named by key (00_produce.go,
// 01_fetch.go, ...), opening with the versions it serves, its behaviour and
// what it does not implement. apis.go holds the one registration table that
// drives both dispatch and ApiVersions, so klog never advertises a version it
// does not serve.
//
// Lock order: Node.mu (partition registry) before partition.Partition locks
// (then store/log's); nothing holds Node.mu while calling into the
// controller. Partitions get their leader state only from reconcile.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/ratelog"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/vfs"
)

// Config configures one node.
type Config struct {
	// NodeID is this node's broker id (node.id).
	NodeID int32
	// DataDir holds this node's partition logs, checkpoints and Raft state.
	// Ignored when Memory is set.
	DataDir string
	// Memory keeps everything in memory: nothing is written to disk and
	// nothing is left behind.
	Memory bool
	// Listen is the Kafka listener address, e.g. 127.0.0.1:9092. Port 0
	// picks a free port.
	Listen string
	// Advertise is the host:port clients are told to connect to; empty
	// means the listener's address.
	Advertise string
	// Configs are static broker configs by Kafka name (-X key=value).
	Configs map[string]string
	// Logger receives the node's logs; nil discards them. Repeats of one
	// line beyond a few per ten seconds are dropped and counted
	// (internal/ratelog).
	Logger *slog.Logger
}

// Node is a running klog node.
type Node struct {
	cfg    Config
	logger *slog.Logger
	// mem is the node's file system when it keeps its data in memory; the
	// package's tests inject faults into it.
	mem *vfs.MemFS
	// broker holds the broker configs by name and typed (Settings). A
	// dynamic change would parse a new one and swap it; request paths
	// read it once per use through settings.
	broker atomic.Pointer[config.Broker]
	// topics holds every topic's typed configs, resolved again by
	// reconcile on each metadata change; see topicConfig.
	topics atomic.Pointer[topicConfigs]
	ctrl   *controller.Controller
	logs   *log.Manager
	ln     net.Listener
	self   metadata.Broker

	maxRequestBytes int32
	// requestPool holds the bytes of requests being read or handled
	// (queued.max.request.bytes), all connections together.
	requestPool *wire.Pool
	// responseBytes counts the bytes of responses waiting to be written
	// (klog.queued.max.response.bytes), all connections together.
	responseBytes *wire.Pool
	// pausedConns counts the connections not read because their
	// responses are not being taken; parkedFetches the fetches waiting
	// for data.
	pausedConns   atomic.Int64
	parkedFetches atomic.Int64

	ctx    context.Context // cancelled by Close; owned by the node
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}

	closeOnce sync.Once
	closeErr  error

	mu struct {
		sync.RWMutex
		parts map[partitionKey]*partition.Partition
		conns map[net.Conn]struct{}
		// connsPerIP counts conns by remote IP (max.connections.per.ip).
		connsPerIP map[string]int
	}
	reconcileMu sync.Mutex // serialises reconcile passes

	// offsets and txnState describe the coordinators' internal topics,
	// __consumer_offsets and __transaction_state.
	offsets     *internalTopic
	txnState    *internalTopic
	groups      *group.Coordinator
	txns        *txn.Coordinator
	producerIDs producerIDs
}

type partitionKey struct {
	topic     string
	partition int32
}

// Start opens the node's storage, starts its controller, waits until the
// controller is ready and starts serving Kafka clients. The node runs until
// Close.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// A client can make a node repeat one line thousands of times a second
	// (malformed requests in a loop, lookups that keep meeting a bad batch,
	// writes while the disk is full); every line the node logs goes through
	// one rate limit.
	logger = slog.New(ratelog.New(logger.Handler(), ratelog.Options{}))
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:9092"
	}
	brokerCfg, err := config.ParseBroker(cfg.Configs)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, logger: logger, done: make(chan struct{})}
	n.broker.Store(brokerCfg)
	n.mu.parts = make(map[partitionKey]*partition.Partition)
	n.mu.conns = make(map[net.Conn]struct{})
	n.mu.connsPerIP = make(map[string]int)
	n.maxRequestBytes = brokerCfg.Settings().SocketRequestMaxBytes
	n.requestPool = wire.NewPool(brokerCfg.Settings().QueuedMaxRequestBytes)
	n.responseBytes = wire.NewPool(brokerCfg.Settings().QueuedMaxResponseBytes)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	n.ln = ln
	host, port, err := advertised(cfg.Advertise, ln.Addr())
	if err != nil {
		ln.Close()
		return nil, err
	}
	n.self = metadata.Broker{ID: cfg.NodeID, Host: host, Port: port}

	fs := vfs.OS()
	dataDir := cfg.DataDir
	ctrlDir := cfg.DataDir
	if cfg.Memory {
		n.mem = vfs.NewMem()
		fs = n.mem
		dataDir = "/klog"
		ctrlDir = ""
	}
	if dataDir == "" {
		ln.Close()
		return nil, errors.New("broker: a data directory is required unless Memory is set")
	}

	n.logs, err = log.OpenManager(fs, dataDir, log.ManagerOptions{
		Logger:       logger.With("component", "log"),
		ConfigFor:    n.topicLogConfig,
		MaxOpenFiles: int(brokerCfg.Settings().LogMaxOpenFiles),
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("open logs in %s: %w", dataDir, err)
	}
	n.ctrl, err = controller.New(controller.Config{
		NodeID:  cfg.NodeID,
		DataDir: ctrlDir,
		Logger:  logger.With("component", "controller"),
		Broker:  brokerCfg,
		Self:    n.self,
	})
	if err != nil {
		n.logs.Close()
		ln.Close()
		return nil, fmt.Errorf("start controller: %w", err)
	}
	if err := n.ctrl.WaitReady(ctx); err != nil {
		n.ctrl.Close()
		n.logs.Close()
		ln.Close()
		return nil, fmt.Errorf("wait for controller: %w", err)
	}

	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.offsets = n.newOffsetsTopic()
	n.txnState = n.newTxnStateTopic()
	n.groups = n.newGroupCoordinator()
	n.txns = n.newTxnCoordinator()
	n.reconcile()

	n.wg.Add(4)
	go n.acceptLoop()
	go n.watchMetadata()
	go n.maintainLogs()
	go n.prefetchProducerIDs()
	_, maxOpen := n.logs.OpenFiles()
	logger.Info("node ready", "node", cfg.NodeID, "listen", ln.Addr().String(), "advertise", net.JoinHostPort(host, strconv.Itoa(int(port))), "max_open_log_files", maxOpen)
	return n, nil
}

func advertised(adv string, addr net.Addr) (string, int32, error) {
	if adv == "" {
		adv = addr.String()
	}
	host, portStr, err := net.SplitHostPort(adv)
	if err != nil {
		return "", 0, fmt.Errorf("advertised address %q: %w", adv, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("advertised address %q: bad port", adv)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return host, int32(port), nil
}

// Addr is the address the Kafka listener is bound to.
func (n *Node) Addr() net.Addr { return n.ln.Addr() }

// Advertised is the host:port clients are told to use.
func (n *Node) Advertised() string {
	return net.JoinHostPort(n.self.Host, strconv.Itoa(int(n.self.Port)))
}

// QueuedRequestBytes returns the bytes of requests being read or handled,
// taken from queued.max.request.bytes: what has arrived of each, not what
// their size prefixes claim.
func (n *Node) QueuedRequestBytes() int64 { return n.requestPool.Reserved() }

// QueuedResponseBytes returns the bytes of responses waiting to be
// written, all connections together (klog.queued.max.response.bytes).
func (n *Node) QueuedResponseBytes() int64 { return n.responseBytes.Reserved() }

// PausedConnections returns how many connections are not being read
// because their responses are not being taken.
func (n *Node) PausedConnections() int64 { return n.pausedConns.Load() }

// ParkedFetches returns how many fetches are waiting for data (a long
// poll: less than MinBytes available, MaxWait not over).
func (n *Node) ParkedFetches() int64 { return n.parkedFetches.Load() }

// Done is closed once the node has stopped.
func (n *Node) Done() <-chan struct{} { return n.done }

// Close stops the node: it stops accepting, closes client connections, waits
// for every goroutine it started, then flushes and closes the logs and the
// controller. It is safe to call more than once.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		n.ln.Close()
		n.mu.Lock()
		for c := range n.mu.conns {
			c.Close()
		}
		n.mu.Unlock()
		n.wg.Wait()
		n.txns.Close()
		n.groups.Close()
		errs := []error{n.logs.Close(), n.ctrl.Close()}
		n.closeErr = errors.Join(errs...)
		close(n.done)
	})
	return n.closeErr
}

// partition returns the local replica of topic/partition, or nil.
func (n *Node) partition(topic string, index int32) *partition.Partition {
	n.mu.RLock()
	p := n.mu.parts[partitionKey{topic, index}]
	n.mu.RUnlock()
	return p
}

// settings returns the node's typed broker settings.
func (n *Node) settings() *config.Settings { return n.broker.Load().Settings() }

// watchMetadata reconciles local partitions with each new metadata image.
func (n *Node) watchMetadata() {
	defer n.wg.Done()
	for {
		ch := n.ctrl.Changed()
		n.reconcile()
		select {
		case <-n.ctx.Done():
			return
		case <-ch:
		}
	}
}

// reconcile makes the local partition registry match the metadata image:
// creates logs for partitions this node replicates, removes those of
// deleted topics, and applies leader state and config changes. It is
// idempotent.
func (n *Node) reconcile() {
	n.reconcileMu.Lock()
	defer n.reconcileMu.Unlock()
	img := n.ctrl.Image()

	want := make(map[partitionKey]struct{})
	resolved := make(topicConfigs, len(img.Topics))
	for _, name := range img.SortedTopicNames() {
		t, _ := img.Topic(name)
		tc := n.resolveTopicConfig(t.Configs)
		resolved[name] = resolvedTopic{meta: t, cfg: tc}
		cfg := n.logConfig(tc)
		for _, p := range t.Partitions {
			if !contains(p.Replicas, n.cfg.NodeID) {
				continue
			}
			key := partitionKey{name, p.Index}
			want[key] = struct{}{}
			if existing := n.partition(name, p.Index); existing != nil {
				if existing.TopicID() == t.ID {
					existing.SetLeaderState(leaderState(p))
					existing.SetConfig(cfg)
					continue
				}
				// Same name, new topic: the old one was deleted and
				// recreated while we were not looking.
				n.dropPartition(key)
			}
			l, err := n.logs.Create(name, p.Index, t.ID, cfg)
			if err != nil {
				n.logger.Error("create partition log", "topic", name, "partition", p.Index, "err", err)
				continue
			}
			part := partition.New(name, p.Index, t.ID, l, partition.Options{
				ReplicaID: n.cfg.NodeID,
				Logger:    n.logger.With("topic", name, "partition", p.Index),
			})
			part.SetLeaderState(leaderState(p))
			n.mu.Lock()
			n.mu.parts[key] = part
			n.mu.Unlock()
		}
	}
	n.topics.Store(&resolved)
	n.mu.RLock()
	var stale []partitionKey
	for key := range n.mu.parts {
		if _, ok := want[key]; !ok {
			stale = append(stale, key)
		}
	}
	n.mu.RUnlock()
	for _, key := range stale {
		n.dropPartition(key)
	}
	n.reconcileInternalTopic(img, n.offsets)
	n.reconcileInternalTopic(img, n.txnState)
}

// leaderState is a partition's leader state as the metadata image has it.
func leaderState(p metadata.Partition) partition.LeaderState {
	return partition.LeaderState{
		Leader:         p.Leader,
		Epoch:          p.LeaderEpoch,
		PartitionEpoch: p.PartitionEpoch,
		Replicas:       p.Replicas,
		ISR:            p.ISR,
	}
}

func (n *Node) dropPartition(key partitionKey) {
	n.mu.Lock()
	p := n.mu.parts[key]
	delete(n.mu.parts, key)
	n.mu.Unlock()
	if p != nil {
		p.Close()
	}
	if err := n.logs.Delete(key.topic, key.partition); err != nil {
		n.logger.Error("delete partition log", "topic", key.topic, "partition", key.partition, "err", err)
	}
}

// maintainLogs runs retention, time-based rolls and timed flushes, and
// drops expired producer ids every producer.id.expiration.check.interval.ms
// (Kafka's PeriodicProducerExpirationCheck): a pass visits every producer
// of every partition under the partition's lock, too much work for every
// tick.
func (n *Node) maintainLogs() {
	defer n.wg.Done()
	interval := n.settings().LogRetentionCheckInterval
	// Rolls and flushes by time need a finer tick than retention; one
	// second matches Kafka's scheduler granularity for flush.ms closely
	// enough for a development broker.
	tick := time.Second
	if interval > 0 && interval < tick {
		tick = interval
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	expiry := time.NewTicker(n.settings().ProducerIDExpiryCheck)
	defer expiry.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case now := <-t.C:
			n.logs.Maintain(now)
		case now := <-expiry.C:
			n.logs.ExpireProducers(now)
		}
	}
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
