package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// resumes measures how long the producer stalls at each fault: on each
// partition, the gap in its acknowledgements that the first one after the
// fault ends (from the last one before, or from the fault's start if that
// was later), and the longest of them over the partitions (the producer
// writes every partition in turn, so a partition whose leader is gone
// holds the others back once its records fill the buffer). A fault whose
// command returns only once it has taken effect (took) counts the first
// acknowledgement after that. A fault the producer never recovers from
// on every partition before it stops is not counted.
type resumes struct {
	partitions int
	mu         sync.Mutex
	faults     []faultResume
	last       []time.Time // by partition, the last acknowledgement
}

// faultResume is one fault: when it began and, by partition, the first
// acknowledgement after it (zero: none yet) and the gap that ended.
type faultResume struct {
	at    time.Time
	first []time.Time
	gap   []time.Duration
}

// fault notes that a fault begins now.
func (r *resumes) fault() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, faultResume{at: time.Now(), first: make([]time.Time, r.partitions), gap: make([]time.Duration, r.partitions)})
}

// took notes that the last fault has taken effect now, as the command
// that makes it returns: acknowledgements before it do not end its stall.
func (r *resumes) took() {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &r.faults[len(r.faults)-1]
	clear(f.first)
	clear(f.gap)
}

// acked notes an acknowledgement on partition p now: the first after
// each fault that has none on p yet.
func (r *resumes) acked(p int32) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = make([]time.Time, r.partitions)
	}
	for i := len(r.faults) - 1; i >= 0 && r.faults[i].first[p].IsZero(); i-- {
		f := &r.faults[i]
		f.first[p], f.gap[p] = now, now.Sub(later(r.last[p], f.at))
	}
	r.last[p] = now
}

// stalls returns each fault's stall, for those after which every
// partition was acknowledged again.
func (r *resumes) stalls() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, f := range r.faults {
		if !slices.ContainsFunc(f.first, time.Time.IsZero) {
			out = append(out, slices.Max(f.gap))
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
