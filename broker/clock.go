package broker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/klogdev/klog/store/log"
)

// The node's clock (Config.Clock, package internal/clock) and the passes
// that run on it. Retention, segment.ms, the cleaner's delete horizons,
// producer id expiry, transaction timeouts, group sessions and offset
// expiry are judged at its time; AdvanceClock moves it forward and runs
// those passes at once, for tests and local clusters.

// ClockState is the node's clock: its time and how far it was advanced.
type ClockState struct {
	Now    time.Time
	Offset time.Duration
}

// Clock is the node's clock now.
func (n *Node) Clock() ClockState {
	return ClockState{Now: n.clock.Now(), Offset: n.clock.Offset()}
}

// AdvanceClock moves the node's clock d forward (0 only runs the passes)
// and then runs every pass that time drives and waits until each ran: the
// group coordinator's deadlines (session and rebalance timeouts, offset
// expiry under offsets.retention.minutes), the transaction coordinator's
// (transaction timeouts abort, unused transactional ids expire), segment.ms
// rolls, retention, producer id expiry, the counts of repeated security
// events (security_events.go), and the log cleaner's passes while
// a compacted log qualifies (log.cleaner.enable=false leaves it out). The
// markers of a transaction aborted for its timeout are written after it
// returns, as after any abort. On the active controller's node the
// delegation tokens that lapsed are removed. ctx bounds the waits. A negative d is
// clock.ErrBackwards and runs nothing.
func (n *Node) AdvanceClock(ctx context.Context, d time.Duration) (ClockState, error) {
	offset, err := n.clock.Advance(d)
	if err != nil {
		return n.Clock(), err
	}
	if n.cfg.Clock == nil && d > 0 {
		// The node's own clock keeps its offset across restarts, so that
		// its time never runs back behind records and deadlines judged at
		// the advanced time (a shared Config.Clock is its owner's).
		if err := n.logs.WriteFile(clockOffsetFile, []byte(offset.String()+"\n")); err != nil {
			return n.Clock(), fmt.Errorf("keep the clock's offset: %w", err)
		}
	}
	n.groups.Tick(ctx)
	n.txns.Tick(ctx)
	now := n.clock.Now()
	n.logs.Maintain(now)
	n.logs.ApplyRetention(now)
	n.logs.ExpireProducers(now)
	n.sweepDelegationTokens(ctx)
	n.flushSecurityEvents()
	if s := n.settings().Cleaner; s.Enable {
		for ctx.Err() == nil && n.ctx.Err() == nil && n.cleanDirtiest(s.DedupeBufferBytes) {
		}
	}
	if err := ctx.Err(); err != nil {
		return n.Clock(), err
	}
	if n.ctx.Err() != nil {
		return n.Clock(), log.ErrClosed
	}
	return n.Clock(), nil
}

// clockOffsetFile, at the top of the data directory, holds how far the
// node's own clock was advanced, as a Go duration.
const clockOffsetFile = "klog-clock-offset"

// loadClockOffset advances the node's new clock by the offset kept in
// clockOffsetFile, if there is one.
func (n *Node) loadClockOffset() error {
	b, err := n.logs.ReadFile(clockOffsetFile, 64)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the clock's offset: %w", err)
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("read the clock's offset in %s: %w", clockOffsetFile, err)
	}
	if _, err := n.clock.Advance(d); err != nil {
		return fmt.Errorf("read the clock's offset in %s: %w", clockOffsetFile, err)
	}
	if d > 0 {
		n.logger.Info("clock advanced as it was before the restart", "offset", d)
	}
	return nil
}
