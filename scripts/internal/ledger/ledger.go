// Package ledger is the checker of klog's fault tests: it records which
// numbered records a producer had acknowledged, and at which offsets, then
// compares them with what a consumer read back, partition by partition.
//
// A record is identified by its partition and its sequence number there,
// which the producer writes into it and sends in increasing order. The
// report counts acknowledged records missing from the log (lost), records
// read more than once (duplicated), records read after a higher sequence
// of their partition (reordered), and acknowledged records found at
// another offset than the one acknowledged (moved). A record that was sent
// but never acknowledged may or may not be in the log: both are allowed.
package ledger

import (
	"fmt"
	"sort"
	"sync"
)

// Ledger collects acknowledgements; it is safe for concurrent use.
type Ledger struct {
	mu    sync.Mutex
	acked map[int32]map[int64]int64 // partition -> sequence -> offset
	n     int
}

// New returns an empty ledger.
func New() *Ledger { return &Ledger{acked: make(map[int32]map[int64]int64)} }

// Ack records that the record with sequence seq of partition was
// acknowledged at offset.
func (l *Ledger) Ack(partition int32, seq, offset int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.acked[partition]
	if m == nil {
		m = make(map[int64]int64)
		l.acked[partition] = m
	}
	if _, ok := m[seq]; !ok {
		l.n++
	}
	m[seq] = offset
}

// Acked is the number of distinct records acknowledged so far.
func (l *Ledger) Acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// AckedIn is the number of distinct records of partition acknowledged so
// far.
func (l *Ledger) AckedIn(partition int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked[partition])
}

// Read is one record read back: its partition, sequence and offset.
type Read struct {
	Partition int32
	Seq       int64
	Offset    int64
}

// Report is the outcome of a check.
type Report struct {
	Acked, Read                        int
	Lost, Duplicated, Reordered, Moved int
	// Examples holds the first few problems found, for the message.
	Examples []string
}

// OK reports whether nothing acknowledged was lost, duplicated, reordered
// or moved.
func (r Report) OK() bool { return r.Lost+r.Duplicated+r.Reordered+r.Moved == 0 }

// String is the report's one-line summary.
func (r Report) String() string {
	s := fmt.Sprintf("acked: %d, lost: %d, duplicated: %d, reordered: %d", r.Acked, r.Lost, r.Duplicated, r.Reordered)
	if r.Moved > 0 {
		s += fmt.Sprintf(", moved: %d", r.Moved)
	}
	return s
}

const maxExamples = 5

// Check compares the acknowledgements with reads, the records read back in
// offset order per partition (partitions may interleave).
func (l *Ledger) Check(reads []Read) Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := Report{Acked: l.n, Read: len(reads)}
	example := func(format string, args ...any) {
		if len(r.Examples) < maxExamples {
			r.Examples = append(r.Examples, fmt.Sprintf(format, args...))
		}
	}
	seen := make(map[int32]map[int64]int64) // partition -> sequence -> first offset read
	highest := make(map[int32]int64)
	for _, rd := range reads {
		m := seen[rd.Partition]
		if m == nil {
			m = make(map[int64]int64)
			seen[rd.Partition] = m
			highest[rd.Partition] = -1
		}
		if first, ok := m[rd.Seq]; ok {
			r.Duplicated++
			example("partition %d sequence %d read at offsets %d and %d", rd.Partition, rd.Seq, first, rd.Offset)
			continue
		}
		m[rd.Seq] = rd.Offset
		if rd.Seq < highest[rd.Partition] {
			r.Reordered++
			example("partition %d sequence %d read at offset %d after sequence %d", rd.Partition, rd.Seq, rd.Offset, highest[rd.Partition])
		} else {
			highest[rd.Partition] = rd.Seq
		}
	}
	parts := make([]int32, 0, len(l.acked))
	for p := range l.acked {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		seqs := make([]int64, 0, len(l.acked[p]))
		for s := range l.acked[p] {
			seqs = append(seqs, s)
		}
		sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
		for _, s := range seqs {
			want := l.acked[p][s]
			got, ok := seen[p][s]
			switch {
			case !ok:
				r.Lost++
				example("partition %d sequence %d acknowledged at offset %d, not read back", p, s, want)
			case got != want:
				r.Moved++
				example("partition %d sequence %d acknowledged at offset %d, read at %d", p, s, want, got)
			}
		}
	}
	return r
}
