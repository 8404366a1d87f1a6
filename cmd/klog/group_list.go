package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
)

// groupListJSON is the JSON output of group list.
type groupListJSON struct {
	Version int                    `json:"version"`
	Groups  []inspect.GroupListing `json:"groups"`
}

func newGroupListCmd(g *globals) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:     "list [--state STATE]...",
		Aliases: []string{"ls"},
		Short:   "List consumer groups with their state, assignor, members and coordinator",
		Long: `List the groups of the cluster, classic and consumer protocol alike.

--state keeps only groups in the given states (repeatable or comma-separated,
any case): Empty, Stable, PreparingRebalance, CompletingRebalance, Assigning,
Reconciling, NotReady, Dead.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGroupList(cmd.Context(), g, states, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only groups in this state (repeatable)")
	return cmd
}

func runGroupList(ctx context.Context, g *globals, states []string, out, diag io.Writer) error {
	canon, err := canonicalStates(groupStates, states)
	if err != nil {
		return err
	}
	return withClients(g, func(cl *kgo.Client, adm *kadm.Client) error {
		items, listErr := inspect.ListGroups(ctx, cl, adm, canon...)
		if items == nil {
			return listErr
		}
		failed := failures{diag: diag}
		if listErr != nil {
			// Some brokers did not answer: list what the others know.
			failed.add(listErr.Error(), "list groups")
		}
		for _, it := range items {
			failed.add(it.Error, "group %q", it.Group)
		}
		err := writeOutput(g, out, groupListJSON{Version: groupJSONVersion, Groups: items}, func(t *table) {
			t.row("GROUP\tTYPE\tSTATE\tPROTOCOL-TYPE\tPROTOCOL\tMEMBERS\tCOORDINATOR\n")
			for _, it := range items {
				t.row("%s\t%s\t%s\t%s\t%s\t%d\t%d\n", it.Group, it.Type, orDash(it.State),
					orDash(it.ProtocolType), orDash(it.Protocol), it.Members, it.Coordinator)
			}
		})
		if err != nil {
			return err
		}
		return failed.err("%s could not be listed or described", plural(failed.n, "group"))
	})
}
