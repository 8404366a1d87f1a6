package wire

import (
	"context"
	"time"
)

// muteFor mutes the connection for d from now (Reply.Throttle): its next
// request is not read until then. A later mute that ends sooner does not
// shorten an earlier one.
func (c *serverConn) muteFor(d time.Duration) {
	if d <= 0 {
		return
	}
	if until := time.Now().Add(d); until.After(c.mutedUntil) {
		c.mutedUntil = until
	}
}

// waitMuted waits until the connection's mute ends, or the Server
// drains; false when ctx ended first.
func (c *serverConn) waitMuted(ctx context.Context) bool {
	d := time.Until(c.mutedUntil)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.s.drained:
	case <-ctx.Done():
		return false
	}
	return true
}
