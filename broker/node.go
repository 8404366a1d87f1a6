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
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"path"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/broker/clock"
	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/replica"
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
	// MemoryState, with Memory, is where the node keeps its files and Raft
	// state, so that a node started again on it finds them; nil is a
	// fresh state that goes when the node closes.
	MemoryState *MemoryState
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
	// RequestHook, for tests, sees each request before its handler; nil
	// (the default) costs dispatch one comparison.
	RequestHook RequestHook
	// Clock is the time retention, segment.ms, the cleaner's delete
	// horizons, transaction and session timeouts and offset expiry are
	// judged at; AdvanceClock moves it. nil is a clock of the node's own
	// at real time. Network deadlines, Raft and follower lag use real
	// time whatever it says.
	Clock *clock.Clock
}

// Node is a running klog node.
type Node struct {
	cfg    Config
	logger *slog.Logger
	clock  *clock.Clock // cfg.Clock, or the node's own
	// mem is the node's file system when it keeps its data in memory; the
	// package's tests inject faults into it.
	mem *vfs.MemFS
	// dataDir holds the partition logs: the directory given, or the root
	// of mem.
	dataDir string
	// static is the node's static broker configs (-X at start); broker
	// holds them with the metadata's dynamic broker configs over them, by
	// name and typed (Settings). reconcile swaps broker whole when the
	// dynamic configs change (applyBrokerConfigs); request paths read it
	// once per use through settings.
	static *config.Broker
	broker atomic.Pointer[config.Broker]
	// topics holds every topic's typed configs, resolved again by
	// reconcile on each metadata change; see topicConfig.
	topics atomic.Pointer[topicConfigs]
	ctrl   *controller.Controller
	logs   *log.Manager
	// replicas fetches the partitions this node follows from their
	// leaders; it runs nothing while this node leads all it hosts.
	replicas *replica.Manager
	// isr takes the ISR changes maintainISR proposes (replaced only by
	// tests, under isrMu); isrExpand queues those of followers' fetches
	// for it.
	isrMu     sync.Mutex
	isr       isrProposer
	isrExpand chan isrProposal
	// cleaning holds a token while a cleaning pass runs (see cleaner.go).
	cleaning chan struct{}
	events   *events.Ring // recent events (events_record.go)
	ln       net.Listener
	self     metadata.Broker

	// srv serves the Kafka listener's connections with the handlers of
	// apiTable (dispatcher).
	srv *wire.Server
	// requestPool holds the bytes of requests being read or handled
	// (queued.max.request.bytes), all connections together.
	requestPool *wire.Pool
	// responseBytes counts the bytes of responses waiting to be written
	// (klog.queued.max.response.bytes), all connections together.
	responseBytes *wire.Pool
	// parkedFetches counts the fetches waiting for data.
	parkedFetches atomic.Int64
	// fetchSessions holds the incremental fetch sessions (fetch_session.go).
	fetchSessions *fetchSessions

	ctx    context.Context // cancelled by Close; owned by the node
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}

	closeOnce sync.Once
	closeErr  error

	mu struct {
		sync.RWMutex
		parts map[partitionKey]*partition.Partition
	}
	reconcileMu sync.Mutex // serialises reconcile passes
	// deleted are the topics deleted since the last Metadata that could
	// have auto-created them (deletedtopics.go).
	deleted deletedTopics
	// hwMu serialises high watermark checkpoints; written is the last
	// one written.
	hwMu struct {
		sync.Mutex
		written map[log.TopicPartition]int64
	}

	// offsets and txnState describe the coordinators' internal topics,
	// __consumer_offsets and __transaction_state.
	offsets     *internalTopic
	txnState    *internalTopic
	groups      *group.Coordinator
	txns        *txn.Coordinator
	producerIDs producerIDs
	// peers sends the coordinators' inter-broker requests to other nodes.
	peers *peers
	// cut is the fault switch of Isolate: it tracks the node's
	// connections to other nodes' listeners (peers, fetchers) and the
	// other nodes' connections to its own.
	cut *wire.Switch
	// stats are the node's counters for its metrics (metrics_snapshot.go).
	stats nodeStats
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
	// node.id, when given, is the node's ID; Config.NodeID is for Go
	// callers and must then agree or be 0.
	if id := brokerCfg.Settings().NodeID; id >= 0 {
		if cfg.NodeID != 0 && cfg.NodeID != id {
			return nil, fmt.Errorf("%w: node.id=%d but the node was started as node %d", config.ErrInvalidValue, id, cfg.NodeID)
		}
		cfg.NodeID = id
	}
	n := &Node{cfg: cfg, logger: logger, done: make(chan struct{}), cut: &wire.Switch{}, events: events.New(events.DefaultCapacity, nil)}
	n.clock = cmp.Or(cfg.Clock, clock.New())
	n.static = brokerCfg
	n.broker.Store(brokerCfg)
	n.mu.parts = make(map[partitionKey]*partition.Partition)
	n.requestPool = wire.NewPool(brokerCfg.Settings().QueuedMaxRequestBytes)
	n.responseBytes = wire.NewPool(brokerCfg.Settings().QueuedMaxResponseBytes)
	n.fetchSessions = newFetchSessions()
	n.srv = wire.NewServer(wire.ServerConfig{
		Listener:        listenerName,
		Logger:          logger,
		MaxRequestBytes: brokerCfg.Settings().SocketRequestMaxBytes,
		Requests:        n.requestPool,
		Responses:       n.responseBytes,
		Limits:          n.connLimits,
		Switch:          n.cut,
	}, dispatcher{n})

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
	n.self = metadata.Broker{ID: cfg.NodeID, Host: host, Port: port, Rack: brokerCfg.Settings().Rack}

	fs := vfs.OS()
	dataDir := cfg.DataDir
	ctrlDir := cfg.DataDir
	var ctrlMem *controller.MemoryStores
	if cfg.Memory {
		st := cfg.MemoryState
		if st == nil {
			st = NewMemoryState()
		}
		n.mem, ctrlMem = st.fs, st.raft
		fs = n.mem
		dataDir = "/klog"
		ctrlDir = ""
	}
	if dataDir == "" {
		ln.Close()
		return nil, errors.New("broker: a data directory is required unless Memory is set")
	}

	n.dataDir = dataDir
	if !cfg.Memory {
		if err := checkRaftStoreKept(fs, dataDir); err != nil {
			ln.Close()
			return nil, err
		}
	}
	n.self.UncleanShutdown = uncleanShutdown(fs, dataDir)
	n.ctrl, err = controller.New(controller.Config{
		NodeID:  cfg.NodeID,
		DataDir: ctrlDir,
		Memory:  ctrlMem,
		Logger:  logger.With("component", "controller"),
		Broker:  brokerCfg,
		Self:    n.self,
		Voters:  brokerCfg.Settings().QuorumVoters,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start controller: %w", err)
	}
	if err := n.ctrl.WaitReady(ctx); err != nil {
		n.ctrl.Close()
		ln.Close()
		return nil, fmt.Errorf("wait for controller: %w", err)
	}
	if !cfg.Memory {
		if err := log.CheckMetaProperties(fs, dataDir, n.ctrl.Image().ClusterID, cfg.NodeID); err != nil {
			n.ctrl.Close()
			ln.Close()
			return nil, err
		}
	}
	// The logs open once the metadata image names the topics, so that
	// each is opened, and recovered, with its topic's configs
	// (index.interval.bytes, max.message.bytes, cleanup.policy, ...), as
	// Kafka's KRaft broker loads its logs once it has the metadata.
	n.logs, err = log.OpenManager(fs, dataDir, log.ManagerOptions{
		Logger:       logger.With("component", "log"),
		Now:          n.clock.Now,
		ConfigFor:    n.topicLogConfig,
		MaxOpenFiles: int(brokerCfg.Settings().LogMaxOpenFiles),
		OnRoll:       n.recordRoll,
		TopicID:      topicIDs(n.ctrl.Image()),
	})
	if err != nil {
		n.ctrl.Close()
		ln.Close()
		return nil, fmt.Errorf("open logs in %s: %w", dataDir, err)
	}
	if cfg.Clock == nil {
		if err := n.loadClockOffset(); err != nil {
			n.logs.Close()
			n.ctrl.Close()
			ln.Close()
			return nil, err
		}
	}

	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.peers = newPeers(cfg.NodeID, func(id int32) (string, bool) { return n.brokerAddr(id, true) }, n.cut)
	rs := brokerCfg.Settings().Replica
	n.replicas = replica.New(replica.Config{
		NodeID:           cfg.NodeID,
		Addr:             func(id int32) (string, bool) { return n.brokerAddr(id, false) },
		Logger:           logger.With("component", "replica"),
		FetchMaxBytes:    rs.FetchMaxBytes,
		ResponseMaxBytes: rs.FetchResponseMaxBytes,
		MaxWait:          rs.FetchWaitMax,
		Backoff:          rs.FetchBackoff,
		Timeout:          rs.SocketTimeout,
		MaxFrame:         brokerCfg.Settings().SocketRequestMaxBytes,
		Switch:           n.cut,
	})
	n.isr = controllerISR{n.ctrl, n.self.ID}
	n.isrExpand = make(chan isrProposal, 64)
	n.cleaning = make(chan struct{}, 1)
	n.offsets = n.newOffsetsTopic()
	n.txnState = n.newTxnStateTopic()
	n.groups = n.newGroupCoordinator()
	n.txns = n.newTxnCoordinator()
	n.reconcile()

	n.wg.Add(6)
	go n.maintainISR()
	go func() {
		defer n.wg.Done()
		n.srv.Serve(n.ctx, ln)
	}()
	go n.watchMetadata()
	go n.maintainLogs()
	go n.runCleaner()
	go n.prefetchProducerIDs()
	_, maxOpen := n.logs.OpenFiles()
	logger.Info("node ready", "node", cfg.NodeID, "listen", ln.Addr().String(), "advertise", n.Advertised(), "max_open_log_files", maxOpen)
	return n, nil
}

// uncleanShutdown reports whether the data directory dir holds data left
// without the clean-shutdown marker its logs' Close writes: the node's
// last run was killed or crashed, and recovery may cut its logs short.
// It is read before the logs open (and remove the marker), for the
// node's registration. An empty or new directory is not unclean.
func uncleanShutdown(fs vfs.FS, dir string) bool {
	names, err := fs.List(dir)
	if err != nil || len(names) == 0 {
		return false
	}
	_, err = fs.Stat(path.Join(dir, log.CleanShutdownFile))
	return err != nil
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

// ID is the node's id (node.id).
func (n *Node) ID() int32 { return n.cfg.NodeID }

// Advertised is the host:port clients are told to use.
func (n *Node) Advertised() string { return n.self.Addr() }

// QueuedRequestBytes returns the bytes of requests being read or handled,
// taken from queued.max.request.bytes: what has arrived of each, not what
// their size prefixes claim.
func (n *Node) QueuedRequestBytes() int64 { return n.requestPool.Reserved() }

// QueuedResponseBytes returns the bytes of responses waiting to be
// written, all connections together (klog.queued.max.response.bytes).
func (n *Node) QueuedResponseBytes() int64 { return n.responseBytes.Reserved() }

// PausedConnections returns how many connections are not being read
// because their responses are not being taken.
func (n *Node) PausedConnections() int64 { return n.srv.PausedConnections() }

// ParkedFetches returns how many fetches are waiting for data (a long
// poll: less than MinBytes available, MaxWait not over).
func (n *Node) ParkedFetches() int64 { return n.parkedFetches.Load() }

// Isolate cuts the node off from the other nodes, both ways, until Heal:
// the metadata quorum (Raft, forwarded proposals, broker heartbeats),
// replication (its fetchers' connections to leaders, and other nodes'
// fetches from it) and the coordinators' requests (transaction markers,
// verifications), sent or received. Open connections are closed and new
// ones refused; an inter-broker connection to its listener is known by
// its client id (wire.IsPeerClientID) and closed at its first request.
// Its clients stay connected and are served from what it has. A fault
// switch inside the node's transports, for tests and `klog node
// isolate`; on a single node it cuts nothing a client sees.
func (n *Node) Isolate() {
	cut := n.cut.Isolate()
	n.ctrl.Isolate()
	n.logger.Info("node isolated from the other nodes", "inter_broker_connections_cut", cut)
}

// Heal ends Isolate: the node talks to the other nodes again.
func (n *Node) Heal() {
	n.cut.Heal()
	n.ctrl.Heal()
	n.logger.Info("node healed")
}

// ControlledShutdown moves partition leadership and ISR membership off
// this node through the controller and waits, bounded by ctx, until it
// leads nothing: what SIGTERM does before Close, so a rolling restart
// does not interrupt acks=all producers. It returns at once on a single
// node.
func (n *Node) ControlledShutdown(ctx context.Context) error { return n.ctrl.ControlledShutdown(ctx) }

// Done is closed once the node has stopped.
func (n *Node) Done() <-chan struct{} { return n.done }

// Close stops the node: it stops accepting, lets each client connection
// finish the request it is handling and write every answer it owes
// (wire.Server.Drain, for at most drainTimeout), closes the connections, waits
// for every goroutine it started, then flushes and closes the logs and the
// controller. It is safe to call more than once.
func (n *Node) Close() error { return n.close(nil) }

// Halt stops the node as Close does, except that it calls halted after
// every request, fetcher, coordinator and the controller have stopped and
// before the logs are closed. It is for in-process tests of a killed or
// crashed node: halted takes the state such a node leaves
// (MemoryState.Killed or Crashed), since closing the logs cleanly writes
// what a killed process never would.
func (n *Node) Halt(halted func()) error { return n.close(halted) }

func (n *Node) close(halted func()) error {
	n.closeOnce.Do(func() {
		n.ln.Close()
		if halted == nil {
			n.srv.Drain(drainTimeout)
		}
		// Serve closes the connections left and returns once they ended.
		n.cancel()
		n.wg.Wait()
		n.replicas.Close()
		n.txns.Close()
		n.groups.Close()
		n.peers.close()
		ctrlErr := n.ctrl.Close()
		if halted != nil {
			// A killed node writes no checkpoint: what follows goes to
			// the state it leaves behind.
			halted()
		}
		hwErr := n.checkpointHighWatermarks()
		n.closeErr = errors.Join(hwErr, n.logs.Close(), ctrlErr)
		close(n.done)
	})
	return n.closeErr
}

// drainTimeout bounds how long Close waits for client connections to
// finish their requests and write their answers.
const drainTimeout = 2 * time.Second

// listenerName names the node's one Kafka listener, as Kafka's default
// listeners config does (wire.RequestContext.Listener).
const listenerName = "PLAINTEXT"

// connLimits are the bounds of the listener's connections, from the
// current broker settings.
func (n *Node) connLimits() wire.Limits {
	s := n.settings()
	return wire.Limits{
		ProgressTimeout:        s.RequestProgressTimeout,
		MaxIdle:                s.ConnectionsMaxIdle,
		MaxInflight:            int(s.MaxInflightRequests),
		MaxQueuedResponseBytes: s.QueuedMaxResponseBytesPerConnection,
		MaxConnections:         int(s.MaxConnections),
		MaxConnectionsPerIP:    int(s.MaxConnectionsPerIP),
	}
}

// partition returns the local replica of topic/partition, or nil.
func (n *Node) partition(topic string, index int32) *partition.Partition {
	n.mu.RLock()
	p := n.mu.parts[partitionKey{topic, index}]
	n.mu.RUnlock()
	return p
}

// partitions returns the node's local replicas, in no order.
func (n *Node) partitions() []*partition.Partition {
	n.mu.RLock()
	defer n.mu.RUnlock()
	parts := make([]*partition.Partition, 0, len(n.mu.parts))
	for _, p := range n.mu.parts {
		parts = append(parts, p)
	}
	return parts
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
	n.applyBrokerConfigs(img)

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
					n.setLeaderState(existing, img, p)
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
			hw, _ := n.logs.CheckpointedHighWatermark(name, p.Index)
			part := partition.New(name, p.Index, t.ID, l, partition.Options{
				ReplicaID:           n.cfg.NodeID,
				Logger:              n.logger.With("topic", name, "partition", p.Index),
				ReplicaLagTimeMaxMs: n.settings().Replica.LagTimeMax.Milliseconds(),
				HighWatermark:       hw,
				Durable:             n.settings().ProduceDurable,
			})
			n.mu.Lock()
			n.mu.parts[key] = part
			n.mu.Unlock()
			n.setLeaderState(part, img, p)
		}
	}
	if prev := n.topics.Swap(&resolved); prev != nil {
		n.deleted.update(*prev, resolved)
	}
	n.stats.dropDeletedTopics(img)
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

// applyBrokerConfigs puts img's dynamic broker configs (the cluster-wide
// defaults and this node's) over the static ones, when they changed.
// reconcile then resolves every topic's configs again with them and gives
// the logs their new settings: a topic without its own override picks up
// a new log.retention.ms or log.segment.bytes at once.
func (n *Node) applyBrokerConfigs(img *metadata.Image) {
	if b := n.brokerConfig(img); b != n.broker.Load() {
		n.broker.Store(b)
	}
}

// brokerConfig is the node's broker configs with img's dynamic ones over
// the static ones: those reconcile applied when they are img's, else
// resolved now, so that an answer right after a change (DescribeConfigs
// on the node that committed it) already shows it.
func (n *Node) brokerConfig(img *metadata.Image) *config.Broker {
	clusterDefault, own := img.BrokerConfigs[""], img.BrokerConfigs[strconv.Itoa(int(n.cfg.NodeID))]
	cur := n.broker.Load()
	if cur.DynamicEqual(clusterDefault, own) {
		return cur
	}
	b, err := n.static.WithDynamic(clusterDefault, own)
	if err != nil {
		n.logger.Warn("dynamic broker configs", "err", err)
	}
	return b
}

// setLeaderState gives part its leader state from the image's p and its
// role with it: as leader it is fetched by nobody here (its follower
// states are kept or reset by SetLeaderState); as follower its leader's
// fetcher fetches it, truncating first at a new leader or epoch; with no
// leader it is fetched by nobody.
func (n *Node) setLeaderState(part *partition.Partition, img *metadata.Image, p metadata.Partition) {
	prev := part.LeaderState()
	defer func() { n.recordLeaderState(part, prev, part.LeaderState()) }()
	if p.Leader == n.cfg.NodeID || p.Leader < 0 {
		// Fetching stops before the replica leads, as Kafka's
		// makeLeader removes the fetcher first: no replicated append
		// races the first append as leader.
		n.replicas.Unfollow(part)
		part.SetLeaderState(leaderState(img, p))
	} else {
		part.SetLeaderState(leaderState(img, p))
		n.replicas.Follow(part, p.Leader)
	}
	n.stats.isrChanged(n.cfg.NodeID, prev, part.LeaderState())
	if prev.Leader != p.Leader || prev.Epoch != p.LeaderEpoch {
		n.logger.Debug("replica role", "topic", part.Topic(), "partition", part.Index(),
			"leader", p.Leader, "leader_epoch", p.LeaderEpoch, "is_leader", p.Leader == n.cfg.NodeID)
	}
}

// brokerAddr is broker id's host:port as the current metadata image has
// it; false if the image has no such broker, or if unfenced is set and it
// is fenced. The coordinators' peers ask for unfenced brokers only (a
// fenced node is not sent markers or verifications); the fetchers for any
// broker the image has: a follower fetches from the leader it names.
func (n *Node) brokerAddr(id int32, unfenced bool) (string, bool) {
	b, ok := n.ctrl.Image().Brokers[id]
	if !ok || unfenced && b.Fenced {
		return "", false
	}
	return b.Addr(), true
}

// leaderState is a partition's leader state as the metadata image img
// has it.
func leaderState(img *metadata.Image, p metadata.Partition) partition.LeaderState {
	var ineligible []int32
	for _, id := range p.Replicas {
		if b, ok := img.Brokers[id]; !ok || !b.Active() {
			ineligible = append(ineligible, id)
		}
	}
	return partition.LeaderState{
		Leader:         p.Leader,
		Epoch:          p.LeaderEpoch,
		PartitionEpoch: p.PartitionEpoch,
		Replicas:       p.Replicas,
		ISR:            p.ISR,
		Ineligible:     ineligible,
	}
}

func (n *Node) dropPartition(key partitionKey) {
	n.mu.Lock()
	p := n.mu.parts[key]
	delete(n.mu.parts, key)
	n.mu.Unlock()
	if p != nil {
		n.replicas.Unfollow(p)
		p.Close()
	}
	if err := n.logs.Delete(key.topic, key.partition); err != nil {
		n.logger.Error("delete partition log", "topic", key.topic, "partition", key.partition, "err", err)
	}
}

// maintainLogs runs time-based rolls and timed flushes every tick,
// retention every log.retention.check.interval.ms (Kafka's
// kafka-log-retention task), and drops expired producer ids every
// producer.id.expiration.check.interval.ms (Kafka's
// PeriodicProducerExpirationCheck): a pass visits every producer of every
// partition under the partition's lock, too much work for every tick.
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
	retention := time.NewTicker(interval)
	defer retention.Stop()
	expiry := time.NewTicker(n.settings().ProducerIDExpiryCheck)
	defer expiry.Stop()
	hws := time.NewTicker(n.settings().Replica.HighWatermarkCheckpointInterval)
	defer hws.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			n.logs.Maintain(n.clock.Now())
		case <-retention.C:
			n.logs.ApplyRetention(n.clock.Now())
		case <-expiry.C:
			n.logs.ExpireProducers(n.clock.Now())
		case <-hws.C:
			if err := n.checkpointHighWatermarks(); err != nil && !errors.Is(err, log.ErrClosed) {
				n.logger.Warn("high watermark checkpoint failed", "err", err)
			}
		}
	}
}

// checkpointHighWatermarks writes every local replica's high watermark to
// replication-offset-checkpoint, every
// replica.high.watermark.checkpoint.interval.ms and at Close, as Kafka's
// ReplicaManager does; a replica opened at the next start takes its high
// watermark from it. Nothing is written when no high watermark moved.
func (n *Node) checkpointHighWatermarks() error {
	n.mu.RLock()
	hws := make(map[log.TopicPartition]int64, len(n.mu.parts))
	for key, p := range n.mu.parts {
		hws[log.TopicPartition{Topic: key.topic, Partition: key.partition}] = p.HighWatermark()
	}
	n.mu.RUnlock()
	n.hwMu.Lock()
	defer n.hwMu.Unlock()
	if n.hwMu.written != nil && maps.Equal(hws, n.hwMu.written) {
		return nil
	}
	if err := n.logs.CheckpointHighWatermarks(hws); err != nil {
		return err
	}
	n.hwMu.written = hws
	return nil
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
