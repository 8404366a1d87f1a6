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
comma-separated, any case): ` + strings.Join(txnStates, ", ") + `.`,
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
		failed := failures{diag: diag}
		if listErr != nil {
			failed.add(listErr.Error(), "list transactions")
		}
		described, err := inspect.DescribeTransactions(ctx, adm, ids)
		if err != nil {
			return err
		}
		txns := []inspect.Transaction{}
		for _, tx := range described {
			if errors.Is(tx.Err, kerr.TransactionalIDNotFound) {
				continue // gone since the listing
			}
			failed.add(tx.Error, "transactional id %q", tx.TransactionalID)
			txns = append(txns, tx)
		}
		if err := writeTxns(g, out, txns, false); err != nil {
			return err
		}
		return failed.err("%d transactions could not be listed or described", failed.n)
	})
}
