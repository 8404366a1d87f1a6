package coordinator

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/klogdev/klog/broker/metadata"
)

// State is what a user keeps for one key: a group, a transactional id.
// The runtime calls its methods on the key's actor goroutine only, which
// owns it.
type State interface {
	// Deadline is when the actor calls Tick next; false for none.
	Deadline() (time.Time, bool)
	// Tick runs what is due at the clock now.
	Tick()
	// Reapable reports that the key holds nothing worth keeping: its
	// actor exits, and the key is forgotten, once no event is queued.
	Reapable() bool
	// Stop is called once, last, when the actor exits (unloaded, closed
	// or reaped): it answers whoever still waits on the key and waits for
	// what the key started.
	Stop()
}

// Config configures a Runtime.
type Config[S State] struct {
	Logger *slog.Logger
	// Topic names the internal topic in logs ("__consumer_offsets").
	Topic string
	// PartitionCount is the current partition count of the internal
	// topic, over which keys hash (metadata.CoordinatorPartition); nil =
	// Partitions.
	PartitionCount func() int32
	// Partitions is the count when PartitionCount is nil; zero = 50, the
	// default of Kafka's offsets.topic.num.partitions and
	// transaction.state.log.num.partitions.
	Partitions int32
	// Queue is the capacity of each key's event queue (at least 1):
	// senders wait, bounded by their context, while it is full.
	Queue int
	// Now is the clock of deadlines; nil = time.Now.
	Now func() time.Time
	// Removed, when set, is called with the runtime's lock held each time
	// a key's actor leaves the runtime (reaped, detached, unloaded,
	// closed), so the user drops it from what it indexes under that lock.
	Removed func(a *Actor[S])
	// Dropped, when set, is called with the runtime's lock held each time
	// a partition leaves the runtime (unloaded, failed to load, closed),
	// before its actors are removed.
	Dropped func(partition int32)
	// Stale, when set, is asked with the runtime's lock held whether the
	// actor found for a key no longer stands for it (e.g. the key expired
	// and the actor is about to be reaped): such an actor is detached, as
	// its reaping would, and the key treated as unknown.
	Stale func(a *Actor[S]) bool
}

// minTimerDelay keeps an actor's timer from spinning when a deadline is
// due but the clock has not reached it.
const minTimerDelay = time.Millisecond

// Runtime serves the keys of the internal topic partitions this node
// leads. It is safe for concurrent use.
//
// Lock order: the runtime's lock (Lock) is a leaf; it is never held while
// sending to or waiting on an actor, nor during I/O. A user guards what it
// keeps beside its actors (indexes of keys) with the same lock.
type Runtime[S State] struct {
	cfg Config[S]
	log *slog.Logger

	mu struct {
		sync.Mutex
		closed bool
		parts  map[int32]*partState
		actors map[string]*Actor[S]
	}
	wg sync.WaitGroup
}

// partState is one partition the runtime serves or loads.
type partState struct {
	loading bool
	epoch   int32
}

// New returns a runtime that serves no partition yet.
func New[S State](cfg Config[S]) *Runtime[S] {
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
	cfg.Queue = max(cfg.Queue, 1)
	r := &Runtime[S]{cfg: cfg, log: cfg.Logger}
	r.mu.parts = make(map[int32]*partState)
	r.mu.actors = make(map[string]*Actor[S])
	return r
}

// Logger is the runtime's logger (Config.Logger, or one that discards).
func (r *Runtime[S]) Logger() *slog.Logger { return r.log }

// Now is the clock now (Config.Now).
func (r *Runtime[S]) Now() time.Time { return r.cfg.Now() }

// Lock takes the runtime's lock; the ...Locked methods need it held.
func (r *Runtime[S]) Lock() { r.mu.Lock() }

// Unlock releases the runtime's lock.
func (r *Runtime[S]) Unlock() { r.mu.Unlock() }

// Close stops every actor and forgets every partition; it returns when the
// actors have exited. Requests after Close get ErrNotAvailable, loads
// ErrClosed. Close may be called more than once.
func (r *Runtime[S]) Close() {
	r.mu.Lock()
	r.mu.closed = true
	for p := range r.mu.parts {
		r.dropLocked(p)
	}
	actors := make([]*Actor[S], 0, len(r.mu.actors))
	for _, a := range r.mu.actors {
		actors = append(actors, a)
		r.removeLocked(a)
	}
	r.mu.Unlock()
	for _, a := range actors {
		a.cancel()
	}
	r.wg.Wait()
}

// PartitionOf is the partition of the internal topic that holds key, over
// the count PartitionCount gives now: the node passes the topic's own
// count, so the runtime serves whatever count the topic has (a client may
// have created it). Kafka reads the count once, at startup, and answers
// NOT_COORDINATOR until a restart when the two differ.
func (r *Runtime[S]) PartitionOf(key string) int32 {
	return metadata.CoordinatorPartition(key, r.cfg.PartitionCount())
}

// Loading is a load of one partition under way, from Begin to Serve or
// Fail.
type Loading[S State] struct {
	r  *Runtime[S]
	p  int32
	ps *partState
}

// Begin starts loading partition p at leader epoch epoch: until Serve,
// requests for its keys get ErrLoadInProgress. It returns nil, nil when p
// is served or loading at epoch or a newer one; at an older one, p is
// unloaded first and loaded afresh.
func (r *Runtime[S]) Begin(p, epoch int32) (*Loading[S], error) {
	r.mu.Lock()
	if r.mu.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if ps, ok := r.mu.parts[p]; ok {
		if ps.epoch >= epoch {
			r.mu.Unlock()
			return nil, nil
		}
		r.mu.Unlock()
		r.Unload(p) // a newer epoch: start over
		r.mu.Lock()
		if r.mu.closed {
			r.mu.Unlock()
			return nil, ErrClosed
		}
	}
	ps := &partState{loading: true, epoch: epoch}
	r.mu.parts[p] = ps
	r.mu.Unlock()
	return &Loading[S]{r: r, p: p, ps: ps}, nil
}

// Fail ends a load whose replay failed: the partition is not served.
func (l *Loading[S]) Fail() {
	l.r.mu.Lock()
	defer l.r.mu.Unlock()
	if l.r.mu.parts[l.p] == l.ps {
		l.r.dropLocked(l.p)
	}
}

// Serve ends a replayed load: with the runtime's lock held it calls start,
// which starts the actors of the partition's keys (StartLocked), then
// serves the partition. If the partition was unloaded, or the runtime
// closed, meanwhile, start is not called and Serve returns ErrNotLoaded.
func (l *Loading[S]) Serve(start func()) error {
	l.r.mu.Lock()
	defer l.r.mu.Unlock()
	if l.r.mu.closed || l.r.mu.parts[l.p] != l.ps {
		return ErrNotLoaded
	}
	start()
	l.ps.loading = false
	return nil
}

// Unload stops serving the keys of partition p (this node lost its
// leadership): their actors stop, and requests waiting on them get
// ErrNotCoordinator. It returns when those actors have exited.
func (r *Runtime[S]) Unload(p int32) {
	r.mu.Lock()
	if _, ok := r.mu.parts[p]; ok {
		r.dropLocked(p)
	}
	var stopped []*Actor[S]
	for _, a := range r.mu.actors {
		if a.part == p {
			stopped = append(stopped, a)
			r.removeLocked(a)
		}
	}
	r.mu.Unlock()
	for _, a := range stopped {
		a.cancel()
	}
	for _, a := range stopped {
		<-a.done
	}
}

// dropLocked forgets partition p. r.mu must be held.
func (r *Runtime[S]) dropLocked(p int32) {
	if r.cfg.Dropped != nil {
		r.cfg.Dropped(p)
	}
	delete(r.mu.parts, p)
}

// removeLocked forgets a, if it is its key's actor. r.mu must be held.
func (r *Runtime[S]) removeLocked(a *Actor[S]) {
	if r.mu.actors[a.key] != a {
		return
	}
	delete(r.mu.actors, a.key)
	if r.cfg.Removed != nil {
		r.cfg.Removed(a)
	}
}

// ServedLocked checks that the runtime serves partition p now: nil, or
// ErrNotAvailable (closed), ErrNotCoordinator (not led here) or
// ErrLoadInProgress. It returns p's leader epoch. r.mu must be held.
func (r *Runtime[S]) ServedLocked(p int32) (int32, error) {
	if r.mu.closed {
		return 0, ErrNotAvailable
	}
	ps, ok := r.mu.parts[p]
	switch {
	case !ok:
		return 0, ErrNotCoordinator
	case ps.loading:
		return 0, ErrLoadInProgress
	}
	return ps.epoch, nil
}

// AllServedLocked checks that the runtime is open and loads no partition
// now: nil, ErrNotAvailable or ErrLoadInProgress. It returns the highest
// leader epoch of the partitions it serves. r.mu must be held.
func (r *Runtime[S]) AllServedLocked() (int32, error) {
	if r.mu.closed {
		return 0, ErrNotAvailable
	}
	var highest int32
	for _, ps := range r.mu.parts {
		if ps.loading {
			return 0, ErrLoadInProgress
		}
		highest = max(highest, ps.epoch)
	}
	return highest, nil
}

// ActorLocked returns the actor of key, nil for none. r.mu must be held.
func (r *Runtime[S]) ActorLocked(key string) *Actor[S] { return r.mu.actors[key] }

// StartLocked starts the actor of key in partition p, at the partition's
// epoch, over the state newState returns (given the actor, before it
// runs). r.mu must be held.
func (r *Runtime[S]) StartLocked(key string, p, epoch int32, newState func(*Actor[S]) S) *Actor[S] {
	ctx, cancel := context.WithCancel(context.Background())
	a := &Actor[S]{
		r:      r,
		key:    key,
		part:   p,
		epoch:  epoch,
		events: make(chan func(S), r.cfg.Queue),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	a.state = newState(a)
	r.mu.actors[key] = a
	r.wg.Add(1)
	go a.loop()
	return a
}

// Actors returns the actor of every key the runtime serves, sorted by key.
func (r *Runtime[S]) Actors() []*Actor[S] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ActorsLocked()
}

// ActorsLocked is Actors with r.mu held.
func (r *Runtime[S]) ActorsLocked() []*Actor[S] {
	out := make([]*Actor[S], 0, len(r.mu.actors))
	for _, a := range r.mu.actors {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// Acquire returns the actor of key, counted for one event the caller then
// sends with SendCounted, after the served check (ServedLocked); a key
// loaded from a partition it no longer hashes to (the topic was recreated
// with another count) is ErrNotCoordinator. Without an actor it starts one
// over create's state if create is set, else returns ErrUnknownKey.
func (r *Runtime[S]) Acquire(key string, create func(*Actor[S]) S) (*Actor[S], error) {
	p := r.PartitionOf(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	epoch, err := r.ServedLocked(p)
	if err != nil {
		return nil, err
	}
	a := r.mu.actors[key]
	if a != nil && a.part != p {
		return nil, ErrNotCoordinator
	}
	if a != nil && r.cfg.Stale != nil && r.cfg.Stale(a) {
		r.removeLocked(a)
		a.cancel()
		a = nil
	}
	if a == nil {
		if create == nil {
			return nil, ErrUnknownKey
		}
		a = r.StartLocked(key, p, epoch, create)
	}
	a.inflight++
	return a, nil
}

// Run routes fn to the actor of key and waits until it ran (Acquire, then
// SendCounted). The returned channel closes when the actor exits.
func (r *Runtime[S]) Run(ctx context.Context, key string, create func(*Actor[S]) S, fn func(S)) (<-chan struct{}, error) {
	a, err := r.Acquire(key, create)
	if err != nil {
		return nil, err
	}
	return a.SendCounted(ctx, fn)
}
