// Package replica is the follower's side of replication: "replication is
// just Fetch". A Manager keeps one fetcher goroutine per source node (the
// leader of the partitions it fetches); each fetcher sends one Fetch
// request for all the partitions this node follows from that leader,
// appends what it gets with partition.AppendReplicated (the leader's bytes,
// offsets and epochs) and takes the leader's high watermark from the
// response. Before it fetches a partition it has just been given (a new
// leader or leader epoch), or one answered with a diverging epoch, it
// truncates the partition's log where store/log.FollowerTruncation puts
// the leader's OffsetForLeaderEpoch answer (KIP-101, KIP-279).
//
// Fetchers talk to leaders over their own connections (wire.Conn): one request
// at a time, each bounded by replica.fetch.wait.max.ms plus
// replica.socket.timeout.ms, responses by the node's largest frame; after
// an error a fetcher closes the connection and backs off for
// replica.fetch.backoff.ms.
//
// The node's reconcile decides what is followed (Follow, Unfollow); a
// node whose partitions are all led by itself starts no goroutine and
// opens no connection. Close stops and joins every fetcher.
//
// Lock order: Manager.mu before fetcher.mu before partition locks. A
// fetcher holds its mu while it applies a response to a partition, so
// that a partition moved elsewhere (Follow, Unfollow) is never written by
// the fetcher it left once the move returns.
//
// This package must not import broker or the controller: it reaches the
// cluster only through Config.Addr.
package replica

import (
	"log/slog"
	"sync"
	"time"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/wire"
)

// Config configures a Manager.
type Config struct {
	// NodeID is this node's broker id, sent as the fetch's replica id.
	NodeID int32
	// Addr is the host:port of broker id as the current metadata has
	// it; ok is false while it is unknown.
	Addr   func(id int32) (addr string, ok bool)
	Logger *slog.Logger

	FetchMaxBytes    int32         // replica.fetch.max.bytes, per partition
	ResponseMaxBytes int32         // replica.fetch.response.max.bytes
	MaxWait          time.Duration // replica.fetch.wait.max.ms
	Backoff          time.Duration // replica.fetch.backoff.ms
	Timeout          time.Duration // replica.socket.timeout.ms
	// MaxFrame bounds a response frame (socket.request.max.bytes).
	MaxFrame int32
	// Switch, if set, is the node's fault switch: its Isolate cuts every
	// fetcher's connection, and fetchers cannot connect until Heal.
	Switch *wire.Switch
	// Dial, with its TLS and SASL set, secures the connections to the
	// leaders as the inter-broker listener asks; its other fields are
	// set from the ones above.
	Dial wire.DialConfig
}

// Manager owns the fetchers of one node.
type Manager struct {
	cfg Config
	mu  struct {
		sync.Mutex
		closed   bool
		fetchers map[int32]*fetcher // by leader
		// leaderOf is the leader each followed partition is fetched from.
		leaderOf map[key]int32
	}
}

type key struct {
	topic string
	index int32
}

// New returns a Manager that fetches nothing until Follow.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{cfg: cfg}
	m.mu.fetchers = map[int32]*fetcher{}
	m.mu.leaderOf = map[key]int32{}
	return m
}

// Follow makes p fetched from leader at p's current leader epoch. A
// partition already fetched from leader at that epoch is left as it is;
// one new to the fetcher, or at a new epoch, truncates before it fetches
// again. It does nothing after Close.
func (m *Manager) Follow(p *partition.Partition, leader int32) {
	k := key{p.Topic(), p.Index()}
	epoch := p.LeaderEpoch()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return
	}
	if old, ok := m.mu.leaderOf[k]; ok && old != leader {
		m.removeLocked(k, old)
	}
	f := m.mu.fetchers[leader]
	if f == nil {
		f = newFetcher(m.cfg, leader)
		m.mu.fetchers[leader] = f
		go f.run()
	}
	m.mu.leaderOf[k] = leader
	if f.add(k, p, epoch) {
		m.cfg.Logger.Debug("follow", "topic", k.topic, "partition", k.index, "leader", leader, "leader_epoch", epoch)
	}
}

// Unfollow stops fetching p, if it is fetched: it has become leader, lost
// its leader or been removed. Once it returns no fetcher writes to p.
func (m *Manager) Unfollow(p *partition.Partition) {
	k := key{p.Topic(), p.Index()}
	m.mu.Lock()
	defer m.mu.Unlock()
	if leader, ok := m.mu.leaderOf[k]; ok {
		m.removeLocked(k, leader)
		m.cfg.Logger.Debug("unfollow", "topic", k.topic, "partition", k.index, "leader", leader)
	}
}

// removeLocked takes k off leader's fetcher and stops the fetcher when it
// has nothing left to fetch. m.mu is held.
func (m *Manager) removeLocked(k key, leader int32) {
	delete(m.mu.leaderOf, k)
	f := m.mu.fetchers[leader]
	if f == nil {
		return
	}
	if f.remove(k) == 0 {
		delete(m.mu.fetchers, leader)
		f.stop()
	}
}

// Following reports how many partitions are fetched, from how many
// leaders: fetcher goroutines running.
func (m *Manager) Following() (partitions, fetchers int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mu.leaderOf), len(m.mu.fetchers)
}

// Close stops every fetcher and waits for them. Follow does nothing
// afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	m.mu.closed = true
	fetchers := m.mu.fetchers
	m.mu.fetchers = map[int32]*fetcher{}
	m.mu.leaderOf = map[key]int32{}
	m.mu.Unlock()
	for _, f := range fetchers {
		f.stop()
	}
}
