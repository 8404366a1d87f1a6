package share

import "time"

// Acquire hands member records from batches, the batches the log holds
// from NextFetchOffset on, in order: Available records in the window
// again, then new ones past End, each with a lock until now plus the lock
// duration and one more delivery. It stops after maxRecords records (at
// the end of a batch with BatchOptimized, exactly with RecordLimit; 0 or
// less is no limit) and never lets the window pass the record lock limit.
// Offsets past End that no batch holds (compacted away) and control
// batches are archived, not handed out. It returns the acquired runs.
func (p *Partition) Acquire(member string, now time.Time, batches []Batch, maxRecords int, mode AcquireMode) []AcquiredRange {
	a := acquisition{p: p, member: member, deadline: now.Add(p.cfg.LockDuration), max: maxRecords}
	for _, b := range batches {
		if b.Last < p.start {
			continue
		}
		if mode == BatchOptimized && a.full() {
			break
		}
		if !a.batch(b, mode) {
			break
		}
	}
	p.advanceStart()
	return a.out
}

// acquisition is one Acquire's progress.
type acquisition struct {
	p        *Partition
	member   string
	deadline time.Time
	max      int
	count    int
	out      []AcquiredRange
}

func (a *acquisition) full() bool { return a.max > 0 && a.count >= a.max }

// batch acquires what it may of b; false when the window or the record
// limit stops the acquisition.
func (a *acquisition) batch(b Batch, mode AcquireMode) bool {
	p := a.p
	for off := max(b.First, p.start); off <= b.Last; off++ {
		if mode == RecordLimit && a.full() {
			return false
		}
		for off > p.End() { // a gap before the batch: nothing to deliver
			if !a.grow(Archived) {
				return false
			}
		}
		if off == p.End() {
			st := Available
			if b.Control {
				st = Archived
			}
			if !a.grow(st) {
				return false
			}
		}
		if r := &p.records[off-p.start]; r.state == Available {
			a.take(off, r)
		}
	}
	return true
}

// grow adds offset End to the window in state st; false when the window
// is at the record lock limit.
func (a *acquisition) grow(st State) bool {
	p := a.p
	if len(p.records) >= p.cfg.MaxRecordLocks {
		return false
	}
	p.records = append(p.records, record{state: st})
	return true
}

// take acquires the Available record r at off.
func (a *acquisition) take(off int64, r *record) {
	r.state, r.member, r.deadline = Acquired, a.member, a.deadline
	r.deliveries++
	a.count++
	if n := len(a.out); n > 0 && a.out[n-1].Last == off-1 && a.out[n-1].Deliveries == r.deliveries {
		a.out[n-1].Last = off
		return
	}
	a.out = append(a.out, AcquiredRange{First: off, Last: off, Deliveries: r.deliveries})
}
