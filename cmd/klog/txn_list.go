package main

import (
	"context"
	"errors"
	"fmt"
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
	canon := make([]string, 0, len(states))
	for _, s := range states {
		c, ok := canonicalTxnState(strings.TrimSpace(s))
		if !ok {
			return usagef("--state %q: want one of %s", s, strings.Join(txnStates, ", "))
		}
		canon = append(canon, c)
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		ids, listErr := inspect.ListTransactionIDs(ctx, adm, canon...)
		if ids == nil {
			return listErr
		}
		failed := 0
		if listErr != nil {
			failed++
			fmt.Fprintf(diag, "klog: list transactions: %v\n", listErr)
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
			if tx.Error != "" {
				failed++
				fmt.Fprintf(diag, "klog: transactional id %q: %s\n", tx.TransactionalID, tx.Error)
			}
			txns = append(txns, tx)
		}
		if err := writeTxns(g, out, txns, false); err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("%d transactions could not be listed or described: %w", failed, ErrItemsFailed)
		}
		return nil
	})
}
