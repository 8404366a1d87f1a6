package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// resumes measures how long the producer stalls at each fault: the time
// from the fault to the first acknowledgement after it on every
// partition, the last of them (the producer writes every partition in
// turn, so a partition whose leader is gone holds the others back once
// its records fill the buffer). A fault the producer never recovers from
// before it stops is not counted.
type resumes struct {
	partitions int
	mu         sync.Mutex
	faults     []faultResume
}

// faultResume is one fault: when it began and, by partition, the first
// acknowledgement after it (zero: none yet).
type faultResume struct {
	at    time.Time
	first []time.Time
}

// fault notes that a fault begins now.
func (r *resumes) fault() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, faultResume{at: time.Now(), first: make([]time.Time, r.partitions)})
}

// took notes that the last fault took effect only now, as the command
// that makes it returns: acknowledgements before it do not end its stall.
func (r *resumes) took() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults[len(r.faults)-1] = faultResume{at: time.Now(), first: make([]time.Time, r.partitions)}
}

// acked notes an acknowledgement on partition p now: the first after
// each fault that has none on p yet.
func (r *resumes) acked(p int32) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.faults) - 1; i >= 0 && r.faults[i].first[p].IsZero(); i-- {
		r.faults[i].first[p] = now
	}
}

// stalls returns each fault's stall, for those after which every
// partition was acknowledged again.
func (r *resumes) stalls() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, f := range r.faults {
		last := f.at
		for _, t := range f.first {
			if t.IsZero() {
				last = time.Time{}
				break
			}
			last = later(last, t)
		}
		if !last.IsZero() {
			out = append(out, last.Sub(f.at))
		}
	}
	return out
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// summary is the stalls for the CHAOS line: "resumed p50 1.2s max 1.9s
// (10 faults)", "resumed -" without faults.
func (r *resumes) summary() string {
	d := r.stalls()
	r.mu.Lock()
	n := len(r.faults)
	r.mu.Unlock()
	if len(d) == 0 {
		return fmt.Sprintf("resumed - (%d faults)", n)
	}
	p50, top := percentiles(d)
	s := fmt.Sprintf("resumed p50 %.2fs max %.2fs (%d faults", p50.Seconds(), top.Seconds(), n)
	if len(d) < n {
		s += fmt.Sprintf(", %d never", n-len(d))
	}
	return s + ")"
}

// percentiles returns the median and the largest of d.
func percentiles(d []time.Duration) (p50, top time.Duration) {
	d = slices.Clone(d)
	slices.Sort(d)
	n := len(d)
	p50 = d[n/2]
	if n%2 == 0 {
		p50 = (d[n/2-1] + d[n/2]) / 2
	}
	return p50, d[n-1]
}
