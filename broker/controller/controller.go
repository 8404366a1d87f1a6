// Package controller runs klog's metadata quorum: a Raft group
// (hashicorp/raft) whose state machine applies broker/metadata records
// into the cluster image, plus the proposers that validate admin requests,
// place replicas and turn them into records.
//
// # Storage and transport
//
// With a data directory, the Raft log and stable store are one bbolt file,
// <data-dir>/raft/raft.db (raft-boltdb), and snapshots (the encoded image)
// live in <data-dir>/raft/snapshots/. With no data directory everything is
// in memory. A single node is a quorum of one: it bootstraps a one-voter
// configuration on its first start only, and uses Raft's in-process
// transport because it never talks to a peer. With Config.Voters (several
// voters) every voter bootstraps the full voter configuration on its first
// start and uses a TCP transport on its own voter address, which it shares
// with the forwarding server (quorumnet.go, forward.go): a proposal made
// on a follower is forwarded to the active controller. With Config.TLS
// every such connection is mutual TLS (controller.listener.names naming
// an SSL listener). The state machine and proposers do not change.
//
// # Startup
//
// A one-voter group elects itself after Raft's heartbeat timeout, so the
// timeouts are the library's minimum for a single voter (see raftTimeouts).
// On winning leadership the controller records itself as controller, sets
// a cluster ID on first start and registers this node's broker, in one
// batch; WaitReady returns once that is applied.
//
// # Concurrency
//
// The image is published through an atomic pointer; Changed hands out a
// channel closed on the next publish. Raft applies entries on one
// goroutine, so records are validated against the image a second time,
// in order, inside Apply: two concurrent creates of one topic cannot both
// succeed. Goroutines: Raft's own (stopped by Shutdown), the leadership
// loop and one waiter per in-flight proposal, all joined by Close.
//
// The package imports broker/metadata and broker/config; it must never
// import partitions, the wire layer or storage of partition data.
package controller

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
)

// Config configures a controller.
type Config struct {
	// NodeID is this node's ID, the Raft server ID and the broker ID.
	NodeID int32
	// DataDir holds the Raft state under DataDir/raft; "" keeps everything
	// in memory.
	DataDir string
	// Memory, with no DataDir, is where the Raft state is kept, so that a
	// controller made again on the same Memory finds its log, term and
	// vote (in-process tests restarting one node); nil keeps it in fresh
	// stores of its own.
	Memory *MemoryStores
	// Logger receives the controller's and Raft's logs; nil discards them.
	Logger *slog.Logger
	// Broker holds the static broker configs (num.partitions and the
	// other defaults); nil means all defaults.
	Broker *config.Broker
	// Self is this node's broker registration (host, port, rack, whether
	// its last shutdown was clean); its ID is set to NodeID and, when
	// zero, its Incarnation to a new random one.
	Self metadata.Broker
	// Voters is the metadata quorum (controller.quorum.voters). Empty
	// (or this node alone) is the single-node quorum with Raft's
	// in-process transport. Otherwise NodeID must be among them, and this
	// node listens on its own entry's address for Raft and for proposals
	// forwarded from the other voters.
	Voters []config.Voter
	// Listen, when set, is a socket already bound to this voter's quorum
	// address, served instead of listening anew; the controller closes
	// it.
	Listen net.Listener
	// TLS, when set, secures the quorum's connections with mutual TLS;
	// nil is plaintext. A single-node quorum makes none.
	TLS *TLS
	// ApplyTimeout bounds how long a proposal waits to enter the Raft
	// log; 0 means 10s.
	ApplyTimeout time.Duration
}

// Controller is one node's member of the metadata quorum.
type Controller struct {
	cfg   Config
	log   *slog.Logger
	raft  *raft.Raft
	trans raft.Transport
	net   *quorumNet // nil for the single-node quorum
	// observer is set on a broker-only node: a Raft non-voter.
	observer bool
	bolt     *raftboltdb.BoltStore // nil in memory mode

	img   atomic.Pointer[metadata.Image]
	ready atomic.Bool // see Ready
	// inOffice is set while this node leads and has finished its leader
	// setup.
	inOffice atomic.Bool
	// caughtUp is set, in a quorum with peers, once this run's image has
	// held everything the active controller had applied (catchUpLoop).
	caughtUp atomic.Bool
	closed   atomic.Bool
	// shuttingDown is set by ControlledShutdown: this run registered the
	// node as shutting down and must not register it back.
	shuttingDown atomic.Bool
	// unregistered is set once an UnregisterBroker of this run's
	// registration applies: this run must not register the node back,
	// as a Kafka broker stays unregistered until it restarts.
	unregistered atomic.Bool
	placement    atomic.Int64 // rotating start index for replica placement
	// creating holds one token for the topic or partition creation under
	// way, so each checks klog.max.partitions against the image it then
	// commits on; waiting for it honours the request's context.
	creating chan struct{}
	// forwarding and serving bound the forwarded requests in flight, sent
	// and served.
	forwarding, serving chan struct{}
	// raftStarted is closed once raft is set: the forwarding server,
	// listening before, serves nothing until then.
	raftStarted chan struct{}
	// repairNow wakes the liveness loop to fix partitions after a
	// fencing change (elect.go).
	repairNow chan struct{}

	stop chan struct{} // closed by Close
	wg   sync.WaitGroup

	mu struct {
		sync.Mutex
		changed chan struct{} // closed and replaced on every publish
		closing bool          // set by Close; no new goroutines after it
		// forwardWaiters counts forwarded proposals waiting for their
		// index to be applied here; while there are any, results keeps
		// the result of every entry applied (see keepResult).
		forwardWaiters int
		results        map[uint64]applyResult
		// lastSeen is when the active controller last heard from each
		// broker (liveness.go).
		lastSeen map[int32]time.Time
		// progress is what the active controller last heard of each
		// node's log (describequorum.go).
		progress map[int32]progress
	}
	closeOnce sync.Once
	closeErr  error
}

// raftTimeouts returns the Raft timeouts. A lone voter does not wait for
// them to lead: it elects itself at once (electAlone), and the heartbeat
// timeout only backs that up. Its leader re-checks its lease every
// LeaderLeaseTimeout; at the library minimum (5ms) those wakeups cost an
// idle node 22–28ms of CPU a second, at 100ms 4ms. Groups with peers are tuned for
// loopback: a follower calls an election after 300–600ms without hearing
// from the leader, so failover takes about a second, and a leader that
// cannot reach a majority for 250ms steps down (hashicorp/raft's leader
// lease, its check-quorum). They leave room for the race detector and a
// busy machine, where a tighter heartbeat makes leaders flap.
func raftTimeouts(voters int) (heartbeat, election, lease time.Duration) {
	if voters <= 1 {
		return 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond
	}
	return 300 * time.Millisecond, 300 * time.Millisecond, 250 * time.Millisecond
}

// commitTimeout bounds how long a follower waits to learn a commit when no
// further proposal carries it (randomised up to twice as long). It costs
// an idle leader an empty AppendEntries per follower every 10-20ms: an
// idle 3-node cluster on loopback used 6.6% of a core, 3.9% at the
// default, 10.8% at 5ms (hashicorp/raft's own test setting).
const commitTimeout = 10 * time.Millisecond

// New opens the Raft stores, starts Raft and bootstraps a one-voter cluster
// when there is no existing state. It returns without waiting for
// leadership; see WaitReady.
func New(cfg Config) (*Controller, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	self, peers, observer := selfVoter(cfg.NodeID, cfg.Voters)
	c := newController(cfg)
	hlog := newRaftLogger(cfg.Logger)
	voters := 1 + len(peers)
	if observer {
		voters = len(peers)
	}
	rc := raftConfig(cfg.NodeID, voters, hlog)
	st, err := c.openStores(hlog)
	if err != nil {
		return nil, err
	}
	addr := raft.ServerAddress("klog-node-" + strconv.Itoa(int(cfg.NodeID)))
	boot, lone, err := c.openTransport(self, observer, len(peers) > 0, rc.LocalID, addr, hlog)
	if err != nil {
		c.closeStores()
		return nil, err
	}
	existing, err := c.bootstrap(rc, st, boot)
	if err != nil {
		c.closeStores()
		return nil, err
	}
	c.raft, err = raft.NewRaft(rc, &fsm{c: c}, st.logs, st.stable, st.snaps, c.trans)
	if err != nil {
		c.closeStores()
		return nil, fmt.Errorf("controller: start raft: %w", err)
	}
	close(c.raftStarted)
	if err := c.checkVoters(rc.LocalID, boot, observer); err != nil {
		c.raft.Shutdown().Error()
		c.closeStores()
		return nil, err
	}
	if lone != nil {
		c.electAlone(lone, rc.LocalID, addr)
	}
	electFirst := c.net != nil && (!existing || st.together) && !observer && firstVoter(boot) == rc.LocalID
	c.startLoops(electFirst, boot, rc.HeartbeatTimeout)
	return c, nil
}

// withDefaults checks cfg and fills in what it leaves unset, this run's
// incarnation among them.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.NodeID < 0 {
		return cfg, fmt.Errorf("controller: node id %d is negative", cfg.NodeID)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Broker == nil {
		cfg.Broker = config.DefaultBroker()
	}
	if cfg.ApplyTimeout <= 0 {
		cfg.ApplyTimeout = 10 * time.Second
	}
	cfg.Self.ID = cfg.NodeID
	if cfg.Self.Incarnation == (metadata.UUID{}) {
		// Each run of the node is a new incarnation (metadata.Broker).
		if _, err := rand.Read(cfg.Self.Incarnation[:]); err != nil {
			return cfg, fmt.Errorf("controller: generate incarnation id: %w", err)
		}
	}
	return cfg, nil
}

// newController returns the controller of cfg, with an empty image and
// neither stores nor Raft.
func newController(cfg Config) *Controller {
	c := &Controller{cfg: cfg, log: cfg.Logger.With("component", "controller"), stop: make(chan struct{}), creating: make(chan struct{}, 1),
		forwarding: make(chan struct{}, maxForwardInFlight), serving: make(chan struct{}, maxForwardInFlight),
		repairNow: make(chan struct{}, 1), raftStarted: make(chan struct{})}
	c.mu.changed = make(chan struct{})
	c.mu.results = make(map[uint64]applyResult)
	c.mu.lastSeen = make(map[int32]time.Time)
	c.mu.progress = make(map[int32]progress)
	c.img.Store(metadata.Empty())
	return c
}

// raftConfig returns the Raft config of node id in a quorum of voters.
func raftConfig(id int32, voters int, hlog *raftLogger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(strconv.Itoa(int(id)))
	rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = raftTimeouts(voters)
	// Followers learn that an entry is committed only from the leader's
	// next AppendEntries: the next proposal's, or, when none comes, one
	// sent after CommitTimeout (10-20ms here, 50-100ms by default). At the
	// default a topic created through one node stayed unknown to the
	// others' Metadata, ListOffsets and Fetch for up to 100ms, and
	// clients that learned it from the leader failed there
	// (UNKNOWN_TOPIC_OR_PARTITION); Kafka's quorum completes its
	// followers' waiting fetches as soon as the high watermark moves.
	rc.CommitTimeout = commitTimeout
	rc.Logger = hlog
	// Pre-vote guards against disruptive candidates among peers; a lone
	// voter has none, and skipping it saves a step before leading.
	rc.PreVoteDisabled = voters <= 1
	return rc
}

// raftStores are the stores Raft runs on.
type raftStores struct {
	logs   raft.LogStore
	stable raft.StableStore
	snaps  raft.SnapshotStore
	// together: the voters start at once from copies of one quorum's
	// stores (MemoryStores.Clone), as a new quorum's do.
	together bool
}

// openStores opens the Raft stores: in the data directory, the bbolt file
// (c.bolt) and the snapshot directory; without one, cfg.Memory's or new
// ones in memory.
func (c *Controller) openStores(hlog *raftLogger) (raftStores, error) {
	if c.cfg.DataDir == "" {
		mem := c.cfg.Memory
		if mem == nil {
			mem = NewMemoryStores()
		}
		st := raftStores{logs: mem.store, stable: mem.store, snaps: mem.snaps, together: mem.together}
		mem.together = false
		return st, nil
	}
	dir := filepath.Join(c.cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return raftStores{}, fmt.Errorf("controller: create raft dir: %w", err)
	}
	path := filepath.Join(c.cfg.DataDir, RaftDBFile)
	if err := checkRaftDB(path); err != nil {
		return raftStores{}, err
	}
	var err error
	c.bolt, err = raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		return raftStores{}, fmt.Errorf("controller: open raft log %s: %w", dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hlog)
	if err != nil {
		c.bolt.Close()
		return raftStores{}, fmt.Errorf("controller: open raft snapshots %s: %w", dir, err)
	}
	return raftStores{logs: c.bolt, stable: c.bolt, snaps: snaps}, nil
}

// openTransport sets c.trans and returns the configuration a new quorum
// starts with. A voter with peers, or an observer, listens for its peers
// (c.net); a lone voter talks to itself in memory, through the transport
// it returns.
func (c *Controller) openTransport(self config.Voter, observer, peers bool, id raft.ServerID, addr raft.ServerAddress, hlog *raftLogger) (raft.Configuration, *raft.InmemTransport, error) {
	if !observer && !peers {
		if c.cfg.Listen != nil {
			c.cfg.Listen.Close() // a lone voter has no peers to listen for
		}
		_, lone := raft.NewInmemTransport(addr)
		c.trans = lone
		return raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: id, Address: addr}}}, lone, nil
	}
	listen := self.Addr()
	if observer {
		// A broker-only node listens where it is advertised, on a port
		// of its own choosing, and tells the active controller
		// (observer.go).
		c.observer = true
		listen = net.JoinHostPort(c.cfg.Self.Host, "0")
		if c.cfg.Listen != nil {
			c.cfg.Listen.Close()
			c.cfg.Listen = nil
		}
	}
	var err error
	c.net, err = listenQuorum(listen, c.cfg.Listen, c.log, c.cfg.TLS, c.serveForward)
	if err != nil {
		return raft.Configuration{}, nil, err
	}
	c.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  c.net,
		MaxPool: 3,
		Timeout: 2 * time.Second,
		Logger:  hlog,
	})
	return voterConfiguration(c.cfg.Voters), nil, nil
}

// bootstrap checks that the stores are this node's and, on a first start,
// records the node id and bootstraps boot. It reports whether the stores
// held Raft state already.
func (c *Controller) bootstrap(rc *raft.Config, st raftStores, boot raft.Configuration) (existing bool, err error) {
	existing, err = raft.HasExistingState(st.logs, st.stable, st.snaps)
	if err != nil {
		return false, fmt.Errorf("controller: read raft state: %w", err)
	}
	if err := checkNodeID(st.stable, c.cfg.NodeID, c.cfg.DataDir); err != nil {
		return false, err
	}
	if existing {
		return true, nil
	}
	if c.net != nil {
		// A quorum's voters share one configuration, so that alone
		// cannot tell whose directory this is.
		if err := st.stable.SetUint64(keyNodeID, uint64(c.cfg.NodeID)+1); err != nil {
			return false, fmt.Errorf("controller: record node id: %w", err)
		}
	}
	// Every voter bootstraps the same configuration on its first start,
	// which hashicorp/raft allows: they agree, so whoever wins the first
	// election leads them all. An observer bootstraps nothing: it learns
	// the configuration from the leader.
	if !c.observer {
		if err := raft.BootstrapCluster(rc, st.logs, st.stable, st.snaps, c.trans, boot); err != nil {
			return false, fmt.Errorf("controller: bootstrap: %w", err)
		}
	}
	return false, nil
}

// startLoops starts the controller's goroutines; with electFirst, the one
// that calls the quorum's first election after heartbeat.
func (c *Controller) startLoops(electFirst bool, boot raft.Configuration, heartbeat time.Duration) {
	if electFirst {
		c.wg.Add(1)
		go c.electFirst(boot, heartbeat)
	}
	c.wg.Add(1)
	go c.leadershipLoop()
	if c.net != nil {
		c.wg.Add(3)
		go c.registerLoop()
		go c.livenessLoop()
		go c.catchUpLoop()
	}
	if c.observer {
		c.wg.Add(1)
		go c.joinLoop()
	}
}

// electAlone starts the election of a single-voter quorum at once. Raft
// would first wait out its heartbeat timeout (5 to 10 ms at the lowest it
// allows) for a leader that cannot exist, and that wait was most of a
// node's start. A TimeoutNow request, the one a leadership transfer ends
// with, sent to itself makes the follower a candidate now; as the only
// voter it wins at once. Any election is safe in Raft, so this one is too
// if the node already leads (it would win again). If the request fails
// the heartbeat timeout still elects it.
func (c *Controller) electAlone(t *raft.InmemTransport, id raft.ServerID, addr raft.ServerAddress) {
	t.Connect(addr, t)
	c.standNow(t, id, addr)
}

// standNow sends this node, over t, the TimeoutNow request a leadership
// transfer ends with: a follower that gets it stands for election at
// once. If it fails, the heartbeat timeout starts the election instead.
func (c *Controller) standNow(t raft.Transport, id raft.ServerID, addr raft.ServerAddress) {
	req := &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(id), Addr: []byte(addr)}}
	if err := t.TimeoutNow(id, addr, req, &raft.TimeoutNowResponse{}); err != nil {
		c.log.Debug("starting the election at once failed; the heartbeat timeout will", "err", err)
	}
}

// firstVoter is the voter of cfg with the lowest ID: on a new quorum, the
// one that starts the first election (electFirst).
func firstVoter(cfg raft.Configuration) raft.ServerID {
	first, firstID := raft.ServerID(""), int64(-1)
	for _, s := range cfg.Servers {
		id, err := strconv.ParseInt(string(s.ID), 10, 32)
		if s.Suffrage == raft.Voter && err == nil && (firstID < 0 || id < firstID) {
			first, firstID = s.ID, id
		}
	}
	return first
}

// electFirst starts the first election of a new quorum as soon as a
// majority of its voters listen, instead of after Raft's heartbeat timeout
// (300 to 600 ms), which was most of a new cluster's start. Only the voter
// with the lowest ID does it, on its first start, so that two candidates
// do not split the votes; the others wait as before. It polls the peers'
// quorum ports every 5 ms for at most wait (by then the timeout has
// started an election anyway) and gives up once a leader is known or this
// node is no longer a follower. The election goes through a TimeoutNow
// request to itself; a voter that already follows a leader with a higher
// term ignores it, so a node restarted on an empty directory does not
// disturb a running quorum, short of one only just formed.
func (c *Controller) electFirst(cfg raft.Configuration, wait time.Duration) {
	defer c.wg.Done()
	self, addr := c.raftID(), raft.ServerAddress("")
	for _, s := range cfg.Servers {
		if s.ID == self {
			addr = s.Address
		}
	}
	voters := 0
	for _, s := range cfg.Servers {
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if leader, _ := c.raft.LeaderWithID(); leader != "" || c.raft.State() != raft.Follower {
			return
		}
		up := 1 // this node
		for _, s := range cfg.Servers {
			if s.Suffrage != raft.Voter || s.ID == self {
				continue
			}
			if c.net.reachable(string(s.Address), 50*time.Millisecond) {
				up++
			}
		}
		if up > voters/2 {
			c.standNow(c.trans, self, addr)
			return
		}
		select {
		case <-tick.C:
		case <-c.stop:
			return
		}
	}
}

// checkVoters fails when this node is not a voter of the stored
// configuration, which happens when a data directory is reused with another
// node ID (such a node would wait for leadership forever), or when the
// stored voters are not the configured ones (controller.quorum.voters
// changed, or the directory belongs to another cluster).
func (c *Controller) checkVoters(id raft.ServerID, want raft.Configuration, observer bool) error {
	f := c.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return fmt.Errorf("controller: read raft configuration: %w", err)
	}
	stored := f.Configuration()
	if observer {
		return checkObserver(id, stored, want, c.cfg.DataDir)
	}
	var ids []raft.ServerID
	self := false
	for _, s := range stored.Servers {
		if s.ID == id && s.Suffrage == raft.Voter {
			self = true
		}
		ids = append(ids, s.ID)
	}
	if !self {
		return fmt.Errorf("controller: node %s is not a voter of the stored raft configuration (voters %v); was %s written by another node?",
			id, ids, c.cfg.DataDir)
	}
	if !sameVoters(stored, want) {
		return fmt.Errorf("controller: the data directory %s holds a metadata quorum of voters %s, not the configured controller.quorum.voters=%s; start the node with the voters it was created with, or on a fresh data directory",
			c.cfg.DataDir, describeVoters(stored), describeVoters(want))
	}
	return nil
}

// closeStores closes the transport and the bolt file.
func (c *Controller) closeStores() error {
	var errs []error
	if cl, ok := c.trans.(interface{ Close() error }); ok && cl != nil {
		errs = append(errs, cl.Close())
	}
	if c.net != nil {
		errs = append(errs, c.net.Close())
	}
	if c.bolt != nil {
		errs = append(errs, c.bolt.Close())
	}
	return errors.Join(errs...)
}

// Close stops Raft, waits for the controller's goroutines and closes the
// stores. It is idempotent; in-flight proposals fail with ErrClosed.
func (c *Controller) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.mu.closing = true
		c.mu.Unlock()
		c.closed.Store(true)
		c.ready.Store(false)
		close(c.stop)
		err := c.raft.Shutdown().Error()
		c.wg.Wait()
		c.closeErr = errors.Join(err, c.closeStores())
		c.notify()
	})
	return c.closeErr
}

// Image returns the current metadata image; it is never nil and must not
// be modified.
func (c *Controller) Image() *metadata.Image { return c.img.Load() }

// Changed returns a channel that is closed when the image next changes (or
// the controller's readiness changes). Call it again to wait again.
func (c *Controller) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.changed
}

// publish makes img the current image, updates readiness and wakes
// waiters.
func (c *Controller) publish(img *metadata.Image) {
	c.img.Store(img)
	c.updateReady()
}

// updateReady recomputes readiness and wakes waiters. An image restored
// or being replayed at restart may already hold this node's registration
// and still be old: the single-node quorum also needs this node in
// office, a quorum with peers this run's catch-up (catchUpLoop).
func (c *Controller) updateReady() {
	current := c.inOffice.Load()
	if c.net != nil {
		current = c.caughtUp.Load()
	}
	ok := !c.closed.Load() && c.registered(c.Image()) && current
	c.ready.Store(ok)
	c.notify()
}

// registered reports whether img holds the cluster ID and this node's
// current, unfenced registration: the node is ready.
func (c *Controller) registered(img *metadata.Image) bool {
	b, ok := img.Brokers[c.cfg.NodeID]
	return ok && img.ClusterID != "" && b.Equal(c.cfg.Self)
}

func (c *Controller) notify() {
	c.mu.Lock()
	close(c.mu.changed)
	c.mu.changed = make(chan struct{})
	c.mu.Unlock()
}

// Ready reports whether the image this node has applied holds the cluster
// ID and this node's broker registration, unfenced, and is current: in a
// quorum with peers it has caught up, once in this run, with what the
// active controller had applied; the single-node quorum leads. Every node
// of a quorum gets ready, not only the active controller.
func (c *Controller) Ready() bool { return c.ready.Load() }

// WaitReady waits until this node is ready (see Ready), or ctx ends, or
// the controller closes.
func (c *Controller) WaitReady(ctx context.Context) error {
	for {
		ch := c.Changed()
		if c.closed.Load() {
			return ErrClosed
		}
		if c.ready.Load() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("controller: wait ready: %w", ctx.Err())
		}
	}
}

// leadershipLoop takes office each time this node becomes leader.
func (c *Controller) leadershipLoop() {
	defer c.wg.Done()
	leaderCh := c.raft.LeaderCh()
	// Leadership may already have been won before the loop started
	// listening; LeaderCh keeps the latest transition, so nothing is lost.
	for {
		select {
		case <-c.stop:
			return
		case leader := <-leaderCh:
			if !leader {
				c.inOffice.Store(false)
				c.updateReady()
				continue
			}
			c.takeOffice(leaderCh)
		}
	}
}

// takeOffice brings the image up to date after winning leadership,
// retrying with a bounded backoff until it succeeds, leadership is lost or
// the controller stops.
func (c *Controller) takeOffice(leaderCh <-chan bool) {
	backoff := 5 * time.Millisecond
	for {
		err := c.setupLeader()
		if err == nil {
			c.inOffice.Store(true)
			if c.net != nil {
				c.caughtUp.Store(true) // a leader in office is current
			}
			c.updateReady()
			c.log.Debug("controller took office", "node", c.cfg.NodeID, "cluster", c.Image().ClusterID)
			return
		}
		c.log.Warn("controller leader setup failed", "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-c.stop:
			t.Stop()
			return
		case leader := <-leaderCh:
			t.Stop()
			if !leader {
				c.inOffice.Store(false)
				c.updateReady()
				return
			}
		case <-t.C:
		}
		backoff = min(backoff*2, time.Second)
	}
}

// setupLeader proposes what taking office needs: this node as controller,
// a cluster ID and this node's registration (unless this run was
// unregistered). All three are idempotent, so
// they are proposed without first waiting for the log to be applied (the
// image may be stale right after an election): a second SetClusterID is
// rejected by the state machine and changes nothing. They go out together
// so Raft writes them in one batch, and once they are applied the image
// reflects every earlier entry.
func (c *Controller) setupLeader() error {
	img := c.Image()
	recs := []metadata.Record{&metadata.SetControllerRecord{ID: c.cfg.NodeID}}
	if !c.unregistered.Load() {
		recs = append(recs, &metadata.RegisterBrokerRecord{Broker: c.cfg.Self})
	}
	if c.net == nil && !c.unregistered.Load() {
		// A new incarnation registers fenced; the single-node quorum has
		// no heartbeats to unfence it and no other replica to hand its
		// partitions to, so it unfences it at once.
		recs = append(recs, amendRegistration(c.cfg.Self))
	}
	if img.ClusterID == "" {
		id, err := newClusterID()
		if err != nil {
			return err
		}
		recs = append(recs, &metadata.SetClusterIDRecord{ClusterID: id, BrokerDefaults: c.clusterDefaults()})
	}
	futures := make([]raft.ApplyFuture, 0, len(recs))
	for _, r := range recs {
		b, err := metadata.Encode(r)
		if err != nil {
			return err
		}
		futures = append(futures, c.raft.Apply(b, c.cfg.ApplyTimeout))
	}
	for i, f := range futures {
		if err := c.await(context.Background(), f); err != nil {
			return fmt.Errorf("%v: %w", recs[i].Type(), err)
		}
		res, ok := f.Response().(applyResult)
		if ok && res.err != nil && !errors.Is(res.err, metadata.ErrClusterIDSet) {
			return fmt.Errorf("%v: %w", recs[i].Type(), res.err)
		}
	}
	return nil
}

// clusterDefaults are the cluster-wide dynamic broker configs a new
// cluster starts with: min.insync.replicas, at this node's static value,
// as Kafka 4's storage format writes it (so DescribeConfigs reports it
// as DYNAMIC_DEFAULT_BROKER_CONFIG on both).
func (c *Controller) clusterDefaults() map[string]string {
	tc, err := c.cfg.Broker.Topic(nil)
	if err != nil {
		return nil // the static configs were checked at start
	}
	return map[string]string{"min.insync.replicas": strconv.Itoa(int(tc.MinInsyncReplicas))}
}

// newClusterID returns a random cluster ID in the usual 22-character form.
func newClusterID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate cluster id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// await waits for a Raft future until it is answered, ctx is done or the
// controller stops. Raft leaves a future unanswered for good when it shuts
// down between committing an entry and applying it, so no wait may rely
// on Raft alone: the goroutine that reads the future is the only one not
// owned by the controller's WaitGroup, and it ends when Raft answers, if
// ever, holding nothing but the future.
func (c *Controller) await(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-c.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// propose appends a record to the Raft log and waits until it is applied.
// The returned result carries the state machine's verdict in res.err.
func (c *Controller) propose(ctx context.Context, rec metadata.Record) (applyResult, error) {
	if c.closed.Load() {
		return applyResult{}, ErrClosed
	}
	b, err := metadata.Encode(rec)
	if err != nil {
		return applyResult{}, fmt.Errorf("controller: %w", err)
	}
	if c.raft.State() != raft.Leader {
		if c.net == nil {
			return applyResult{}, ErrNotController
		}
		res, err := c.proposeForwarded(ctx, rec, b)
		if !errors.Is(err, errLeaderIsSelf) {
			return res, err
		}
	}
	timeout := c.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, max(time.Until(dl), time.Millisecond))
	}
	c.mu.Lock()
	closing := c.mu.closing
	c.mu.Unlock()
	if closing {
		return applyResult{}, ErrClosed
	}
	f := c.raft.Apply(b, timeout)
	if err := c.await(ctx, f); err != nil {
		switch {
		case errors.Is(err, ErrClosed), errors.Is(err, raft.ErrRaftShutdown):
			return applyResult{}, ErrClosed
		case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
			errors.Is(err, raft.ErrLeadershipTransferInProgress):
			return applyResult{}, ErrNotController
		case ctx.Err() != nil:
			return applyResult{}, fmt.Errorf("controller: %v: %w", rec.Type(), ctx.Err())
		}
		return applyResult{}, fmt.Errorf("controller: %v: %w", rec.Type(), err)
	}
	res, ok := f.Response().(applyResult)
	if !ok {
		return applyResult{}, fmt.Errorf("controller: %v: unexpected apply response %T", rec.Type(), f.Response())
	}
	return res, nil
}

// MemoryStores hold a controller's Raft log, stable state and snapshots in
// memory. Every write is durable the moment it returns, as an fsync'd
// disk's would be, so a controller made again on the same MemoryStores
// after a crash finds all it wrote. Only one controller may use them at a
// time.
type MemoryStores struct {
	store *raft.InmemStore
	snaps *raft.InmemSnapshotStore
	// together, on a Clone until a controller starts on it, has that
	// controller's node start the first election at once if it is the
	// first voter (electFirst), as on a new quorum.
	together bool
}

// NewMemoryStores returns empty Raft stores.
func NewMemoryStores() *MemoryStores {
	return &MemoryStores{store: raft.NewInmemStore(), snaps: raft.NewInmemSnapshotStore()}
}
