package partition

import (
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

// Options configures a partition.
type Options struct {
	// ReplicaID is this node's broker id (node.id): the replica leads when
	// its leader state names it.
	ReplicaID int32
	Logger    *slog.Logger
	// ReplicaLagTimeMaxMs is replica.lag.time.max.ms: how long a follower
	// may lag before the leader proposes to drop it from the ISR. Zero
	// means DefaultReplicaLagTimeMaxMs.
	ReplicaLagTimeMaxMs int64
	// Now is the clock of follower tracking; nil means time.Now.
	Now func() time.Time
	// HighWatermark is the high watermark the replica starts with, from
	// replication-offset-checkpoint, kept within the log's start and end
	// offsets; 0 (no checkpoint) is the log start, as in Kafka. The log
	// end may hold records never committed: a leader moves the high
	// watermark on as its followers fetch, a follower as its leader says.
	HighWatermark int64
	// Durable makes every write as leader durable before it counts: the
	// write returns (or, with AppendOptions.DeferSync, SyncTo does) once
	// its records are fsynced, and the high watermark moves over synced
	// records only (klog.produce.durable). Concurrent writes share
	// fsyncs (log.Log.SyncTo).
	Durable bool
}

// Isolation selects the upper bound of a read.
type Isolation int8

const (
	// ReadUncommitted reads up to the high watermark.
	ReadUncommitted Isolation = iota
	// ReadCommitted reads up to the last stable offset.
	ReadCommitted
	// ReadReplica reads up to the log end offset (followers).
	ReadReplica
)

// Partition is one local replica.
type Partition struct {
	topic     string
	index     int32
	topicID   [16]byte
	replicaID int32
	log       *log.Log
	logger    *slog.Logger
	lagMaxMs  int64
	durable   bool // Options.Durable
	now       func() time.Time

	// state and hw are stored only with mu held, so a holder of mu sees
	// them fixed; readers load them without it.
	state atomic.Pointer[LeaderState]
	hw    atomic.Int64
	// hwKnown is whether hw is a high watermark rather than the log end
	// New starts from: set once this replica led (its own) or took one
	// from the leader (UpdateHighWatermarkFromLeader). Only a follower
	// whose hw is known serves consumers (CheckReplica); until the
	// high-watermark checkpoint exists, a restarted follower's log end may
	// hold records never committed.
	hwKnown atomic.Bool

	mu struct {
		sync.Mutex // held while appending and while the leader state changes
		closed     bool
		waiters    []chan<- struct{}
		// followers is the leader's state of every other assigned
		// replica, in replica order; nil unless this replica leads.
		followers []ReplicaState
		// epochStart is the log end offset when this replica took its
		// current leader epoch: a follower joins the ISR only past it.
		epochStart int64
	}

	// beforeWrite, set only by tests, runs with mu held between the
	// leadership check and the log write.
	beforeWrite func()
}

// New wraps an open log. The replica leads nothing until SetLeaderState.
func New(topic string, index int32, topicID [16]byte, l *log.Log, opts Options) *Partition {
	p := &Partition{topic: topic, index: index, topicID: topicID, replicaID: opts.ReplicaID, log: l, logger: opts.Logger,
		lagMaxMs: opts.ReplicaLagTimeMaxMs, now: opts.Now, durable: opts.Durable}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	if p.lagMaxMs <= 0 {
		p.lagMaxMs = DefaultReplicaLagTimeMaxMs
	}
	if p.now == nil {
		p.now = time.Now
	}
	st := noLeader
	p.state.Store(&st)
	p.hw.Store(min(max(opts.HighWatermark, l.StartOffset()), l.EndOffset()))
	return p
}

// Topic is the partition's topic name.
func (p *Partition) Topic() string { return p.topic }

// Index is the partition number.
func (p *Partition) Index() int32 { return p.index }

// TopicID is the id of the topic this replica belongs to.
func (p *Partition) TopicID() [16]byte { return p.topicID }

// SetLeaderState replaces the leader state whole. It waits for an append in
// flight: once it returns, every later append checks and stamps st. A
// replica that takes a new leader epoch starts tracking its followers
// afresh; a smaller ISR may advance the high watermark. Waiters are woken
// when the high watermark moves and when the replica stops leading.
func (p *Partition) SetLeaderState(st LeaderState) {
	next := st.clone()
	p.mu.Lock()
	prev := p.state.Load()
	wasLeader := p.leads(prev)
	newEpoch := !wasLeader || prev.Epoch != next.Epoch
	p.state.Store(&next)
	if wasLeader {
		p.hwKnown.Store(true)
	}
	if p.leads(&next) && newEpoch {
		p.mu.epochStart = p.log.EndOffset()
	}
	nowMs := p.now().UnixMilli()
	p.resetFollowersLocked(&next, prev.ISR, wasLeader, newEpoch, nowMs)
	var waiters []chan<- struct{}
	switch {
	case wasLeader && !p.leads(&next):
		// Writes waiting for the high watermark learn at once that it
		// will not move here any more.
		waiters = p.takeWaitersLocked()
	case p.leads(&next) && p.maybeAdvanceHWLocked(&next, p.leaderEnd(), nowMs):
		waiters = p.takeWaitersLocked()
	}
	p.mu.Unlock()
	wake(waiters)
}

// LeaderState is the current leader state. Its slices must not be
// modified.
func (p *Partition) LeaderState() LeaderState { return *p.state.Load() }

// IsLeader reports whether this replica leads the partition.
func (p *Partition) IsLeader() bool { return p.leads(p.state.Load()) }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 { return p.state.Load().Epoch }

func (p *Partition) leads(st *LeaderState) bool { return st.Leader == p.replicaID }

// CheckLeader validates a client's view of the partition against one leader
// state, in the order of Kafka's Partition.getLocalLog with requireLeader:
// ErrFencedLeaderEpoch or ErrUnknownLeaderEpoch when epoch is older or
// newer than the current one, which a follower knows too, then
// ErrNotLeader unless this replica leads. An epoch of -1 skips the epoch
// check, as Kafka does.
func (p *Partition) CheckLeader(epoch int32) error {
	st := p.state.Load()
	if err := checkEpoch(st, epoch); err != nil {
		return err
	}
	if !p.leads(st) {
		return ErrNotLeader
	}
	return nil
}

// CheckReplica is CheckLeader for a read any replica may serve (a
// consumer's fetch from a follower, KIP-392): the epoch check, as Kafka's
// Partition.getLocalLog without requireLeader, then, on a follower,
// ErrHighWatermarkUnknown until it knows its high watermark (klog only:
// Kafka's follower starts from its high-watermark checkpoint).
func (p *Partition) CheckReplica(epoch int32) error {
	st := p.state.Load()
	if err := checkEpoch(st, epoch); err != nil {
		return err
	}
	if !p.leads(st) && !p.hwKnown.Load() {
		return ErrHighWatermarkUnknown
	}
	return nil
}

// checkEpoch is Kafka's Partition.checkCurrentLeaderEpoch: a client's
// epoch against the replica's current leader epoch, -1 for none.
func checkEpoch(st *LeaderState, epoch int32) error {
	switch {
	case epoch < 0:
		return nil
	case epoch < st.Epoch:
		return ErrFencedLeaderEpoch
	case epoch > st.Epoch:
		return ErrUnknownLeaderEpoch
	}
	return nil
}

// SetConfig applies changed topic configs to the log.
func (p *Partition) SetConfig(cfg log.Config) { p.log.SetConfig(cfg) }

// AppendOptions are conditions an append requires of the leader state,
// checked in the critical section that appends.
type AppendOptions struct {
	// MinInSyncReplicas refuses the append with ErrNotEnoughReplicas when
	// the ISR is smaller: min.insync.replicas, for acks=-1 produces. Zero
	// or less accepts any ISR.
	MinInSyncReplicas int64
	// DeferSync leaves a durable partition's sync to the caller, who
	// calls SyncTo before acknowledging: a produce of many partitions
	// syncs them together.
	DeferSync bool
}

// Append validates and appends batches as leader, stamped with the leader
// epoch, advances the high watermark and wakes waiting fetches.
func (p *Partition) Append(batches []byte) (log.AppendResult, error) {
	bs := record.ParseBatches(batches)
	return p.AppendWith(&bs, AppendOptions{})
}

// AppendWith is Append of batches whose headers are parsed already,
// refused, with nothing written, unless the leader state meets opts.
func (p *Partition) AppendWith(batches *record.Batches, opts AppendOptions) (log.AppendResult, error) {
	var res log.AppendResult
	err := p.writeAsLeader(opts, func(epoch int32) error {
		var err error
		res, err = p.log.AppendBatches(batches, epoch)
		return err
	})
	return res, err
}

// AppendMarker writes a transaction marker (commit or abort) for a
// producer as leader, then advances the high watermark and wakes fetches:
// read_committed readers may now see past the transaction.
func (p *Partition) AppendMarker(m log.Marker) (int64, error) {
	return p.AppendCoordinatorMarker(m, math.MaxInt32)
}

// AppendCoordinatorMarker is AppendMarker for this node's own transaction
// coordinator, which knows no coordinator epoch above maxCoordinatorEpoch
// was ever held: a higher one recorded for the producer was forged and
// does not fence the marker (log.Log.AppendCoordinatorMarker).
func (p *Partition) AppendCoordinatorMarker(m log.Marker, maxCoordinatorEpoch int32) (int64, error) {
	var offset int64
	err := p.writeAsLeader(AppendOptions{}, func(epoch int32) error {
		var err error
		offset, err = p.log.AppendCoordinatorMarker(m, epoch, maxCoordinatorEpoch)
		return err
	})
	if err != nil {
		return 0, err
	}
	return offset, nil
}

// writeAsLeader calls write with mu held, once this replica is checked to
// lead and to meet opts, with the leader epoch to stamp: the check and the
// write see the same leader state. After a successful write the high
// watermark moves and fetches wake.
func (p *Partition) writeAsLeader(opts AppendOptions, write func(epoch int32) error) error {
	p.mu.Lock()
	st := p.state.Load()
	var err error
	switch {
	case !p.leads(st):
		err = ErrNotLeader
	case p.mu.closed:
		err = ErrClosed
	case int64(len(st.ISR)) < opts.MinInSyncReplicas:
		err = ErrNotEnoughReplicas
	}
	if err == nil {
		if p.beforeWrite != nil {
			p.beforeWrite()
		}
		err = write(st.Epoch)
	}
	if err != nil {
		p.mu.Unlock()
		return err
	}
	if p.durable {
		// The high watermark moves once the records are synced.
		end := p.log.EndOffset()
		p.mu.Unlock()
		if opts.DeferSync {
			return nil
		}
		return p.SyncTo(end)
	}
	// With no followers the high watermark is the log end offset; else
	// the followers' fetches move it.
	if len(p.mu.followers) == 0 {
		p.hw.Store(p.log.EndOffset())
	} else {
		p.maybeAdvanceHWLocked(st, p.log.EndOffset(), p.now().UnixMilli())
	}
	waiters := p.mu.waiters
	p.mu.waiters = nil
	p.mu.Unlock()
	wake(waiters)
	return nil
}

// SyncTo makes the records below offset durable, sharing the fsync with
// concurrent writers, then moves the high watermark over what is synced
// and wakes the waiting fetches and produces. Only a durable partition
// needs it (Options.Durable); elsewhere it syncs and changes nothing else.
func (p *Partition) SyncTo(offset int64) error {
	if err := p.log.SyncTo(offset); err != nil {
		return err
	}
	if !p.durable {
		return nil
	}
	p.mu.Lock()
	st := p.state.Load()
	if !p.leads(st) || p.mu.closed {
		// Whatever waits on the high watermark learns it elsewhere.
		p.mu.Unlock()
		return nil
	}
	advanced := false
	if end := p.leaderEnd(); len(p.mu.followers) == 0 {
		if end > p.hw.Load() {
			p.hw.Store(end)
			advanced = true
		}
	} else {
		advanced = p.maybeAdvanceHWLocked(st, end, p.now().UnixMilli())
	}
	var waiters []chan<- struct{}
	if advanced {
		waiters = p.takeWaitersLocked()
	}
	p.mu.Unlock()
	wake(waiters)
	return nil
}

// leaderEnd is the log end the high watermark may reach as leader: the
// log end offset, or for a durable partition what of it is synced.
func (p *Partition) leaderEnd() int64 {
	end := p.log.EndOffset()
	if p.durable {
		end = min(end, p.log.Synced())
	}
	return end
}

// takeWaitersLocked unregisters the fetch waiters and returns them, to be
// woken once mu is released.
func (p *Partition) takeWaitersLocked() []chan<- struct{} {
	waiters := p.mu.waiters
	p.mu.waiters = nil
	return waiters
}

// wake signals each waiter without blocking; a waiter's channel has room
// for one signal, and one is all it needs.
func wake(waiters []chan<- struct{}) {
	for _, w := range waiters {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// Read appends whole batches starting at offset to dst, up to the bound
// chosen by isolation. minOneBatch returns the first batch even when it is
// larger than maxBytes.
func (p *Partition) Read(dst []byte, offset int64, maxBytes int, iso Isolation, minOneBatch bool) ([]byte, error) {
	return p.log.Read(dst, offset, maxBytes, p.bound(iso), minOneBatch)
}

// Bound is the offset below which records are readable at iso: the log
// end for a follower, the last stable offset for read_committed, else the
// high watermark.
func (p *Partition) Bound(iso Isolation) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bound(iso)
}

func (p *Partition) bound(iso Isolation) int64 {
	switch iso {
	case ReadReplica:
		return p.log.EndOffset()
	case ReadCommitted:
		return p.LastStableOffset()
	}
	return p.hw.Load()
}

// Wait registers ch to receive one signal at the next append. It reports
// false, without registering, when data beyond offset is already readable
// at iso, so the caller never misses an append that raced with it.
func (p *Partition) Wait(ch chan<- struct{}, offset int64, iso Isolation) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed || p.bound(iso) > offset {
		return false
	}
	p.mu.waiters = append(p.mu.waiters, ch)
	return true
}

// Unwait removes ch registered by Wait, if it is still registered.
func (p *Partition) Unwait(ch chan<- struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.mu.waiters {
		if w == ch {
			p.mu.waiters = append(p.mu.waiters[:i], p.mu.waiters[i+1:]...)
			return
		}
	}
}

// HighWatermark is the offset below which records are committed.
func (p *Partition) HighWatermark() int64 { return p.hw.Load() }

// LastStableOffset is the offset below which no transaction is open: the
// first offset of the earliest open transaction, capped by the high
// watermark. With one replica a marker is committed as soon as it is
// written, so an ended transaction stops holding the LSO at once; with
// followers the log must keep counting it until the HW passes its marker.
func (p *Partition) LastStableOffset() int64 { return p.lastStable(p.hw.Load()) }

// lastStable is the last stable offset under high watermark hw.
func (p *Partition) lastStable(hw int64) int64 {
	if first := p.log.FirstUnstableOffset(); first >= 0 && first < hw {
		return first
	}
	return hw
}

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 { return p.log.StartOffset() }

// StartVerification records a transactional batch of the producer that
// is about to be verified with its transaction coordinator
// (store/log.Log.StartVerification).
func (p *Partition) StartVerification(producerID int64, epoch int16, seq int32) {
	p.log.StartVerification(producerID, epoch, seq)
}

// LogEndOffset is the next offset to be assigned.
func (p *Partition) LogEndOffset() int64 { return p.log.EndOffset() }

// Close wakes every waiter and refuses further appends. The log itself is
// closed by its owner.
func (p *Partition) Close() {
	p.mu.Lock()
	p.mu.closed = true
	waiters := p.mu.waiters
	p.mu.waiters = nil
	p.mu.Unlock()
	wake(waiters)
}
