package nodeapi

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Paths of the clock endpoints.
const (
	// PathClock is GET: the node's clock (Clock).
	PathClock = "/v1/clock"
	// PathClockAdvance is POST /v1/clock/advance?by=DURATION (Go
	// duration syntax: 90s, 2h, 1h30m): move the node's clock forward
	// and run at once what time drives on the node (retention,
	// segment.ms, the cleaner, transaction and session timeouts, offset
	// expiry). It answers the clock after (Clock) once those passes ran;
	// 400 for a missing, malformed or negative duration, 503 while the
	// node stops. For tests and local clusters: advance every node of a
	// cluster alike.
	PathClockAdvance = "/v1/clock/advance"
)

// Clock is a node's clock: the wall clock plus what it was advanced by.
type Clock struct {
	NodeID int32     `json:"node_id"`
	Now    time.Time `json:"now"`
	// OffsetMs is how far ahead of the wall clock it is, in all.
	OffsetMs int64 `json:"offset_ms"`
}

// Offset is OffsetMs as a duration.
func (c Clock) Offset() time.Duration { return time.Duration(c.OffsetMs) * time.Millisecond }

// Clock is GET /v1/clock.
func (c *Client) Clock(ctx context.Context) (Clock, error) {
	var out Clock
	return out, c.call(ctx, http.MethodGet, PathClock, nil, &out)
}

// AdvanceClock is POST /v1/clock/advance?by=d.
func (c *Client) AdvanceClock(ctx context.Context, d time.Duration) (Clock, error) {
	var out Clock
	return out, c.call(ctx, http.MethodPost, PathClockAdvance, url.Values{"by": {d.String()}}, &out)
}
