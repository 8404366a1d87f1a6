// Package tui is klog tui: a terminal UI that shows a Kafka-compatible
// cluster live — its brokers and partition health, topics and their
// partitions' offsets, consumer groups and their lag, transactions, and on
// klog the log cleaner.
//
// The root model (app.go) owns the window size, quitting, help, the error
// bar, the refresh timer and which screen is shown; each screen (one file
// each) owns its data and tables. All reading goes through a Source
// (source.go), called from tea.Cmds only, so Update and View never block;
// KafkaSource reads over the Kafka protocol through package inspect and a
// klog node's admin API through package nodeapi. Refreshing is live by
// default: the next poll is armed when the last one answered, so two never
// overlap; p pauses it.
//
// It must never import broker/ or store/: it sees a cluster only as a
// client does.
package tui

import (
	"context"
	"errors"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Options configure Run.
type Options struct {
	// Refresh is the live refresh interval (default 2 s).
	Refresh time.Duration
	// FetchTimeout bounds one fetch of a screen's data (default 30 s).
	FetchTimeout time.Duration
	// Readonly forbids every action that changes the cluster.
	Readonly bool
	// Brokers is shown in the header.
	Brokers string
	// HangingAfter is how long an open transaction goes unwritten before
	// the hanging screen counts it (default 15 min, the broker default of
	// transaction.max.timeout.ms, as klog txn hanging).
	HangingAfter time.Duration
	// Screen is the screen shown first (default cluster).
	Screen string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// DefaultHangingAfter is Options.HangingAfter's default.
const DefaultHangingAfter = 15 * time.Minute

// DefaultRefresh is the refresh interval of klog tui.
const DefaultRefresh = 2 * time.Second

func (o Options) withDefaults() Options {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HangingAfter <= 0 {
		o.HangingAfter = DefaultHangingAfter
	}
	return o
}

// Screens are the names of the screens, as the command line takes them.
func Screens() []string {
	m := newModel(nil, Options{})
	return m.commands()[:len(m.screens)]
}

// Run runs the TUI on in and out until the user quits or ctx ends.
func Run(ctx context.Context, src Source, opts Options, in io.Reader, out io.Writer) error {
	m := newModel(src, opts)
	fetchTimeout := m.opts.FetchTimeout
	m.fetchContext = func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, fetchTimeout)
	}
	// The size holds only when out is not a terminal (a pipe, a test);
	// a terminal tells its own.
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithWindowSize(120, 40))
	if _, err := p.Run(); err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return err
	}
	return nil
}
