package main

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/inspect"
)

func newTxnListCmd(g *globals) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:     "list [--state STATE]...",
		Aliases: []string{"ls"},
		Short:   "List transactional ids with their producer, state, timeout and partitions",
		Long: `List the transactional ids the cluster's coordinators know, each with its
producer id and epoch, state, transaction timeout and the partitions of its
open transaction.

--state keeps only transactions in the given states (repeatable or
comma-separated, any case): ` + strings.Join(txnStates, ", ") + `.

When a coordinator cannot be reached (a node is down), the ids it knows are
missing and an id it cannot describe shows "?"; each distinct reason is
given once on stderr, and klog exits 3 after printing what it could read.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTxnList(cmd.Context(), g, states, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only transactions in this state (repeatable)")
	return cmd
}

func runTxnList(ctx context.Context, g *globals, states []string, out, diag io.Writer) error {
	canon, err := canonicalStates(txnStates, states)
	if err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		ids, listErr := inspect.ListTransactionIDs(ctx, adm, canon...)
		if ids == nil {
			return listErr
		}
		// The ids of a coordinator that did not answer are missing: a
		// partial answer, not a failed one.
		var unknown unknowns
		addShardErrors(&unknown, listErr, "the transactions of")
		missing := unknown.lines()
		described, err := inspect.DescribeTransactions(ctx, adm, ids)
		if err != nil {
			return err
		}
		txns := []inspect.Transaction{}
		for _, tx := range described {
			if errors.Is(tx.Err, kerr.TransactionalIDNotFound) {
				continue // gone since the listing
			}
			unknown.add(tx.Error, "transactional id %q", tx.TransactionalID)
			txns = append(txns, tx)
		}
		unknown.report(diag)
		if err := writeTxns(g, out, txns, missing, false); err != nil {
			return err
		}
		return unknown.err()
	})
}
