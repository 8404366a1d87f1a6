package group

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/metadata"
)

// Store persists and replays the records of __consumer_offsets partitions
// (implemented by the broker over its partitions).
type Store interface {
	// Append writes records as one batch to partition p and returns once
	// committed (acks=all).
	Append(ctx context.Context, partition int32, records []Record) error
	// Replay calls fn with every record of partition p from log start to
	// the log end, in order, and returns once they are committed (a new
	// leader's high watermark trails its log end), including the records of transactional
	// batches and the COMMIT/ABORT markers of control batches, flagged as
	// the Record doc says.
	Replay(ctx context.Context, partition int32, fn func(Record) error) error
}

// TopicInfo is what the coordinator needs to know of a topic.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

// Config configures a Coordinator. Zero durations and sizes take Kafka's
// defaults, except InitialRebalanceDelay (zero means no delay).
type Config struct {
	Logger         *slog.Logger
	Store          Store
	Partitions     int32                       // offsets.topic.num.partitions, the count when PartitionCount is nil
	PartitionCount func() int32                // the current partition count of __consumer_offsets; see partitionOf
	Topics         func() map[string]TopicInfo // current topics by name; nil = no topic validation, no KIP-848 assignment
	Now            func() time.Time            // nil = time.Now

	InitialRebalanceDelay         time.Duration // group.initial.rebalance.delay.ms
	MinSessionTimeout             time.Duration // group.min.session.timeout.ms (6000)
	MaxSessionTimeout             time.Duration // group.max.session.timeout.ms (1800000)
	MaxSize                       int           // group.max.size (MaxInt32)
	OffsetsRetention              time.Duration // offsets.retention.minutes (7 days)
	OffsetsRetentionCheckInterval time.Duration // offsets.retention.check.interval.ms (600000)
	// WriteTimeout bounds one write to __consumer_offsets, its
	// replication included: offsets.commit.timeout.ms (5000), Kafka's
	// default write timeout of the group coordinator's runtime.
	WriteTimeout              time.Duration
	ConsumerSessionTimeout    time.Duration // group.consumer.session.timeout.ms (45000)
	ConsumerHeartbeatInterval time.Duration // group.consumer.heartbeat.interval.ms (5000)
	ConsumerAssignors         []string      // group.consumer.assignors ("uniform", "range"; first is the default)
	ConsumerMaxSize           int           // group.consumer.max.size (MaxInt32)
	// OnRebalance, when set, is told of each rebalance, from the group's
	// goroutine: it must return quickly.
	OnRebalance func(Rebalance)
}

// Rebalance is a rebalance of one group: a classic group that began one
// (State PreparingRebalance) or whose generation advanced at the end of
// the join phase (CompletingRebalance, or Empty without members), or a
// consumer group (KIP-848) whose group epoch advanced.
type Rebalance struct {
	Group string
	// GroupProtocol is "classic" or "consumer".
	GroupProtocol string
	// State is the group's state afterwards.
	State string
	// Generation is a classic group's generation, a consumer group's
	// epoch.
	Generation int32
	Members    int
	// Protocol is a classic group's chosen protocol (the assignor), ""
	// before it is chosen.
	Protocol string
	Reason   string
}

// Bounds of the coordinator's queues and waits.
const (
	// eventQueue is the capacity of each group's event channel; senders
	// wait (bounded by their context) when it is full.
	eventQueue = 64
	// maxMetadataBytes is offset.metadata.max.bytes.
	maxMetadataBytes = 4096
	// minTimerDelay keeps a group's timer from spinning when a deadline is
	// due but the clock has not reached it.
	minTimerDelay = time.Millisecond
)

func (cfg *Config) defaults() {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = 50
	}
	if cfg.PartitionCount == nil {
		n := cfg.Partitions
		cfg.PartitionCount = func() int32 { return n }
	}
	if cfg.MinSessionTimeout <= 0 {
		cfg.MinSessionTimeout = 6 * time.Second
	}
	if cfg.MaxSessionTimeout <= 0 {
		cfg.MaxSessionTimeout = 30 * time.Minute
	}
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = math.MaxInt32
	}
	if cfg.OffsetsRetention <= 0 {
		cfg.OffsetsRetention = 7 * 24 * time.Hour
	}
	if cfg.OffsetsRetentionCheckInterval <= 0 {
		cfg.OffsetsRetentionCheckInterval = 10 * time.Minute
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 5 * time.Second
	}
	if cfg.ConsumerSessionTimeout <= 0 {
		cfg.ConsumerSessionTimeout = 45 * time.Second
	}
	if cfg.ConsumerHeartbeatInterval <= 0 {
		cfg.ConsumerHeartbeatInterval = 5 * time.Second
	}
	if len(cfg.ConsumerAssignors) == 0 {
		cfg.ConsumerAssignors = []string{"uniform", "range"}
	}
	if cfg.ConsumerMaxSize <= 0 {
		cfg.ConsumerMaxSize = math.MaxInt32
	}
}

// Coordinator coordinates the groups whose __consumer_offsets partitions
// this node leads. It is safe for concurrent use.
//
// Lock order: Coordinator.mu is a leaf; it is never held while sending to
// or waiting on a group actor.
type Coordinator struct {
	cfg Config
	log *slog.Logger

	mu struct {
		sync.Mutex
		closed bool
		parts  map[int32]*partState
		groups map[string]*actor
		// txnGroups indexes, by producer id, the groups that may hold
		// pending transactional offsets of that producer (entries may be
		// stale; CompleteTransaction finds the groups through it).
		txnGroups map[int64]map[string]struct{}
	}
	wg sync.WaitGroup
}

// partState is one __consumer_offsets partition this node leads.
type partState struct {
	loading bool
	// completions are the transaction markers CompleteTransaction reported
	// while the partition was loading, by producer id (true: commit).
	completions map[int64]bool
}

// New returns a coordinator that leads no partition yet; call LoadPartition
// for each __consumer_offsets partition this node leads.
func New(cfg Config) *Coordinator {
	cfg.defaults()
	c := &Coordinator{cfg: cfg, log: cfg.Logger}
	c.mu.parts = make(map[int32]*partState)
	c.mu.groups = make(map[string]*actor)
	c.mu.txnGroups = make(map[int64]map[string]struct{})
	return c
}

// Close stops every group actor and timer; it returns when all goroutines
// have exited. Requests after Close answer COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.mu.closed = true
	actors := make([]*actor, 0, len(c.mu.groups))
	for id, a := range c.mu.groups {
		actors = append(actors, a)
		delete(c.mu.groups, id)
	}
	clear(c.mu.parts)
	clear(c.mu.txnGroups)
	c.mu.Unlock()
	for _, a := range actors {
		a.cancel()
	}
	c.wg.Wait()
}

func (c *Coordinator) now() time.Time { return c.cfg.Now() }

// LoadPartition makes this node serve the groups of __consumer_offsets
// partition p: it replays the partition, rebuilds groups and offsets, then
// serves them. While it runs, requests for those groups answer
// COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) LoadPartition(ctx context.Context, p int32) error {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if _, ok := c.mu.parts[p]; ok {
		c.mu.Unlock()
		return nil
	}
	ps := &partState{loading: true}
	c.mu.parts[p] = ps
	c.mu.Unlock()

	groups := make(map[string]*group)
	get := func(id string) *group {
		g := groups[id]
		if g == nil {
			g = c.newGroup(id, p)
			groups[id] = g
		}
		return g
	}
	// open indexes, by producer id, the replayed groups with pending
	// offsets of that producer.
	open := make(map[int64]map[string]struct{})
	var records, skipped, markers int
	err := c.cfg.Store.Replay(ctx, p, func(r Record) error {
		records++
		if r.Control {
			markers++
			for id := range open[r.ProducerID] {
				groups[id].completeTxn(r.ProducerID, r.Commit)
			}
			delete(open, r.ProducerID)
			return nil
		}
		d, ok, err := decodeRecord(r)
		if err != nil {
			return err
		}
		if !ok {
			skipped++
			return nil
		}
		g := get(d.group)
		switch {
		case d.isOffset && r.Transactional:
			g.replayTxnOffset(r.ProducerID, d.topic, d.part, d.offset)
			if open[r.ProducerID] == nil {
				open[r.ProducerID] = make(map[string]struct{})
			}
			open[r.ProducerID][g.id] = struct{}{}
		case d.isOffset:
			g.replayOffset(d.topic, d.part, d.offset)
		default:
			g.replayMetadata(d.meta)
		}
		return nil
	})
	if err != nil {
		c.mu.Lock()
		if c.mu.parts[p] == ps {
			delete(c.mu.parts, p)
		}
		c.mu.Unlock()
		return fmt.Errorf("load __consumer_offsets-%d: %w", p, err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed || c.mu.parts[p] != ps {
		return fmt.Errorf("load __consumer_offsets-%d: %w", p, ErrNotLoaded)
	}
	// Markers written while the partition was replayed: a marker the replay
	// already saw finds nothing left to complete.
	for pid, commit := range ps.completions {
		for id := range open[pid] {
			groups[id].completeTxn(pid, commit)
		}
		delete(open, pid)
	}
	ps.completions = nil
	now := c.now()
	n, pending := 0, 0
	for _, g := range groups {
		if g.isEmptyShell() {
			continue
		}
		for pid := range g.txnOffsets {
			c.noteTxnGroupLocked(pid, g.id)
			pending++
		}
		g.afterLoad(now)
		c.startLocked(g)
		n++
	}
	ps.loading = false
	c.log.Info("loaded __consumer_offsets partition", "partition", p, "records", records, "skipped", skipped,
		"markers", markers, "groups", n, "groups_in_transactions", pending)
	return nil
}

// UnloadPartition stops serving the groups of partition p (this node lost
// its leadership): their actors stop, waiting members get NOT_COORDINATOR
// and rediscover the coordinator. It returns when those actors have exited.
func (c *Coordinator) UnloadPartition(p int32) {
	c.mu.Lock()
	delete(c.mu.parts, p)
	c.forgetTxnGroupsLocked(p)
	var stopped []*actor
	for id, a := range c.mu.groups {
		if a.part == p {
			stopped = append(stopped, a)
			delete(c.mu.groups, id)
		}
	}
	c.mu.Unlock()
	for _, a := range stopped {
		a.cancel()
	}
	for _, a := range stopped {
		<-a.done
	}
}

// startLocked starts the actor of g. c.mu must be held.
func (c *Coordinator) startLocked(g *group) *actor {
	ctx, cancel := context.WithCancel(context.Background())
	a := &actor{
		c:      c,
		id:     g.id,
		part:   g.part,
		g:      g,
		events: make(chan func(*group), eventQueue),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	g.a = a
	c.mu.groups[g.id] = a
	c.wg.Add(1)
	go a.loop()
	return a
}

// partitionOf is the __consumer_offsets partition of group id, over the
// count PartitionCount gives now: the node passes the topic's own count, so
// the coordinator serves whatever count the topic has (a client may have
// created it). Kafka reads the count once, at startup
// (GroupCoordinatorService.startup), and answers NOT_COORDINATOR until a
// restart when the two differ.
func (c *Coordinator) partitionOf(id string) int32 {
	return metadata.CoordinatorPartition(id, c.cfg.PartitionCount())
}

// errGroupMissing is the code run reports when create is false and the
// group does not exist; fn has then been called with a nil group.
const errGroupMissing int16 = -2

// run routes fn to the actor of group id and waits until it ran. If the
// group does not exist and create is false, fn runs with nil on the caller's
// goroutine. A non-zero code means fn did not run with a group: the
// coordinator does not serve the group (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS) or the request gave up.
// The returned channel closes when the group's actor exits.
func (c *Coordinator) run(ctx context.Context, id string, create bool, fn func(g *group)) (<-chan struct{}, int16) {
	p := c.partitionOf(id)
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	ps, ok := c.mu.parts[p]
	a := c.mu.groups[id]
	switch {
	case !ok:
		c.mu.Unlock()
		return nil, kerr.NotCoordinator.Code
	case ps.loading:
		c.mu.Unlock()
		return nil, kerr.CoordinatorLoadInProgress.Code
	case a != nil && a.part != p:
		// Loaded from a partition the group no longer hashes to: the
		// topic was recreated with another count and the node has not
		// unloaded the old partitions yet.
		c.mu.Unlock()
		return nil, kerr.NotCoordinator.Code
	}
	if a == nil {
		if !create {
			c.mu.Unlock()
			fn(nil)
			return nil, errGroupMissing
		}
		a = c.startLocked(c.newGroup(id, p))
	}
	a.inflight++
	c.mu.Unlock()

	// started arbitrates between the actor running fn and the caller giving
	// up: whoever swaps it first wins, so fn never writes into an answer the
	// caller has already returned.
	var started atomic.Int32
	ran := make(chan struct{})
	ev := func(g *group) {
		if started.CompareAndSwap(0, 1) {
			fn(g)
		}
		close(ran)
	}
	select {
	case a.events <- ev:
	case <-a.done:
		return nil, kerr.NotCoordinator.Code
	case <-ctx.Done():
		c.mu.Lock()
		a.inflight--
		c.mu.Unlock()
		return nil, kerr.RequestTimedOut.Code
	}
	select {
	case <-ran:
		return a.done, 0
	case <-a.done:
		// The actor stopped with the event still queued or running.
		if started.CompareAndSwap(0, 2) {
			return nil, kerr.NotCoordinator.Code
		}
		<-ran // it ran to the end before the actor exited
		return a.done, 0
	case <-ctx.Done():
		if started.CompareAndSwap(0, 2) {
			return nil, kerr.RequestTimedOut.Code
		}
		// fn is running; it is bounded (appends time out), so wait for it.
		select {
		case <-ran:
			return a.done, 0
		case <-a.done:
			<-ran
			return a.done, 0
		}
	}
}

// actors returns the actor of every group this node serves, by group id.
func (c *Coordinator) actors() []*actor {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*actor, 0, len(c.mu.groups))
	for _, a := range c.mu.groups {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Tick makes every group check its deadlines against the clock now and
// waits until they did (bounded by ctx): the node's AdvanceClock, and
// tests with a fake clock, call it after advancing.
func (c *Coordinator) Tick(ctx context.Context) {
	for _, a := range c.actors() {
		c.run(ctx, a.id, false, func(g *group) {
			if g != nil {
				g.tick()
			}
		})
	}
}

// actor is the goroutine that owns one group.
type actor struct {
	c    *Coordinator
	id   string
	part int32
	g    *group // owned by the actor goroutine

	events chan func(*group)
	ctx    context.Context // canceled to stop the actor
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has exited

	inflight int // events sent or being sent and not yet run; guarded by c.mu
}

func (a *actor) loop() {
	defer a.c.wg.Done()
	defer close(a.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Stop()
		if d, ok := a.g.nextDeadline(); ok {
			wait := d.Sub(a.c.now())
			if wait < minTimerDelay {
				wait = minTimerDelay
			}
			timer.Reset(wait)
		}
		select {
		case <-a.ctx.Done():
			a.g.shutdown()
			return
		case ev := <-a.events:
			ev(a.g)
			a.c.mu.Lock()
			a.inflight--
			a.c.mu.Unlock()
		case <-timer.C:
			a.g.tick()
		}
		if a.g.reapable() && a.tryReap() {
			return
		}
	}
}

// tryReap removes the actor from the coordinator when no event is queued
// or about to be.
func (a *actor) tryReap() bool {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.inflight > 0 || a.c.mu.groups[a.id] != a {
		return false
	}
	delete(a.c.mu.groups, a.id)
	a.c.log.Debug("group removed", "group", a.id)
	return true
}

// append writes records to the group's partition before an answer is given.
func (a *actor) append(records []Record) error {
	if len(records) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(a.ctx, a.c.cfg.WriteTimeout)
	defer cancel()
	if err := a.c.cfg.Store.Append(ctx, a.part, records); err != nil {
		a.c.log.Warn("append to __consumer_offsets failed", "partition", a.part, "group", a.id, "err", err)
		return fmt.Errorf("append %d records for group %q to __consumer_offsets-%d: %w", len(records), a.id, a.part, err)
	}
	return nil
}

// appendErrorCode maps a failed append to the code clients retry on.
func appendErrorCode(err error) int16 {
	if errors.Is(err, context.Canceled) || errors.Is(err, ErrNotLeader) {
		return kerr.NotCoordinator.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

// clientKey carries the request header's client id and the peer's host.
type clientKey struct{}

type clientInfo struct{ id, host string }

// WithClient returns ctx carrying the client id of the request header and
// the client's host; JoinGroup and ConsumerGroupHeartbeat record them for
// DescribeGroups and use the client id as the prefix of new member ids.
func WithClient(ctx context.Context, clientID, host string) context.Context {
	return context.WithValue(ctx, clientKey{}, clientInfo{clientID, host})
}

func clientFrom(ctx context.Context) clientInfo {
	ci, _ := ctx.Value(clientKey{}).(clientInfo)
	return ci
}

// newMemberID returns prefix-<random uuid>, as member ids look in Kafka.
func newMemberID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	u := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	if prefix == "" {
		return u
	}
	return prefix + "-" + u
}
