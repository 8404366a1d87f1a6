package loadgen

import (
	"math/bits"
	"time"
)

// histogram counts durations in buckets of about 1% width, in fixed
// memory whatever the number of samples: each power of two of
// nanoseconds is split into subBuckets linear buckets.
type histogram struct {
	counts [64 * subBuckets]uint64
	n      uint64
	max    time.Duration
}

const subBits = 7
const subBuckets = 1 << subBits

func bucketOf(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < subBuckets {
		return int(v)
	}
	exp := bits.Len64(v) - subBits // >= 1
	return exp*subBuckets + int(v>>uint(exp-1)) - subBuckets
}

// upper is the largest duration bucket b holds.
func upper(b int) time.Duration {
	if b < subBuckets {
		return time.Duration(b)
	}
	exp := b / subBuckets
	sub := uint64(b%subBuckets + subBuckets)
	return time.Duration((sub+1)<<uint(exp-1) - 1)
}

func (h *histogram) add(d time.Duration) {
	h.counts[bucketOf(d)]++
	h.n++
	h.max = max(h.max, d)
}

// quantile is the upper bound of the bucket holding the q-quantile, at
// most the largest sample; 0 without samples.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	if rank >= h.n {
		rank = h.n - 1
	}
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen > rank {
			return min(upper(b), h.max)
		}
	}
	return h.max
}

func (h *histogram) percentiles() *Percentiles {
	if h.n == 0 {
		return nil
	}
	return &Percentiles{P50: h.quantile(0.50), P99: h.quantile(0.99), P999: h.quantile(0.999), Max: h.max}
}
