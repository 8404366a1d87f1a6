package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/nodeapi"
)

// eventsWait is how long one poll of --follow waits on a node for its
// next events; eventsRetry how long it waits before asking a node that
// failed again.
const (
	eventsWait  = 25 * time.Second
	eventsRetry = time.Second
)

func newEventsCmd(g *globals) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "events [--follow]",
		Short: "Show the nodes' recent events: ISR changes, leader changes, rolls, cleanings, rebalances, denials, failed logins",
		Long: `Print the recent events of every node, merged by time, one line each:
ISR shrinks and expansions (told by the partition's leader), leader changes
(told by each replica: the role it took), segment rolls, cleaning passes,
consumer group rebalances (told by the group's coordinator), requests
the authorizer denied (who, from where, the API, the resource and the rule
that decided) and failed logins (the user claimed, from where, the
mechanism and why). Repeats of a denial or failed login are counted, one
line every ten seconds (repeats=N: N more like it); a flood of distinct
ones is cut to about one a second (suppressed=N on the next). Each node
keeps its last 1024 events; a gap is reported on stderr.

With --follow klog keeps printing events as they happen, until
interrupted. --format json prints one JSON object per line.

` + adminHelp + `
Kafka has no such request; this works against klog only.`,
		Example: `  klog events
  klog events --follow
  klog events --follow --format json | jq 'select(.kind == "isr_shrink")'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEvents(cmd.Context(), g, follow, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they happen, until interrupted")
	return cmd
}

// nodeCursor is where klog events is in one node's events.
type nodeCursor struct {
	c    *nodeapi.Client
	run  string
	seq  uint64
	node int32 // -1 until the node answered
}

// poll asks the node for its events after the cursor, waiting up to wait,
// and moves the cursor past them; gaps and restarts go to diag.
func (nc *nodeCursor) poll(ctx context.Context, wait time.Duration, diag io.Writer) ([]nodeapi.Event, error) {
	var out []nodeapi.Event
	for {
		page, err := nc.c.Events(ctx, nodeapi.EventsQuery{Since: nc.seq, Run: nc.run, Wait: wait})
		if err != nil {
			return out, err
		}
		nc.node = page.NodeID
		if page.Reset && nc.run != "" {
			fmt.Fprintf(diag, "klog: node %d (%s) restarted: its events start again\n", page.NodeID, nc.c.Addr())
		}
		if page.Missed > 0 {
			fmt.Fprintf(diag, "klog: node %d (%s) dropped %d events before these\n", page.NodeID, nc.c.Addr(), page.Missed)
		}
		nc.run = page.Run
		if len(page.Events) > 0 {
			nc.seq = page.Events[len(page.Events)-1].Seq
		} else if page.Reset {
			nc.seq = 0
		}
		out = append(out, page.Events...)
		if !page.More {
			return out, nil
		}
		wait = 0
	}
}

func runEvents(ctx context.Context, g *globals, follow bool, out, diag io.Writer) error {
	nodes, err := g.adminNodes(ctx, eventsWait+10*time.Second)
	if err != nil {
		return err
	}
	cursors := make([]*nodeCursor, len(nodes))
	for i, c := range nodes {
		cursors[i] = &nodeCursor{c: c, node: -1}
	}
	// What the nodes hold now, merged by time.
	failed := failures{diag: diag}
	var evs []nodeapi.Event
	for _, nc := range cursors {
		got, err := nc.poll(ctx, 0, diag)
		if err != nil {
			if !follow {
				failed.add(err.Error(), "events of %s", nc.c.Addr())
				continue
			}
			fmt.Fprintf(diag, "klog: %v\n", err)
		}
		evs = append(evs, got...)
	}
	nodeapi.SortEvents(evs)
	if err := writeEvents(g, out, evs); err != nil {
		return err
	}
	if !follow {
		return failed.err("events of %d of %d nodes", failed.n, len(nodes))
	}
	return followEvents(ctx, g, cursors, out, diag)
}

// followEvents long-polls every node, one goroutine each, and prints each
// batch as it comes, until ctx ends (an interrupt: a clean exit). A node
// that fails is asked again after eventsRetry: it may be restarting.
func followEvents(ctx context.Context, g *globals, cursors []*nodeCursor, out, diag io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type batch struct {
		evs []nodeapi.Event
		err error
	}
	batches := make(chan batch)
	done := make(chan struct{})
	for _, nc := range cursors {
		go func() {
			defer func() { done <- struct{}{} }()
			for ctx.Err() == nil {
				evs, err := nc.poll(ctx, eventsWait, diag)
				if ctx.Err() != nil {
					return
				}
				select {
				case batches <- batch{evs, err}:
				case <-ctx.Done():
					return
				}
				if err != nil {
					select {
					case <-time.After(eventsRetry):
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}
	var werr error
	for running := len(cursors); running > 0; {
		select {
		case b := <-batches:
			if b.err != nil {
				fmt.Fprintf(diag, "klog: %v\n", b.err)
			}
			nodeapi.SortEvents(b.evs)
			if err := writeEvents(g, out, b.evs); err != nil && werr == nil {
				werr = err
				cancel()
			}
		case <-done:
			running--
		}
	}
	return werr
}

// writeEvents prints events one a line: text, or JSON with --format json.
func writeEvents(g *globals, out io.Writer, evs []nodeapi.Event) error {
	var b strings.Builder
	for _, e := range evs {
		if g.format == formatJSON {
			line, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("write JSON: %w", err)
			}
			b.Write(line)
			b.WriteByte('\n')
			continue
		}
		b.WriteString(eventLine(e))
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// eventLine renders an event as one line of text: time, node, kind, what
// it is about, and its details as key=value, in key order.
func eventLine(e nodeapi.Event) string {
	return fmt.Sprintf("%s  node %d  %-13s  %s  %s", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.NodeID, e.Kind, e.Subject(), e.DetailText())
}
