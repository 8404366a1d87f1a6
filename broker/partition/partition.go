// Package partition is one replica of a topic partition: it wraps the
// partition's log (store/log) with the offsets Kafka clients see — log start
// offset, high watermark (HW), last stable offset (LSO) and log end offset
// (LEO) — the leader epoch, and the "new data" signal that long-polling
// fetches wait on.
//
// One writer appends under a mutex; readers never take it. With a single
// replica the in-sync replica set is this node alone, so the high watermark
// follows the log end offset on every append. Replication will move the HW
// by the followers' fetch positions instead; the read bounds below already
// distinguish HW (consumers) from LEO (followers).
package partition

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/klogdev/klog/store/log"
)

// ErrNotLeader is returned when this replica is not the partition's leader.
var ErrNotLeader = errors.New("partition: not the leader")

// ErrFencedLeaderEpoch is returned when a request carries an older leader
// epoch than this replica's.
var ErrFencedLeaderEpoch = errors.New("partition: fenced leader epoch")

// ErrUnknownLeaderEpoch is returned when a request carries a newer leader
// epoch than this replica knows.
var ErrUnknownLeaderEpoch = errors.New("partition: unknown leader epoch")

// ErrClosed is returned after the partition was closed (its topic deleted).
var ErrClosed = errors.New("partition: closed")

// Options configures a partition.
type Options struct {
	Logger *slog.Logger
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
	topic   string
	index   int32
	topicID [16]byte
	log     *log.Log
	logger  *slog.Logger

	leader      atomic.Bool
	leaderEpoch atomic.Int32
	hw          atomic.Int64

	mu struct {
		sync.Mutex // held while appending
		closed     bool
		waiters    []chan<- struct{}
	}
}

// New wraps an open log.
func New(topic string, index int32, topicID [16]byte, l *log.Log, opts Options) *Partition {
	p := &Partition{topic: topic, index: index, topicID: topicID, log: l, logger: opts.Logger}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.hw.Store(l.EndOffset())
	return p
}

// Topic is the partition's topic name.
func (p *Partition) Topic() string { return p.topic }

// Index is the partition number.
func (p *Partition) Index() int32 { return p.index }

// TopicID is the id of the topic this replica belongs to.
func (p *Partition) TopicID() [16]byte { return p.topicID }

// Log is the underlying log, for inspection.
func (p *Partition) Log() *log.Log { return p.log }

// SetLeader records whether this replica leads and at which epoch.
func (p *Partition) SetLeader(leader bool, epoch int32) {
	p.leader.Store(leader)
	p.leaderEpoch.Store(epoch)
}

// IsLeader reports whether this replica leads the partition.
func (p *Partition) IsLeader() bool { return p.leader.Load() }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch.Load() }

// SetConfig applies changed topic configs to the log.
func (p *Partition) SetConfig(cfg log.Config) { p.log.SetConfig(cfg) }

// CheckEpoch validates a client's view of the leader epoch; -1 skips the
// check, as Kafka does.
func (p *Partition) CheckEpoch(epoch int32) error {
	if epoch < 0 {
		return nil
	}
	cur := p.leaderEpoch.Load()
	switch {
	case epoch < cur:
		return ErrFencedLeaderEpoch
	case epoch > cur:
		return ErrUnknownLeaderEpoch
	}
	return nil
}

// Append validates and appends batches as leader, advances the high
// watermark and wakes waiting fetches.
func (p *Partition) Append(batches []byte) (log.AppendResult, error) {
	if !p.leader.Load() {
		return log.AppendResult{}, ErrNotLeader
	}
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return log.AppendResult{}, ErrClosed
	}
	res, err := p.log.Append(batches, p.leaderEpoch.Load())
	if err != nil {
		p.mu.Unlock()
		return res, err
	}
	// A single in-sync replica: HW is the log end offset.
	p.hw.Store(p.log.EndOffset())
	waiters := p.mu.waiters
	p.mu.waiters = nil
	p.mu.Unlock()
	wake(waiters)
	return res, nil
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
func (p *Partition) LastStableOffset() int64 {
	hw := p.hw.Load()
	if first := p.log.FirstUnstableOffset(); first >= 0 && first < hw {
		return first
	}
	return hw
}

// AppendMarker writes a transaction marker (commit or abort) for a
// producer as leader, then advances the high watermark and wakes fetches:
// read_committed readers may now see past the transaction.
func (p *Partition) AppendMarker(m log.Marker) (int64, error) {
	if !p.leader.Load() {
		return 0, ErrNotLeader
	}
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return 0, ErrClosed
	}
	offset, err := p.log.AppendMarker(m, p.leaderEpoch.Load())
	if err != nil {
		p.mu.Unlock()
		return 0, err
	}
	p.hw.Store(p.log.EndOffset())
	waiters := p.mu.waiters
	p.mu.waiters = nil
	p.mu.Unlock()
	wake(waiters)
	return offset, nil
}

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 { return p.log.StartOffset() }

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
