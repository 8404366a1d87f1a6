package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/broker/metadata"
)

// Store persists and replays the records of __transaction_state partitions
// (implemented by the broker over its partitions).
type Store interface {
	// Append writes records as one batch to partition p and returns once
	// committed (acks=all).
	Append(ctx context.Context, partition int32, records []Record) error
	// Replay calls fn with every record of partition p from log start to
	// the log end, in order, and returns once they are committed (a new
	// leader's high watermark trails its log end).
	Replay(ctx context.Context, partition int32, fn func(Record) error) error
}

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
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

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
// partitions this node leads. It is safe for concurrent use.
//
// Lock order: Coordinator.mu is a leaf; it is never held while sending to
// or waiting on an actor, nor during I/O.
type Coordinator struct {
	cfg Config
	log *slog.Logger

	mu struct {
		sync.Mutex
		closed bool
		parts  map[int32]*partState
		txns   map[string]*actor
		// byProducer indexes txns by the producer id each last published
		// (ClientMarker looks markers up by producer id).
		byProducer map[int64]*actor
	}
	wg      sync.WaitGroup
	stop    chan struct{} // closed by Close: stops the abort ticker
	backoff time.Duration // first retry backoff; tests shorten it
}

// partState is one __transaction_state partition this node leads.
type partState struct {
	loading bool
	epoch   int32 // coordinator epoch: the partition's leader epoch
}

// New returns a coordinator that leads no partition yet; call LoadPartition
// for each __transaction_state partition this node leads. It starts the
// goroutine that aborts timed-out transactions and expires transactional
// ids every AbortTimedOutInterval; Close stops it.
func New(cfg Config) *Coordinator {
	cfg.defaults()
	c := &Coordinator{cfg: cfg, log: cfg.Logger, stop: make(chan struct{}), backoff: minRetryBackoff}
	c.mu.parts = make(map[int32]*partState)
	c.mu.txns = make(map[string]*actor)
	c.mu.byProducer = make(map[int64]*actor)
	c.wg.Add(1)
	go c.ticker()
	return c
}

// Close stops every actor, marker writer and timer; it returns when all
// goroutines have exited. Requests after Close answer
// COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		c.wg.Wait()
		return
	}
	c.mu.closed = true
	close(c.stop)
	actors := make([]*actor, 0, len(c.mu.txns))
	for _, a := range c.mu.txns {
		actors = append(actors, a)
		c.forgetLocked(a)
	}
	clear(c.mu.parts)
	c.mu.Unlock()
	for _, a := range actors {
		a.cancel()
	}
	c.wg.Wait()
}

func (c *Coordinator) now() time.Time { return c.cfg.Now() }

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
		_ = c.send(ctx, a, func(a *actor) { a.tick() })
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
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if ps, ok := c.mu.parts[p]; ok && ps.epoch >= coordinatorEpoch {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	c.UnloadPartition(p) // a newer epoch: start over

	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	ps := &partState{loading: true, epoch: coordinatorEpoch}
	c.mu.parts[p] = ps
	c.mu.Unlock()

	metas := make(map[string]*meta)
	var records, skipped int
	err := c.cfg.Store.Replay(ctx, p, func(r Record) error {
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
		c.mu.Lock()
		if c.mu.parts[p] == ps {
			delete(c.mu.parts, p)
		}
		c.mu.Unlock()
		return fmt.Errorf("load __transaction_state-%d: %w", p, err)
	}

	c.mu.Lock()
	if c.mu.closed || c.mu.parts[p] != ps {
		c.mu.Unlock()
		return fmt.Errorf("load __transaction_state-%d: %w", p, ErrNotLoaded)
	}
	var resume []*actor
	for _, m := range metas {
		if m.state == StateDead {
			continue
		}
		a := c.startLocked(m, p, coordinatorEpoch)
		if m.state == StatePrepareCommit || m.state == StatePrepareAbort {
			resume = append(resume, a)
		}
	}
	ps.loading = false
	c.mu.Unlock()
	c.log.Info("loaded __transaction_state partition", "partition", p, "records", records, "skipped", skipped,
		"transactional_ids", len(metas), "completing", len(resume))
	for _, a := range resume {
		// The actor has not run yet; sending cannot fail but for an unload.
		_ = c.send(ctx, a, func(a *actor) {
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
func (c *Coordinator) UnloadPartition(p int32) {
	c.mu.Lock()
	delete(c.mu.parts, p)
	var stopped []*actor
	for _, a := range c.mu.txns {
		if a.part == p {
			stopped = append(stopped, a)
			c.forgetLocked(a)
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

// startLocked starts the actor of m. c.mu must be held.
func (c *Coordinator) startLocked(m *meta, part, coordinatorEpoch int32) *actor {
	ctx, cancel := context.WithCancel(context.Background())
	a := &actor{
		c:      c,
		id:     m.id,
		part:   part,
		epoch:  coordinatorEpoch,
		m:      m,
		events: make(chan func(*actor), eventQueue),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	a.snap = a.snapshot()
	c.mu.txns[m.id] = a
	a.indexLocked(-1)
	c.wg.Add(1)
	go a.loop()
	return a
}

// forgetLocked removes a from the coordinator's maps. c.mu must be held.
func (c *Coordinator) forgetLocked(a *actor) {
	if c.mu.txns[a.id] == a {
		delete(c.mu.txns, a.id)
	}
	if c.mu.byProducer[a.snap.ProducerID] == a {
		delete(c.mu.byProducer, a.snap.ProducerID)
	}
}

// partitionOf is the __transaction_state partition of transactional id,
// over the count PartitionCount gives now: the node passes the topic's own
// count, so the coordinator serves whatever count the topic has (a client
// may have created it). Kafka reads the count once, at startup
// (TransactionStateManager.startup), and answers NOT_COORDINATOR until a
// restart when the two differ.
func (c *Coordinator) partitionOf(id string) int32 {
	return metadata.CoordinatorPartition(id, c.cfg.PartitionCount())
}

// lookup returns the actor of id, creating one with an unpersisted Empty
// state when create is set. A nil actor and nil error means the id is
// unknown.
func (c *Coordinator) lookup(id string, create bool) (*actor, error) {
	p := c.partitionOf(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, ErrCoordinatorNotAvailable
	}
	ps, ok := c.mu.parts[p]
	switch {
	case !ok:
		return nil, ErrNotCoordinator
	case ps.loading:
		return nil, ErrLoadInProgress
	}
	a := c.mu.txns[id]
	if a != nil && a.part != p {
		// Loaded from a partition the id no longer hashes to: the
		// topic was recreated with another count and the node has not
		// unloaded the old partitions yet.
		return nil, ErrNotCoordinator
	}
	if a != nil && a.snap.State == StateDead.String() {
		// Expired: the actor reaps itself after its current event, but a
		// request may come first. Detach it now, as its reaping would, so
		// the id is unknown, or starts afresh, and never served as Dead.
		c.forgetLocked(a)
		a.cancel()
		a = nil
	}
	if a == nil && create {
		a = c.startLocked(newMeta(id, -1, 0, c.now()), p, ps.epoch)
	}
	if a != nil {
		a.inflight++
	}
	return a, nil
}

// run routes fn to the actor of id and waits until it ran. With create
// unset and an unknown id, fn does not run and run returns (false, nil).
func (c *Coordinator) run(ctx context.Context, id string, create bool, fn func(a *actor)) (bool, error) {
	a, err := c.lookup(id, create)
	if err != nil || a == nil {
		return false, err
	}
	return true, c.sendCounted(ctx, a, fn)
}

// send runs fn on a's goroutine and waits for it.
func (c *Coordinator) send(ctx context.Context, a *actor, fn func(a *actor)) error {
	c.mu.Lock()
	a.inflight++
	c.mu.Unlock()
	return c.sendCounted(ctx, a, fn)
}

// sendCounted is send for an event already counted in a.inflight.
func (c *Coordinator) sendCounted(ctx context.Context, a *actor, fn func(a *actor)) error {
	// started arbitrates between the actor running fn and the caller giving
	// up: whoever swaps it first wins, so fn never writes into an answer the
	// caller has already returned.
	var started atomic.Int32
	ran := make(chan struct{})
	ev := func(a *actor) {
		if started.CompareAndSwap(0, 1) {
			fn(a)
			a.publish()
		}
		close(ran)
	}
	select {
	case a.events <- ev:
	case <-a.done:
		c.uncount(a)
		return ErrNotCoordinator
	case <-ctx.Done():
		c.uncount(a)
		return ErrTimedOut
	}
	select {
	case <-ran:
		return nil
	case <-a.done:
		if started.CompareAndSwap(0, 2) {
			return ErrNotCoordinator
		}
		<-ran
		return nil
	case <-ctx.Done():
		if started.CompareAndSwap(0, 2) {
			return ErrTimedOut
		}
		// fn is running; it is bounded (appends time out), so wait for it.
		<-ran
		return nil
	}
}

func (c *Coordinator) uncount(a *actor) {
	c.mu.Lock()
	a.inflight--
	c.mu.Unlock()
}

// actors returns every actor, by transactional id.
func (c *Coordinator) actors() []*actor {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*actor, 0, len(c.mu.txns))
	for _, a := range c.mu.txns {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// actor is the goroutine that owns one transactional id.
type actor struct {
	c     *Coordinator
	id    string
	part  int32
	epoch int32 // coordinator epoch
	m     *meta // owned by the actor goroutine

	events  chan func(*actor)
	ctx     context.Context // canceled to stop the actor and its marker writer
	cancel  context.CancelFunc
	done    chan struct{} // closed when the goroutine and its marker writer have exited
	writers sync.WaitGroup

	inflight    int         // events sent or being sent and not yet run; guarded by c.mu
	snap        TxnSnapshot // the state after the last event; guarded by c.mu
	lastMarkers *markerRun  // the markers of the last or current end; guarded by c.mu
}

func (a *actor) loop() {
	defer a.c.wg.Done()
	defer close(a.done)
	defer a.writers.Wait()
	for {
		select {
		case <-a.ctx.Done():
			return
		case ev := <-a.events:
			ev(a) // publishes its effect before it answers
			a.c.uncount(a)
		}
		if a.reapable() && a.tryReap() {
			return
		}
	}
}

// reapable reports an id with nothing worth keeping: expired, or created by
// an InitProducerID whose first record was never written.
func (a *actor) reapable() bool {
	return a.m.state == StateDead || (!a.m.persisted && !a.m.markers)
}

// tryReap removes the actor from the coordinator when no event is queued
// or about to be.
func (a *actor) tryReap() bool {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.inflight > 0 || a.c.mu.txns[a.id] != a {
		return false
	}
	a.c.forgetLocked(a)
	a.cancel()
	return true
}

func (a *actor) now() time.Time { return a.c.now() }

// publish makes the actor's state visible to Snapshot, ListTransactions
// and DescribeTransactions. Every event calls it before it is answered.
func (a *actor) publish() {
	snap := a.snapshot()
	a.c.mu.Lock()
	old := a.snap.ProducerID
	a.snap = snap
	a.indexLocked(old)
	a.c.mu.Unlock()
}

// indexLocked moves a in the producer id index from old to the producer id
// of its snapshot, while a is the id's actor. c.mu must be held.
func (a *actor) indexLocked(old int64) {
	idx := a.c.mu.byProducer
	if old != a.snap.ProducerID && idx[old] == a {
		delete(idx, old)
	}
	if a.snap.ProducerID >= 0 && a.c.mu.txns[a.id] == a {
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
		if errors.Is(err, ErrNotLeader) || errors.Is(err, context.Canceled) {
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
	a.c.mu.Lock()
	a.lastMarkers = run
	a.c.mu.Unlock()
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
		ran := make(chan struct{})
		ev := func(a *actor) {
			defer close(ran)
			defer a.publish()
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
		}
		a.c.mu.Lock()
		a.inflight++
		a.c.mu.Unlock()
		select {
		case a.events <- ev:
		case <-a.ctx.Done():
			a.c.uncount(a)
			return
		}
		select {
		case <-ran:
		case <-a.ctx.Done():
			return
		}
		if done || !wait() {
			return
		}
	}
}
