package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

type txnAbortOptions struct {
	topic       string
	partition   int32
	startOffset int64
	confirm     consent
}

// txnAbortJSON is the JSON output of txn abort. Aborted tells whether the
// abort marker was written.
type txnAbortJSON struct {
	Version          int    `json:"version"`
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	StartOffset      int64  `json:"start_offset"`
	ProducerID       int64  `json:"producer_id"`
	ProducerEpoch    int16  `json:"producer_epoch"`
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
	Aborted          bool   `json:"aborted"`
}

func newTxnAbortCmd(g *globals) *cobra.Command {
	o := txnAbortOptions{partition: -1, startOffset: -1}
	cmd := &cobra.Command{
		Use:   "abort --topic TOPIC --partition P --start-offset N [--yes]",
		Short: "Abort a hanging transaction by writing an abort marker to its partition",
		Long: `Abort the open transaction that starts at --start-offset in one partition
(find it with "klog txn hanging" or "klog txn producers"). klog looks up the
producer id, epoch and coordinator epoch of that transaction and writes an
abort marker for it to the partition (WriteTxnMarkers), which closes the
transaction and releases the partition's last stable offset.

This bypasses the transaction coordinator: use it only for transactions no
coordinator will finish.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTxnAbort(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.topic, "topic", "", "the topic of the transaction (required)")
	f.Int32Var(&o.partition, "partition", -1, "the partition of the transaction (required)")
	f.Int64Var(&o.startOffset, "start-offset", -1, "the first offset of the transaction in the partition (required)")
	destructive(cmd, &o.confirm, "abort", "aborted")
	return cmd
}

func runTxnAbort(ctx context.Context, g *globals, o txnAbortOptions, out, diag io.Writer) error {
	switch {
	case o.topic == "":
		return usagef("--topic is required")
	case o.partition < 0:
		return usagef("--partition is required and must not be negative")
	case o.startOffset < 0:
		return usagef("--start-offset is required and must not be negative")
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		found, err := inspect.OpenTransaction(ctx, adm, o.topic, o.partition, o.startOffset)
		if errors.Is(err, inspect.ErrNoOpenTransaction) {
			return fmt.Errorf("%w (see klog txn producers %s/%d)", err, o.topic, o.partition)
		}
		if err != nil {
			return err
		}
		res := txnAbortJSON{
			Version:          txnJSONVersion,
			Topic:            o.topic,
			Partition:        o.partition,
			StartOffset:      o.startOffset,
			ProducerID:       found.ProducerID,
			ProducerEpoch:    found.ProducerEpoch,
			CoordinatorEpoch: found.CoordinatorEpoch,
		}
		what := fmt.Sprintf("the transaction of producer %d (epoch %d, coordinator epoch %d) on %s/%d starting at offset %d",
			res.ProducerID, res.ProducerEpoch, res.CoordinatorEpoch, o.topic, o.partition, o.startOffset)
		if err := o.confirm.ask("Abort "+what+"?", "aborted", "abort "+what); err != nil {
			return err
		}
		if err := inspect.AbortTransaction(ctx, adm, o.topic, o.partition, found); err != nil {
			return err
		}
		res.Aborted = true
		if g.format == formatJSON {
			return writeJSON(out, res)
		}
		fmt.Fprintf(out, "aborted %s\n", what)
		return nil
	})
}
