package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

func newTxnDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe TRANSACTIONAL-ID...",
		Short: "Describe transactions: state, producer, timeout, start time and partitions",
		Long: `Describe transactional ids: state, producer id and epoch, transaction
timeout, when the open transaction started and the partitions it spans. An id
the cluster does not know is reported on stderr and makes the exit status 1.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTxnDescribe(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runTxnDescribe(ctx context.Context, g *globals, ids []string, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		txns, err := inspect.DescribeTransactions(ctx, adm, ids)
		if err != nil {
			return err
		}
		failed := failures{diag: diag}
		for _, tx := range txns {
			failed.add(tx.Error, "transactional id %q", tx.TransactionalID)
		}
		if err := writeTxns(g, out, txns, nil, true); err != nil {
			return err
		}
		return failed.err("%d of %d transactional ids failed", failed.n, len(ids))
	})
}
