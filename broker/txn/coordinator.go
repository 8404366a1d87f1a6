package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/klogdev/klog/broker/coordinator"
	"github.com/klogdev/klog/broker/metadata"
)

// Store persists and replays the records of __transaction_state partitions
// (implemented by the broker over its partitions): the runtime's Store.
// The coordinator skips the markers of control batches Replay delivers.
type Store = coordinator.Store

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Markers writes transaction markers (implemented by the broker).
type Markers interface {
	// WriteMarkers appends a commit or abort marker for pid/epoch to every
	// partition and returns when all were tried, with the error of each
	// partition whose marker was not written (none when all were). The
	// coordinator retries those partitions (bounded backoff) until they
	// are written or the coordinator is unloaded, except a partition whose
	// error wraps ErrMarkerFenced: it is given up, as Kafka's coordinator
	// gives up on INVALID_PRODUCER_EPOCH and
	// TRANSACTION_COORDINATOR_FENCED. txnVersion is the transaction
	// version of the transaction (2: its end bumped the epoch, so the
	// marker's epoch is above its records', KIP-1228).
	WriteMarkers(ctx context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, txnVersion int16, partitions []TopicPartition) map[TopicPartition]error
}

// TopicInfo is what the coordinator needs to know of a topic.
type TopicInfo = coordinator.TopicInfo

// Config configures a Coordinator. Zero durations and sizes take Kafka's
// defaults.
type Config struct {
	Logger         *slog.Logger
	Store          Store
	Markers        Markers
	ProducerIDs    func(ctx context.Context) (int64, error) // next unused producer id (controller-allocated blocks)
	Partitions     int32                                    // transaction.state.log.num.partitions (50), the count when PartitionCount is nil
	PartitionCount func() int32                             // the current partition count of __transaction_state; see partitionOf
	Topics         func() map[string]TopicInfo              // to validate AddPartitionsToTxn; nil = no validation
	GroupPartition func(group string) TopicPartition        // the __consumer_offsets partition of a group
	Now            func() time.Time                         // nil = time.Now

	MaxTimeout                time.Duration // transaction.max.timeout.ms (900000)
	AbortTimedOutInterval     time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms (10000)
	TransactionalIDExpiration time.Duration // transactional.id.expiration.ms (604800000)
}

// Bounds of the coordinator's queues and waits.
const (
	// eventQueue is the capacity of each transactional id's event channel;
	// senders wait (bounded by their context) when it is full.
	eventQueue = 16
	// appendTimeout bounds one write to __transaction_state.
	appendTimeout = 30 * time.Second
	// producerIDTimeout bounds the allocation of a producer id.
	producerIDTimeout = 30 * time.Second
	// markerTimeout bounds one WriteMarkers call; a call that times out is
	// retried.
	markerTimeout = 30 * time.Second
	// Backoff between marker (and completion) retries.
	minRetryBackoff = 20 * time.Millisecond
	maxRetryBackoff = 5 * time.Second
)

func (cfg *Config) defaults() {
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 15 * time.Minute
	}
	if cfg.AbortTimedOutInterval <= 0 {
		cfg.AbortTimedOutInterval = 10 * time.Second
	}
	if cfg.TransactionalIDExpiration <= 0 {
		cfg.TransactionalIDExpiration = 7 * 24 * time.Hour
	}
	if cfg.GroupPartition == nil {
		cfg.GroupPartition = func(group string) TopicPartition {
			return TopicPartition{Topic: "__consumer_offsets", Partition: metadata.CoordinatorPartition(group, 50)}
		}
	}
}

// Coordinator coordinates the transactional ids whose __transaction_state
// partitions this node leads, on the coordinator runtime: one actor per
// transactional id. It is safe for concurrent use.
//
// Lock order: the runtime's lock (rt.Lock) is a leaf; it is never held
// while sending to or waiting on an actor, nor during I/O.
type Coordinator struct {
	cfg Config
	log *slog.Logger
	rt  *coordinator.Runtime[*actor]

	// byProducer indexes the actors by the producer id each last
	// published (ClientMarker looks markers up by producer id). Guarded
	// by the runtime's lock.
	byProducer map[int64]*actor

	wg        sync.WaitGroup
	stop      chan struct{} // closed by Close: stops the abort ticker
	closeOnce sync.Once
	backoff   time.Duration // first retry backoff; tests shorten it
}

// New returns a coordinator that leads no partition yet; call LoadPartition
// for each __transaction_state partition this node leads. It starts the
// goroutine that aborts timed-out transactions and expires transactional
// ids every AbortTimedOutInterval; Close stops it.
func New(cfg Config) *Coordinator {
	cfg.defaults()
	c := &Coordinator{cfg: cfg, stop: make(chan struct{}), backoff: minRetryBackoff}
	c.byProducer = make(map[int64]*actor)
	c.rt = coordinator.New(coordinator.Config[*actor]{
		Logger:         cfg.Logger,
		Topic:          "__transaction_state",
		PartitionCount: cfg.PartitionCount,
		Partitions:     cfg.Partitions,
		Queue:          eventQueue,
		Now:            cfg.Now,
		Removed: func(ra *coordinator.Actor[*actor]) {
			a := ra.State()
			a.removed = true
			if c.byProducer[a.snap.ProducerID] == a {
				delete(c.byProducer, a.snap.ProducerID)
			}
		},
		// An expired id's actor reaps itself after its current event,
		// but a request may come first: it is detached then, so the id
		// is unknown, or starts afresh, and never served as Dead.
		Stale: func(ra *coordinator.Actor[*actor]) bool { return ra.State().snap.State == StateDead.String() },
	})
	c.log = c.rt.Logger()
	c.wg.Add(1)
	go c.ticker()
	return c
}

// Close stops every actor, marker writer and timer; it returns when all
// goroutines have exited. Requests after Close answer
// COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Close() {
	c.closeOnce.Do(func() { close(c.stop) })
	c.rt.Close()
	c.wg.Wait()
}

func (c *Coordinator) now() time.Time { return c.rt.Now() }

// ticker runs Tick every AbortTimedOutInterval until Close.
func (c *Coordinator) ticker() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.AbortTimedOutInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.AbortTimedOutInterval)
			c.Tick(ctx)
			cancel()
		}
	}
}

// Tick makes every transactional id check its timeout and expiration
// against the clock now, and waits until each did (bounded by ctx): the
// node's AdvanceClock, and tests with a fake clock, call it after
// advancing.
func (c *Coordinator) Tick(ctx context.Context) {
	for _, a := range c.actors() {
		_ = a.send(ctx, func(a *actor) { a.tick() })
	}
}

// LoadPartition is LoadPartitionEpoch with coordinator epoch 0.
func (c *Coordinator) LoadPartition(ctx context.Context, p int32) error {
	return c.LoadPartitionEpoch(ctx, p, 0)
}

// LoadPartitionEpoch makes this node serve the transactional ids of
// __transaction_state partition p, whose leader epoch is coordinatorEpoch
// (it is sent with every marker so partition leaders reject markers of an
// older coordinator). It replays the partition, then serves the ids:
// transactions found in PrepareCommit or PrepareAbort are completed (their
// markers written again), Ongoing ones keep their timeout. While it runs,
// requests for those ids answer COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) LoadPartitionEpoch(ctx context.Context, p int32, coordinatorEpoch int32) error {
	l, err := c.rt.Begin(p, coordinatorEpoch)
	if err != nil || l == nil {
		return err
	}
	metas := make(map[string]*meta)
	var records, skipped int
	err = c.cfg.Store.Replay(ctx, p, func(r Record) error {
		if r.Control {
			return nil // __transaction_state holds no transaction
		}
		records++
		id, m, ok, err := decodeRecord(r)
		if err != nil {
			return err
		}
		if !ok {
			skipped++
			return nil
		}
		if m == nil {
			delete(metas, id)
			return nil
		}
		metas[id] = m
		return nil
	})
	if err != nil {
		l.Fail()
		return fmt.Errorf("load __transaction_state-%d: %w", p, err)
	}
	var resume []*actor
	err = l.Serve(func() {
		for _, m := range metas {
			if m.state == StateDead {
				continue
			}
			a := c.startLocked(m, p, coordinatorEpoch)
			if m.state == StatePrepareCommit || m.state == StatePrepareAbort {
				resume = append(resume, a)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("load __transaction_state-%d: %w", p, err)
	}
	c.log.Info("loaded __transaction_state partition", "partition", p, "records", records, "skipped", skipped,
		"transactional_ids", len(metas), "completing", len(resume))
	for _, a := range resume {
		// The actor has not run yet; sending cannot fail but for an unload.
		_ = a.send(ctx, func(a *actor) {
			if a.m.state == StatePrepareCommit || a.m.state == StatePrepareAbort {
				a.startMarkers()
			}
		})
	}
	return nil
}

// UnloadPartition stops serving the transactional ids of partition p (this
// node lost its leadership): their actors and marker writers stop and
// waiting requests get NOT_COORDINATOR. It returns when they have exited.
func (c *Coordinator) UnloadPartition(p int32) { c.rt.Unload(p) }

// startLocked starts the actor of m. The runtime's lock must be held.
func (c *Coordinator) startLocked(m *meta, part, coordinatorEpoch int32) *actor {
	a := c.rt.StartLocked(m.id, part, coordinatorEpoch, c.newActor(m)).State()
	a.indexLocked(-1)
	return a
}

// newActor returns the constructor of the actor of m, for the runtime.
func (c *Coordinator) newActor(m *meta) func(*coordinator.Actor[*actor]) *actor {
	return func(ra *coordinator.Actor[*actor]) *actor {
		a := &actor{c: c, ra: ra, id: m.id, part: ra.Partition(), epoch: ra.Epoch(), m: m, ctx: ra.Context()}
		a.snap = a.snapshot()
		return a
	}
}

// partitionOf is the __transaction_state partition of transactional id,
// over the count PartitionCount gives now (coordinator.Runtime.PartitionOf).
// Kafka reads the count once, at startup (TransactionStateManager.startup).
func (c *Coordinator) partitionOf(id string) int32 { return c.rt.PartitionOf(id) }

// run routes fn to the actor of id and waits until it ran, creating an
// actor with an unpersisted Empty state when create is set. With create
// unset and an unknown id, fn does not run and run returns (false, nil).
func (c *Coordinator) run(ctx context.Context, id string, create bool, fn func(a *actor)) (bool, error) {
	var newActor func(*coordinator.Actor[*actor]) *actor
	if create {
		newActor = func(ra *coordinator.Actor[*actor]) *actor { return c.newActor(newMeta(id, -1, 0, c.now()))(ra) }
	}
	ra, err := c.rt.Acquire(id, newActor)
	if errors.Is(err, coordinator.ErrUnknownKey) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = ra.SendCounted(ctx, publishing(fn))
	return true, err
}

// send runs fn on a's goroutine and waits for it.
func (a *actor) send(ctx context.Context, fn func(a *actor)) error {
	_, err := a.ra.Send(ctx, publishing(fn))
	return err
}

// publishing is fn followed by the publication of its effect, which every
// event makes before it is answered.
func publishing(fn func(a *actor)) func(a *actor) {
	return func(a *actor) {
		fn(a)
		a.publish()
	}
}

// actors returns every actor, by transactional id.
func (c *Coordinator) actors() []*actor {
	ras := c.rt.Actors()
	out := make([]*actor, len(ras))
	for i, ra := range ras {
		out[i] = ra.State()
	}
	return out
}

// actor is the state of one transactional id, owned by its runtime actor.
type actor struct {
	c     *Coordinator
	ra    *coordinator.Actor[*actor]
	id    string
	part  int32
	epoch int32           // coordinator epoch
	ctx   context.Context // the runtime actor's: canceled when it stops
	m     *meta           // owned by the actor goroutine

	writers sync.WaitGroup // the marker writer, which the actor waits for when it stops

	snap        TxnSnapshot // the state after the last event; guarded by the runtime's lock
	lastMarkers *markerRun  // the markers of the last or current end; guarded by the runtime's lock
	removed     bool        // the runtime forgot the actor; guarded by the runtime's lock
}

// Deadline is none: the coordinator's ticker checks timeouts (Tick).
func (a *actor) Deadline() (time.Time, bool) { return time.Time{}, false }

// Tick does nothing: the coordinator's ticker sends a.tick.
func (a *actor) Tick() {}

// Stop waits for the marker writer, which the actor's context stops.
func (a *actor) Stop() { a.writers.Wait() }

// Reapable reports an id with nothing worth keeping: expired, or created
// by an InitProducerID whose first record was never written.
func (a *actor) Reapable() bool {
	return a.m.state == StateDead || (!a.m.persisted && !a.m.markers)
}

func (a *actor) now() time.Time { return a.c.now() }

// publish makes the actor's state visible to Snapshot, ListTransactions
// and DescribeTransactions. Every event calls it before it is answered.
func (a *actor) publish() {
	snap := a.snapshot()
	a.c.rt.Lock()
	old := a.snap.ProducerID
	a.snap = snap
	a.indexLocked(old)
	a.c.rt.Unlock()
}

// indexLocked moves a in the producer id index from old to the producer id
// of its snapshot, while a is the id's actor. The runtime's lock must be
// held.
func (a *actor) indexLocked(old int64) {
	idx := a.c.byProducer
	if old != a.snap.ProducerID && idx[old] == a {
		delete(idx, old)
	}
	if a.snap.ProducerID >= 0 && !a.removed {
		idx[a.snap.ProducerID] = a
	}
}

// persist writes next to the log and, once committed, makes it the state.
func (a *actor) persist(next *meta) error {
	r := metaRecord(next)
	if err := a.append(r); err != nil {
		return err
	}
	next.persisted = true
	a.m = next
	return nil
}

// append writes one record to the id's partition.
func (a *actor) append(r Record) error {
	ctx, cancel := context.WithTimeout(a.ctx, appendTimeout)
	defer cancel()
	if err := a.c.cfg.Store.Append(ctx, a.part, []Record{r}); err != nil {
		a.c.log.Warn("append to __transaction_state failed", "partition", a.part, "transactional_id", a.id, "err", err)
		if coordinator.LostLeadership(err) {
			return fmt.Errorf("append for %q to __transaction_state-%d: %w: %w", a.id, a.part, ErrNotCoordinator, err)
		}
		return fmt.Errorf("append for %q to __transaction_state-%d: %w: %w", a.id, a.part, ErrCoordinatorNotAvailable, err)
	}
	return nil
}

// tick aborts a timed-out transaction and expires an unused id.
func (a *actor) tick() {
	now := a.now()
	switch {
	case a.m.timedOut(now):
		a.c.log.Info("aborting timed-out transaction", "transactional_id", a.id, "producer_id", a.m.producerID,
			"epoch", a.m.epoch, "timeout_ms", a.m.timeoutMillis)
		if err := a.abortFenced(); err != nil {
			a.c.log.Warn("abort of timed-out transaction failed", "transactional_id", a.id, "err", err)
		}
	case a.m.expired(now, a.c.cfg.TransactionalIDExpiration):
		if err := a.append(tombstone(a.id)); err != nil {
			a.c.log.Warn("expiring transactional id failed", "transactional_id", a.id, "err", err)
			return
		}
		a.c.log.Info("transactional id expired", "transactional_id", a.id, "producer_id", a.m.producerID)
		a.m.state = StateDead
	}
}

// abortFenced aborts the Ongoing transaction with a bumped epoch (Kafka's
// PrepareEpochFence): the producer is fenced and its data aborted.
func (a *actor) abortFenced() error {
	epoch := a.m.fenceEpoch()
	next := a.m.toPrepare(false, epoch, a.now())
	if err := a.persist(next); err != nil {
		// As Kafka's hasFailedEpochFence: the bumped epoch stays, in
		// memory only and never given to a producer, so that the retry
		// fences at it. Kept at the fenced producer's own epoch, the
		// retry's abort fenced nobody, and its transaction version 2
		// markers were refused as not above that epoch: the aborted
		// records stayed open, for the next commit to take in.
		a.m.epoch, a.m.lastEpoch = epoch, -1
		a.m.failedFence = true
		return err
	}
	a.m.failedFence = false
	a.startMarkers()
	return nil
}

// startMarkers starts the writer of the markers of the Prepare state.
func (a *actor) startMarkers() {
	m := a.m
	a.m.markers = true
	commit := m.state == StatePrepareCommit
	pid, epoch, tps := m.producerID, m.epoch, m.sortedPartitions()
	run := newMarkerRun(commit, tps)
	a.c.rt.Lock()
	a.lastMarkers = run
	a.c.rt.Unlock()
	a.writers.Add(1)
	go a.writeMarkers(run, pid, epoch, commit, m.txnVersion, tps)
}

// writeMarkers writes the markers until they are written or the actor
// stops, then has the actor persist the Complete state, retrying that too.
// It notes each attempt's outcome in run.
func (a *actor) writeMarkers(run *markerRun, pid int64, epoch int16, commit bool, txnVersion int16, tps []TopicPartition) {
	defer a.writers.Done()
	backoff := a.c.backoff
	wait := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, maxRetryBackoff)
		select {
		case <-t.C:
			return true
		case <-a.ctx.Done():
			return false
		}
	}
	for len(tps) > 0 {
		ctx, cancel := context.WithTimeout(a.ctx, markerTimeout)
		failed := a.c.cfg.Markers.WriteMarkers(ctx, pid, epoch, commit, a.epoch, txnVersion, tps)
		cancel()
		a.c.recordMarkers(run, tps, failed, a.now())
		tps = a.retryMarkers(pid, epoch, commit, tps, failed)
		if len(tps) == 0 {
			break
		}
		if !wait() {
			return
		}
	}
	backoff = a.c.backoff
	for {
		var done bool
		err := a.send(a.ctx, func(a *actor) {
			m := a.m
			if m.producerID != pid || m.epoch != epoch || (m.state != StatePrepareCommit && m.state != StatePrepareAbort) {
				done = true // nothing to complete any more
				m.markers = false
				return
			}
			if err := a.persist(m.toComplete(a.now())); err != nil {
				a.c.log.Warn("completing transaction failed; retrying", "transactional_id", a.id, "err", err)
				return
			}
			a.m.markers = false
			done = true
		})
		if err != nil || done || !wait() {
			return
		}
	}
}
