package group

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/coordinator"
)

// Store persists and replays the records of __consumer_offsets partitions
// (implemented by the broker over its partitions): the runtime's Store.
// Replay delivers the records of transactional batches and the COMMIT and
// ABORT markers of control batches too, flagged as the Record doc says.
type Store = coordinator.Store

// TopicInfo is what the coordinator needs to know of a topic.
type TopicInfo = coordinator.TopicInfo

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
	ShareSessionTimeout       time.Duration // group.share.session.timeout.ms (45000)
	ShareHeartbeatInterval    time.Duration // group.share.heartbeat.interval.ms (5000)
	ShareMaxSize              int           // group.share.max.size (200)
	// OnShareMemberGone, when set, is told of a share group member that
	// left or was fenced, from the group's goroutine (it must return
	// quickly): the node closes its share sessions and releases the
	// records it holds.
	OnShareMemberGone func(group, member string)
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
	// GroupProtocol is "classic", "consumer" or "share".
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
)

func (cfg *Config) defaults() {
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
	if cfg.ShareSessionTimeout <= 0 {
		cfg.ShareSessionTimeout = 45 * time.Second
	}
	if cfg.ShareHeartbeatInterval <= 0 {
		cfg.ShareHeartbeatInterval = 5 * time.Second
	}
	if cfg.ShareMaxSize <= 0 {
		cfg.ShareMaxSize = 200
	}
}

// Coordinator coordinates the groups whose __consumer_offsets partitions
// this node leads, on the coordinator runtime: one actor per group. It is
// safe for concurrent use.
//
// Lock order: the runtime's lock (rt.Lock) is a leaf; it is never held
// while sending to or waiting on a group actor.
type Coordinator struct {
	cfg Config
	log *slog.Logger
	rt  *coordinator.Runtime[*group]

	// Guarded by the runtime's lock:
	//
	// txnGroups indexes, by producer id, the groups that may hold
	// pending transactional offsets of that producer (entries may be
	// stale; CompleteTransaction finds the groups through it).
	txnGroups map[int64]map[string]struct{}
	// completions are the transaction markers CompleteTransaction
	// reported while a partition was loading, by partition and producer
	// id (true: commit).
	completions map[int32]map[int64]bool
}

// New returns a coordinator that leads no partition yet; call LoadPartition
// for each __consumer_offsets partition this node leads.
func New(cfg Config) *Coordinator {
	cfg.defaults()
	c := &Coordinator{cfg: cfg}
	c.txnGroups = make(map[int64]map[string]struct{})
	c.completions = make(map[int32]map[int64]bool)
	c.rt = coordinator.New(coordinator.Config[*group]{
		Logger:         cfg.Logger,
		Topic:          "__consumer_offsets",
		PartitionCount: cfg.PartitionCount,
		Partitions:     cfg.Partitions,
		Queue:          eventQueue,
		Now:            cfg.Now,
		Dropped: func(p int32) {
			delete(c.completions, p)
			c.forgetTxnGroupsLocked(p)
		},
	})
	c.log = c.rt.Logger()
	return c
}

// Close stops every group actor and timer; it returns when all goroutines
// have exited. Requests after Close answer COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Close() {
	c.rt.Close()
	c.rt.Lock()
	clear(c.txnGroups)
	c.rt.Unlock()
}

func (c *Coordinator) now() time.Time { return c.rt.Now() }

// LoadPartition makes this node serve the groups of __consumer_offsets
// partition p: it replays the partition, rebuilds groups and offsets, then
// serves them. While it runs, requests for those groups answer
// COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) LoadPartition(ctx context.Context, p int32) error {
	l, err := c.rt.Begin(p, 0)
	if err != nil || l == nil {
		return err
	}
	rp := newReplay(c, p)
	if err := c.cfg.Store.Replay(ctx, p, rp.apply); err != nil {
		l.Fail()
		return fmt.Errorf("load __consumer_offsets-%d: %w", p, err)
	}
	var n, pending int
	err = l.Serve(func() { n, pending = c.serveLocked(p, rp) })
	if err != nil {
		return fmt.Errorf("load __consumer_offsets-%d: %w", p, err)
	}
	c.log.Info("loaded __consumer_offsets partition", "partition", p, "records", rp.records, "skipped", rp.skipped,
		"markers", rp.markers, "groups", n, "groups_in_transactions", pending)
	return nil
}

// replay rebuilds the groups of one partition from its records.
type replay struct {
	c      *Coordinator
	p      int32
	groups map[string]*group
	// open indexes, by producer id, the replayed groups with pending
	// offsets of that producer.
	open                      map[int64]map[string]struct{}
	records, skipped, markers int
}

func newReplay(c *Coordinator, p int32) *replay {
	return &replay{c: c, p: p, groups: make(map[string]*group), open: make(map[int64]map[string]struct{})}
}

// apply replays one record.
func (rp *replay) apply(r Record) error {
	rp.records++
	if r.Control {
		rp.markers++
		rp.complete(r.ProducerID, r.Commit)
		return nil
	}
	d, ok, err := decodeRecord(r)
	if err != nil {
		return err
	}
	if !ok {
		rp.skipped++
		return nil
	}
	g := rp.groups[d.group]
	if g == nil {
		g = rp.c.newGroup(d.group, rp.p)
		rp.groups[d.group] = g
	}
	switch {
	case d.isOffset && r.Transactional:
		g.replayTxnOffset(r.ProducerID, d.topic, d.part, d.offset)
		if rp.open[r.ProducerID] == nil {
			rp.open[r.ProducerID] = make(map[string]struct{})
		}
		rp.open[r.ProducerID][g.id] = struct{}{}
	case d.isOffset:
		g.replayOffset(d.topic, d.part, d.offset)
	default:
		g.replayMetadata(d.meta)
	}
	return nil
}

// complete applies a marker of producerID to the replayed groups with
// pending offsets of it.
func (rp *replay) complete(producerID int64, commit bool) {
	for id := range rp.open[producerID] {
		rp.groups[id].completeTxn(producerID, commit)
	}
	delete(rp.open, producerID)
}

// serveLocked starts the actors of the replayed groups of partition p,
// after the markers written while it was replayed, and returns how many
// groups it serves and how many of them hold pending transactional
// offsets. The runtime's lock must be held.
func (c *Coordinator) serveLocked(p int32, rp *replay) (n, pending int) {
	// A marker the replay already saw finds nothing left to complete.
	for pid, commit := range c.completions[p] {
		rp.complete(pid, commit)
	}
	delete(c.completions, p)
	now := c.now()
	for _, g := range rp.groups {
		if g.isEmptyShell() {
			continue
		}
		for pid := range g.txnOffsets {
			c.noteTxnGroupLocked(pid, g.id)
			pending++
		}
		g.afterLoad(now)
		c.rt.StartLocked(g.id, p, 0, g.bind)
		n++
	}
	return n, pending
}

// UnloadPartition stops serving the groups of partition p (this node lost
// its leadership): their actors stop, waiting members get NOT_COORDINATOR
// and rediscover the coordinator. It returns when those actors have exited.
func (c *Coordinator) UnloadPartition(p int32) { c.rt.Unload(p) }

// bind ties g to its actor, before the actor runs.
func (g *group) bind(a *coordinator.Actor[*group]) *group {
	g.a = a
	return g
}

// partitionOf is the __consumer_offsets partition of group id, over the
// count PartitionCount gives now (coordinator.Runtime.PartitionOf). Kafka
// reads the count once, at startup (GroupCoordinatorService.startup).
func (c *Coordinator) partitionOf(id string) int32 { return c.rt.PartitionOf(id) }

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
	var newGroup func(*coordinator.Actor[*group]) *group
	if create {
		newGroup = func(a *coordinator.Actor[*group]) *group { return c.newGroup(id, a.Partition()).bind(a) }
	}
	done, err := c.rt.Run(ctx, id, newGroup, fn)
	switch {
	case errors.Is(err, coordinator.ErrUnknownKey):
		fn(nil)
		return nil, errGroupMissing
	case err != nil:
		return nil, coordinator.Code(err)
	}
	return done, 0
}

// Tick makes every group check its deadlines against the clock now and
// waits until they did (bounded by ctx): the node's AdvanceClock, and
// tests with a fake clock, call it after advancing.
func (c *Coordinator) Tick(ctx context.Context) {
	for _, a := range c.rt.Actors() {
		c.run(ctx, a.Key(), false, func(g *group) {
			if g != nil {
				g.Tick()
			}
		})
	}
}

// append writes records to the group's partition before an answer is given.
func (g *group) append(records []Record) error {
	if len(records) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(g.a.Context(), g.c.cfg.WriteTimeout)
	defer cancel()
	if err := g.c.cfg.Store.Append(ctx, g.part, records); err != nil {
		g.c.log.Warn("append to __consumer_offsets failed", "partition", g.part, "group", g.id, "err", err)
		return fmt.Errorf("append %d records for group %q to __consumer_offsets-%d: %w", len(records), g.id, g.part, err)
	}
	return nil
}

// appendErrorCode maps a failed append to the code clients retry on.
func appendErrorCode(err error) int16 {
	if coordinator.LostLeadership(err) {
		return kerr.NotCoordinator.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

// clientKey carries the request header's client id and the peer's host.
type clientKey struct{}

// principalKey carries the principal the request's connection
// authenticated as.
type principalKey struct{}

type clientInfo struct{ id, host, principal string }

// WithClient returns ctx carrying the client id of the request header and
// the client's host; JoinGroup and ConsumerGroupHeartbeat record them for
// DescribeGroups and use the client id as the prefix of new member ids.
func WithClient(ctx context.Context, clientID, host string) context.Context {
	return context.WithValue(ctx, clientKey{}, clientInfo{id: clientID, host: host})
}

// WithPrincipal returns ctx carrying the principal the client
// authenticated as ("User:alice"); JoinGroup, Heartbeat and
// ConsumerGroupHeartbeat record it on the member (MemberSnapshot), which
// no Kafka API describes. It is kept in memory only: a member the
// coordinator loaded from the log has none until its next heartbeat.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

func clientFrom(ctx context.Context) clientInfo {
	ci, _ := ctx.Value(clientKey{}).(clientInfo)
	ci.principal, _ = ctx.Value(principalKey{}).(string)
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
