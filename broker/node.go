// Package broker is one klog node: the composition root that wires the
// Kafka transport (broker/wire's Server, which owns connections, framing,
// memory bounds and answer order), the controller (cluster metadata
// through Raft), the partition logs (store/log) and the Kafka API
// handlers together.
//
// Each Kafka API lives in its own file named by key (00_produce.go,
// 01_fetch.go, ...), opening with the versions it serves, its behaviour and
// what it does not implement. apis.go holds the one registration table that
// drives both dispatch and ApiVersions, so klog never advertises a version it
// does not serve. A handler takes the request's wire.RequestContext and
// returns its answer as a wire.Reply.
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
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/clock"
	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/coordinator"
	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/replica"
	"github.com/klogdev/klog/broker/share"
	"github.com/klogdev/klog/broker/telemetry"
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
	// Listen is the address of the node's primary Kafka listener (the
	// first of the listeners config, PLAINTEXT by default), e.g.
	// 127.0.0.1:9092; port 0 picks a free port. Empty: the listener's
	// address in the listeners config.
	Listen string
	// Listener, when set, is a socket already bound to Listen's address
	// (by klog up -n's supervisor), served instead of listening anew;
	// QuorumListener likewise for the node's Raft address as a voter.
	// The node closes them.
	Listener, QuorumListener net.Listener
	// Listeners are sockets already bound for other listeners of the
	// listeners config, by listener name, served instead of binding
	// their addresses. The node closes them.
	Listeners map[string]net.Listener
	// Advertise is the host:port clients are told to connect to on the
	// primary listener; empty means its advertised.listeners entry, else
	// its address.
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
	// SASLMechanisms, for tests, are SASL mechanisms the node has beside
	// klog's (broker/auth), one named as one of klog's in its place: a
	// SASL listener offers those of them its sasl.enabled.mechanisms
	// names.
	SASLMechanisms []auth.Mechanism
	// Principal, for tests, names the principal of each request (from its
	// client id, say) in place of the connection's, so that tests
	// exercise the authorizer with users of their own; nil keeps the
	// principal the connection authenticated as.
	Principal func(rc *wire.RequestContext) string
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
	// authz is the authorizer of the current ACLs and configs
	// (authorize.go); security bounds the denials and failed logins
	// recorded in events (security_events.go).
	authz    atomic.Pointer[authzState]
	security securityEvents
	// producerPrincipals are who got or used each producer id
	// (principals.go).
	producerPrincipals producerPrincipals
	self               metadata.Broker

	// listeners are the node's Kafka listeners, the primary first, each
	// serving its connections with the handlers of apiTable
	// (dispatcher); interBroker names the one other nodes connect to
	// (listeners.go).
	listeners   []*listener
	interBroker string
	// quorumTLS secures the metadata quorum's connections when
	// controller.listener.names is SSL; nil is plaintext (listeners.go).
	quorumTLS *controller.TLS
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
	// quotas enforces the client quotas of the metadata image (quota.go).
	quotas *auth.Quotas
	// telemetry receives client telemetry (keys 71 and 72);
	// clientMetrics are the client metrics resources its subscriptions
	// were made from (reconcile.go, under reconcileMu).
	telemetry     *telemetry.Receiver
	clientMetrics map[string]map[string]string

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
	// reconciled is the index of the last image reconcile put in effect.
	reconciled reconciledIndex
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
	offsets  *internalTopic
	txnState *internalTopic
	groups   *group.Coordinator
	// shares holds the share-partitions this node leads and its share
	// sessions (share groups, KIP-932).
	shares      *share.Manager
	txns        *txn.Coordinator
	producerIDs producerIDs
	// peers sends the coordinators' inter-broker requests to other nodes.
	peers *coordinator.Peers
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

// closeListeners closes those of lns that are set.
func closeListeners(lns ...net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
}

// Start opens the node's storage, starts its controller, waits until the
// controller is ready and starts serving Kafka clients. The node runs until
// Close.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	n, err := newNode(cfg)
	if err != nil {
		closeListeners(append(slices.Collect(maps.Values(cfg.Listeners)), cfg.Listener, cfg.QuorumListener)...)
		return nil, err
	}
	dial, err := n.interBrokerDial()
	if err != nil {
		closeListeners(append(slices.Collect(maps.Values(cfg.Listeners)), cfg.Listener, cfg.QuorumListener)...)
		return nil, err
	}
	if err := n.bindListeners(); err != nil {
		closeListeners(cfg.QuorumListener)
		return nil, err
	}
	if err := n.open(ctx); err != nil {
		n.closeListeners()
		return nil, err
	}
	n.run(dial)
	_, maxOpen := n.logs.OpenFiles()
	n.logger.Info("node ready", "node", n.cfg.NodeID, "listen", n.Addr().String(), "advertise", n.Advertised(), "listeners", n.listenerSummary(), "max_open_log_files", maxOpen)
	return n, nil
}

// newNode makes the node of cfg, with its broker configs, its pools and
// the server of its listener, before anything is opened or started.
func newNode(cfg Config) (*Node, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// A client can make a node repeat one line thousands of times a second
	// (malformed requests in a loop, lookups that keep meeting a bad batch,
	// writes while the disk is full); every line the node logs goes through
	// one rate limit.
	logger = slog.New(ratelog.New(logger.Handler(), ratelog.Options{}))
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
	n.quotas = auth.NewQuotas(auth.QuotaConfig{Samples: int(brokerCfg.Settings().QuotaWindows), Window: brokerCfg.Settings().QuotaWindow})
	n.telemetry = telemetry.NewReceiver(n.clock.Now)
	if err := n.newListeners(brokerCfg); err != nil {
		return nil, err
	}
	return n, nil
}

// open opens the node's storage: its data directory, the controller
// (waiting until it is ready) and the partition logs. On error it closes
// what it opened.
func (n *Node) open(ctx context.Context) error {
	cfg := n.cfg
	endpoints, err := n.endpoints()
	if err != nil {
		return err
	}
	n.self = metadata.Broker{ID: cfg.NodeID, Host: endpoints[0].Host, Port: endpoints[0].Port, Rack: n.static.Settings().Rack}
	if len(endpoints) > 1 || endpoints[0].Name != listenerName || endpoints[0].Protocol != listenerName {
		// One PLAINTEXT listener registers as it always has: without
		// endpoints, which read as it.
		n.self.Endpoints = endpoints
	}

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
		return errors.New("broker: a data directory is required unless Memory is set")
	}

	n.dataDir = dataDir
	if !cfg.Memory {
		if err := checkRaftStoreKept(fs, dataDir); err != nil {
			return err
		}
	}
	n.self.UncleanShutdown = uncleanShutdown(fs, dataDir)
	n.ctrl, err = controller.New(controller.Config{
		NodeID:  cfg.NodeID,
		DataDir: ctrlDir,
		Memory:  ctrlMem,
		Logger:  n.logger, // the controller names its component, and Raft's
		Broker:  n.static,
		Self:    n.self,
		Voters:  n.static.Settings().QuorumVoters,
		Listen:  cfg.QuorumListener,
		TLS:     n.quorumTLS,
	})
	if err != nil {
		return fmt.Errorf("start controller: %w", err)
	}
	if err := n.openLogs(ctx, fs); err != nil {
		n.ctrl.Close()
		return err
	}
	return nil
}

// openLogs waits for the controller and opens the partition logs of fs.
// On error it closes the logs it opened, not the controller.
func (n *Node) openLogs(ctx context.Context, fs vfs.FS) error {
	if err := n.ctrl.WaitReady(ctx); err != nil {
		return fmt.Errorf("wait for controller: %w", err)
	}
	if !n.cfg.Memory {
		if err := log.CheckMetaProperties(fs, n.dataDir, n.ctrl.Image().ClusterID, n.cfg.NodeID); err != nil {
			return err
		}
	}
	// The logs open once the metadata image names the topics, so that
	// each is opened, and recovered, with its topic's configs
	// (index.interval.bytes, max.message.bytes, cleanup.policy, ...), as
	// Kafka's KRaft broker loads its logs once it has the metadata.
	var err error
	n.logs, err = log.OpenManager(fs, n.dataDir, log.ManagerOptions{
		Logger:       n.logger.With("component", "log"),
		Now:          n.clock.Now,
		ConfigFor:    n.topicLogConfig,
		MaxOpenFiles: int(n.static.Settings().LogMaxOpenFiles),
		OnRoll:       n.recordRoll,
		TopicID:      topicIDs(n.ctrl.Image()),
	})
	if err != nil {
		return fmt.Errorf("open logs in %s: %w", n.dataDir, err)
	}
	if n.cfg.Clock == nil {
		if err := n.loadClockOffset(); err != nil {
			n.logs.Close()
			return err
		}
	}
	return nil
}

// run starts the node's fetchers, coordinators and background loops, and
// serves its listeners; dial secures its connections to other nodes.
func (n *Node) run(dial wire.DialConfig) {
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.peers = coordinator.NewPeers(n.cfg.NodeID, func(id int32) (string, bool) { return n.brokerAddr(id, true) }, n.cut, dial)
	rs := n.static.Settings().Replica
	n.replicas = replica.New(replica.Config{
		NodeID:           n.cfg.NodeID,
		Addr:             func(id int32) (string, bool) { return n.brokerAddr(id, false) },
		Logger:           n.logger.With("component", "replica"),
		FetchMaxBytes:    rs.FetchMaxBytes,
		ResponseMaxBytes: rs.FetchResponseMaxBytes,
		MaxWait:          rs.FetchWaitMax,
		Backoff:          rs.FetchBackoff,
		Timeout:          rs.SocketTimeout,
		MaxFrame:         n.static.Settings().SocketRequestMaxBytes,
		Switch:           n.cut,
		Dial:             dial,
	})
	n.isr = controllerISR{n.ctrl, n.self.ID}
	n.isrExpand = make(chan isrProposal, 64)
	n.cleaning = make(chan struct{}, 1)
	n.offsets = n.newOffsetsTopic()
	n.txnState = n.newTxnStateTopic()
	n.shares = n.newShareManager()
	n.groups = n.newGroupCoordinator()
	n.txns = n.newTxnCoordinator()
	n.reconcile()

	n.wg.Add(5)
	go n.maintainISR()
	n.serveListeners()
	go n.watchMetadata()
	go n.maintainLogs()
	go n.runCleaner()
	go n.prefetchProducerIDs()
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

// Addr is the address the primary Kafka listener is bound to.
func (n *Node) Addr() net.Addr { return n.listeners[0].ln.Addr() }

// ID is the node's id (node.id).
func (n *Node) ID() int32 { return n.cfg.NodeID }

// Advertised is the host:port clients are told to use on the primary
// listener.
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
func (n *Node) PausedConnections() int64 {
	var paused int64
	for _, l := range n.listeners {
		paused += l.srv.PausedConnections()
	}
	return paused
}

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

// FenceExited fences broker id at once, through the controller, because
// its process has exited: what klog up -n's supervisor asks of a live node
// when another node dies unasked, so that its partitions get new leaders
// without waiting for broker.session.timeout.ms (controller.FenceExited).
func (n *Node) FenceExited(ctx context.Context, id int32) error { return n.ctrl.FenceExited(ctx, id) }

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
		n.closeListeners()
		if halted == nil {
			n.drainListeners(drainTimeout)
		}
		// Serve closes the connections left and returns once they ended.
		n.cancel()
		n.wg.Wait()
		n.replicas.Close()
		n.txns.Close()
		n.groups.Close()
		n.peers.Close()
		n.telemetry.Close()
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

// listenerName names the listener of Kafka's default listeners config,
// the one a broker registration without endpoints has.
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

// settings returns the node's typed broker settings.
func (n *Node) settings() *config.Settings { return n.broker.Load().Settings() }
