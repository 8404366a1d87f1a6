package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/nodeapi"
)

// clockTimeout bounds a clock call to one node, an advance's passes
// included.
const clockTimeout = 2 * time.Minute

// clockJSON is the JSON output of clock show and clock advance: each
// node's clock (after the advance).
type clockJSON struct {
	Version int             `json:"version"`
	Nodes   []nodeapi.Clock `json:"nodes"`
}

func newClockCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "clock",
		Short: "Show or advance the nodes' clock (for tests and local clusters)",
		Long: `A klog node judges what happens on a schedule by its clock: retention.ms,
segment.ms, delete.retention.ms of tombstones, transaction.timeout.ms,
session.timeout.ms of group members, offsets.retention.minutes. The clock
is the wall clock plus an offset that only grows; klog clock advance adds
to it, so that a test or a local cluster sees at once what would happen in
two hours. Network timeouts, replication and the metadata quorum keep real
time.

This is for tests and local clusters (klog up): advancing a node's clock
applies retention, cleans tombstones and expires sessions, transactions
and offsets as if that time had passed. A node started again starts at
real time. Kafka has no such request; this works against klog only.

` + adminHelp,
	}
	cmd.AddCommand(newClockShowCmd(g), newClockAdvanceCmd(g))
	return cmd
}

func newClockShowCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Show each node's clock and how far it was advanced",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClock(cmd.Context(), g, func(ctx context.Context, c *nodeapi.Client) (nodeapi.Clock, error) {
				return c.Clock(ctx)
			}, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func newClockAdvanceCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "advance DURATION",
		Short: "Move every node's clock forward and run what comes due",
		Long: `Move every node's clock DURATION forward (90s, 30m, 2h, 1h30m) and run at
once what time drives on each: group session and rebalance timeouts,
offset expiry, transaction timeouts (the transactions abort), segment.ms
rolls, retention, and the log cleaner (tombstones past delete.retention.ms
go). It returns once each node ran them; the markers of aborted
transactions follow within moments. Every node of a cluster is advanced
alike, since the nodes must agree on the time.

For tests and local clusters only: what retention deletes is gone.`,
		Example: `  klog clock advance 2h
  klog clock advance 90s --format json
  klog clock advance 25h --admin 127.0.0.1:9644,127.0.0.1:9645,127.0.0.1:9646`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := time.ParseDuration(args[0])
			if err != nil || d < 0 {
				return usagef("duration %q: want a positive duration such as 90s, 30m or 2h", args[0])
			}
			return runClock(cmd.Context(), g, func(ctx context.Context, c *nodeapi.Client) (nodeapi.Clock, error) {
				return c.AdvanceClock(ctx, d)
			}, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runClock calls each node and prints their clocks, with a note on diag
// when they were not advanced alike.
func runClock(ctx context.Context, g *globals, call func(context.Context, *nodeapi.Client) (nodeapi.Clock, error), out, diag io.Writer) error {
	nodes, err := g.adminNodes(ctx, clockTimeout)
	if err != nil {
		return err
	}
	doc := clockJSON{Version: 1, Nodes: []nodeapi.Clock{}}
	for _, c := range nodes {
		st, err := call(ctx, c)
		if err != nil && len(doc.Nodes) > 0 {
			var done []int32
			for _, n := range doc.Nodes {
				done = append(done, n.NodeID)
			}
			return fmt.Errorf("%w (nodes %v answered before)", err, done)
		}
		if err != nil {
			return err
		}
		doc.Nodes = append(doc.Nodes, st)
	}
	for i := 1; i < len(doc.Nodes); i++ {
		if doc.Nodes[i].OffsetMs != doc.Nodes[0].OffsetMs {
			fmt.Fprintln(diag, "klog: the nodes' clocks were not advanced alike (a node started again starts at real time); advance the ones behind with --admin")
			break
		}
	}
	return writeOutput(g, out, doc, func(t *table) {
		t.row("NODE\tNOW\tADVANCED BY\n")
		for _, n := range doc.Nodes {
			t.row("%d\t%s\t%s\n", n.NodeID, n.Now.UTC().Format(time.RFC3339), n.Offset())
		}
	})
}
