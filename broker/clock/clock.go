// Package clock is the clock a klog node judges its schedules by: the
// wall clock plus an offset that tests and local clusters advance, so that
// retention, compaction's delete horizon, transaction and session timeouts
// and offset expiry come due without waiting for them.
//
// Only the time a feature's rules are judged at reads it (a record's age,
// a session's deadline). Network deadlines, request timeouts, Raft and
// follower lag stay on real time: advancing the clock must not break
// connections or shrink ISRs.
package clock

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrBackwards: Advance was given a negative duration; the clock only
// moves forward.
var ErrBackwards = errors.New("the clock only moves forward")

// Clock is the wall clock plus an offset that only grows. The zero value
// and a nil *Clock are the wall clock. It is safe for concurrent use; Now
// costs one atomic load over time.Now.
type Clock struct {
	offset atomic.Int64 // nanoseconds added to time.Now
}

// New returns a clock at real time.
func New() *Clock { return &Clock{} }

// Now is the wall clock plus the offset. It keeps time.Now's monotonic
// reading, so durations between two readings are real durations plus
// what was advanced between them.
func (c *Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// Offset is how far the clock has been advanced in all.
func (c *Clock) Offset() time.Duration {
	if c == nil {
		return 0
	}
	return time.Duration(c.offset.Load())
}

// Advance moves the clock d forward and returns the new offset; a
// negative d is ErrBackwards, and a total past a few hundred years is
// refused.
func (c *Clock) Advance(d time.Duration) (time.Duration, error) {
	if d < 0 {
		return c.Offset(), fmt.Errorf("advance by %v: %w", d, ErrBackwards)
	}
	for {
		old := c.offset.Load()
		if int64(d) > maxOffset-old {
			return time.Duration(old), fmt.Errorf("advance by %v: the clock would be more than %v ahead", d, time.Duration(maxOffset))
		}
		if c.offset.CompareAndSwap(old, old+int64(d)) {
			return time.Duration(old + int64(d)), nil
		}
	}
}

// maxOffset bounds the offset well inside time.Duration (about 292
// years), so that deadlines computed from Now do not overflow.
const maxOffset = int64(100 * 365 * 24 * time.Hour)
