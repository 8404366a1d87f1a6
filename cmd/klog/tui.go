package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/tui"
)

// tuiAdminTimeout bounds each call of the TUI to a node's admin API.
const tuiAdminTimeout = 10 * time.Second

func newTUICmd(g *globals) *cobra.Command {
	var opts tui.Options
	cmd := &cobra.Command{
		Use:   "tui [--readonly] [--refresh DURATION] [SCREEN]",
		Short: "Show the cluster live in a terminal UI",
		Long: `Show the cluster live in a terminal UI: brokers and partition health,
topics and their partitions' offsets, consumer groups and their lag,
transactions, and on klog the log cleaner's state (read from the nodes'
admin API, see --admin).

Screens: ` + strings.Join(tui.Screens(), ", ") + ` (SCREEN is the first shown).
Keys: ":" switches screen (tab completes), "/" filters, "enter" and "esc"
drill in and back, "j"/"k" "g"/"G" move, left/right scroll a table
wider than the window, "i" shows the internal topics' rows (hidden at
first), "p" pauses the live refresh, "?" shows every key, "q" quits.

The cluster screen asks every node directly and lists each one known, up
or down since when; counts from metadata no longer current (the metadata
quorum lost) are marked stale, and so is a screen whose refresh failed.

--readonly forbids every action that would change the cluster.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if !slices.Contains(tui.Screens(), args[0]) {
					return usagef("no screen %q; screens: %s", args[0], strings.Join(tui.Screens(), ", "))
				}
				opts.Screen = args[0]
			}
			if opts.Refresh <= 0 {
				return usagef("--refresh %v: want a positive duration", opts.Refresh)
			}
			return runTUI(cmd.Context(), g, opts, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&opts.Readonly, "readonly", false, "change nothing in the cluster")
	cmd.Flags().DurationVar(&opts.Refresh, "refresh", tui.DefaultRefresh, "live refresh interval")
	cmd.Flags().DurationVar(&opts.HangingAfter, "hanging-after", tui.DefaultHangingAfter, "the hanging screen counts an open transaction unwritten this long (as klog txn hanging --max-age)")
	return cmd
}

func runTUI(ctx context.Context, g *globals, opts tui.Options, in io.Reader, out io.Writer) error {
	cl, err := g.newClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	admins, noAdmin := g.adminNodes(ctx, tuiAdminTimeout)
	opts.Brokers = g.brokers
	src := tui.NewKafkaSource(cl, g.newClient, admins, noAdmin)
	defer src.Close()
	if err := tui.Run(ctx, src, opts, in, out); err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}
