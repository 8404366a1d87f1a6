package share

import (
	"fmt"
	"time"
)

// State is an in-flight record's state, with Kafka's ids (RecordState).
type State int8

// The states of an in-flight record.
const (
	Available    State = 0
	Acquired     State = 1
	Acknowledged State = 2
	Archived     State = 4
)

var stateNames = map[State]string{Available: "Available", Acquired: "Acquired", Acknowledged: "Acknowledged", Archived: "Archived"}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// AckType is an acknowledgement's type, as ShareFetch and
// ShareAcknowledge carry it (Kafka's AcknowledgeType).
type AckType int8

// The acknowledgement types. Renew (KIP-1222, ShareFetch and
// ShareAcknowledge v2) keeps a record acquired with a fresh lock.
const (
	AckGap     AckType = 0
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4
)

// Config is what bounds a share-partition: group.share.record.lock.duration.ms,
// group.share.delivery.count.limit and group.share.partition.max.record.locks.
type Config struct {
	LockDuration   time.Duration
	DeliveryLimit  int
	MaxRecordLocks int
}

// Batch is one record batch read from the log, as Acquire needs it: its
// offsets, and whether it is a control batch (transaction markers are
// never handed out: they are archived as they are met).
type Batch struct {
	First, Last int64
	Control     bool
}

// AcquiredRange is a run of offsets acquired together with one delivery count,
// a ShareFetch response's AcquiredRecords entry.
type AcquiredRange struct {
	First, Last int64
	Deliveries  int16
}

// AckBatch is one acknowledgement batch: the offsets first..last and
// either one type for all of them or one per offset.
type AckBatch struct {
	First, Last int64
	Types       []AckType
}

// typeAt is the acknowledgement type of offset off of b.
func (b AckBatch) typeAt(off int64) AckType {
	if len(b.Types) == 1 {
		return b.Types[0]
	}
	return b.Types[off-b.First]
}

// AcquireMode is ShareFetch's ShareAcquireMode (KIP-1206, v2).
type AcquireMode int8

// The acquire modes: BatchOptimized acquires whole batches and may pass
// MaxRecords to finish one; RecordLimit acquires at most MaxRecords.
const (
	BatchOptimized AcquireMode = 0
	RecordLimit    AcquireMode = 1
)

// record is the state of one in-flight offset.
type record struct {
	state      State
	deliveries int16
	member     string    // the member holding it while Acquired
	deadline   time.Time // while Acquired: when its lock lapses
}

// Partition is one group's share-partition state. It is not safe for
// concurrent use; see the package doc.
type Partition struct {
	cfg     Config
	start   int64
	records []record // records[i] is the state of offset start+i
}

// NewPartition starts a share-partition whose first record to deliver is
// start.
func NewPartition(cfg Config, start int64) *Partition {
	if cfg.MaxRecordLocks <= 0 {
		cfg.MaxRecordLocks = 2000
	}
	if cfg.DeliveryLimit <= 0 {
		cfg.DeliveryLimit = 5
	}
	return &Partition{cfg: cfg, start: start}
}

// Start is the share-partition start offset: every record before it was
// acknowledged or archived.
func (p *Partition) Start() int64 { return p.start }

// End is the offset after the last record ever acquired.
func (p *Partition) End() int64 { return p.start + int64(len(p.records)) }

// StateOf reports the state and delivery count of off, for tests and
// describing; ok is false outside [Start, End).
func (p *Partition) StateOf(off int64) (s State, deliveries int16, member string, ok bool) {
	if off < p.start || off >= p.End() {
		return 0, 0, "", false
	}
	r := p.records[off-p.start]
	return r.state, r.deliveries, r.member, true
}

// InFlight counts the records in the window by state.
func (p *Partition) InFlight() map[State]int {
	out := make(map[State]int)
	for _, r := range p.records {
		out[r.state]++
	}
	return out
}

// NextFetchOffset is where the next acquisition starts: the first
// Available record, or End.
func (p *Partition) NextFetchOffset() int64 {
	for i, r := range p.records {
		if r.state == Available {
			return p.start + int64(i)
		}
	}
	return p.End()
}

// CanAcquire reports whether Acquire could hand out anything from the log
// up to bound: a record Available again, or room in the window and records
// past End below bound.
func (p *Partition) CanAcquire(bound int64) bool {
	if p.NextFetchOffset() < p.End() {
		return true
	}
	return len(p.records) < p.cfg.MaxRecordLocks && p.End() < bound
}

// NextDeadline is the earliest lock deadline of an Acquired record.
func (p *Partition) NextDeadline() (time.Time, bool) {
	var next time.Time
	for _, r := range p.records {
		if r.state == Acquired && (next.IsZero() || r.deadline.Before(next)) {
			next = r.deadline
		}
	}
	return next, !next.IsZero()
}

// Expire gives back every record whose lock lapsed by now; it reports
// whether any did.
func (p *Partition) Expire(now time.Time) bool {
	changed := false
	for i := range p.records {
		r := &p.records[i]
		if r.state == Acquired && !now.Before(r.deadline) {
			p.release(r)
			changed = true
		}
	}
	if changed {
		p.advanceStart()
	}
	return changed
}

// ReleaseMember gives back every record member holds, as its leaving or
// its session's close does; it reports whether any was held.
func (p *Partition) ReleaseMember(member string) bool {
	changed := false
	for i := range p.records {
		r := &p.records[i]
		if r.state == Acquired && r.member == member {
			p.release(r)
			changed = true
		}
	}
	if changed {
		p.advanceStart()
	}
	return changed
}

// release makes an Acquired record Available again, or Archived once it
// was delivered as many times as the limit allows.
func (p *Partition) release(r *record) {
	r.member, r.deadline = "", time.Time{}
	if int(r.deliveries) >= p.cfg.DeliveryLimit {
		r.state = Archived
		return
	}
	r.state = Available
}

// AdvanceLogStart drops what the log no longer holds: records below
// logStart are archived and the start moves there.
func (p *Partition) AdvanceLogStart(logStart int64) {
	if logStart <= p.start {
		return
	}
	if logStart >= p.End() {
		p.start, p.records = logStart, p.records[:0]
		return
	}
	p.trim(int(logStart - p.start))
}

// trim drops the first n records and moves the start past them, copying
// the rest down once the dropped part is most of the array, so a window
// that slides for ever does not hold on to an ever larger one.
func (p *Partition) trim(n int) {
	p.start += int64(n)
	p.records = p.records[n:]
	if cap(p.records) > 2*p.cfg.MaxRecordLocks && len(p.records) < cap(p.records)/4 {
		p.records = append([]record(nil), p.records...)
	}
}

// advanceStart moves the start past the Acknowledged and Archived
// records at the front of the window.
func (p *Partition) advanceStart() {
	n := 0
	for n < len(p.records) && (p.records[n].state == Acknowledged || p.records[n].state == Archived) {
		n++
	}
	if n > 0 {
		p.trim(n)
	}
}
