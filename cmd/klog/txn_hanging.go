package main

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// defaultHangingMaxAge is the broker default of transaction.max.timeout.ms:
// no transaction may legitimately stay open longer.
const defaultHangingMaxAge = 15 * time.Minute

// txnHangingJSON is the JSON output of txn hanging.
type txnHangingJSON struct {
	Version  int                          `json:"version"`
	MaxAgeMs int64                        `json:"max_age_ms"`
	Hanging  []inspect.HangingTransaction `json:"hanging"`
}

func newTxnHangingCmd(g *globals) *cobra.Command {
	var topics []string
	maxAge := defaultHangingMaxAge
	cmd := &cobra.Command{
		Use:   "hanging [--topic TOPIC]... [--max-age DURATION]",
		Short: "Find transactions left open on partitions that no coordinator will finish",
		Long: `Find hanging transactions: a producer whose open transaction on a partition
was last written more than --max-age ago (default 15m, the broker default of
transaction.max.timeout.ms), and whose coordinator is not running a matching
transaction (the producer id is unknown to every coordinator, or its
transactional id is not Ongoing/PrepareCommit/PrepareAbort on that partition).

A hanging transaction holds back the last stable offset of its partition, so
read_committed consumers stop there. Abort one with
  klog txn abort --topic T --partition P --start-offset N

--topic limits the search (repeatable); by default every partition of every
topic, internal ones included, is examined.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTxnHanging(cmd.Context(), g, topics, maxAge, time.Now(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringSliceVar(&topics, "topic", nil, "only partitions of this topic (repeatable)")
	cmd.Flags().DurationVar(&maxAge, "max-age", maxAge, "a transaction last written longer ago than this is a candidate")
	return cmd
}

func runTxnHanging(ctx context.Context, g *globals, topics []string, maxAge time.Duration, now time.Time, out, diag io.Writer) error {
	if maxAge < 0 {
		return usagef("--max-age %v: must not be negative", maxAge)
	}
	for _, t := range topics {
		if strings.TrimSpace(t) == "" {
			return usagef("--topic: empty topic name")
		}
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		h, err := inspect.HangingTransactions(ctx, adm, topics, maxAge, now)
		failed := partitionFailures(diag, h.Partitions)
		if err != nil {
			return err
		}
		doc := txnHangingJSON{Version: txnJSONVersion, MaxAgeMs: maxAge.Milliseconds(), Hanging: h.Transactions}
		err = writeOutput(g, out, doc, func(t *table) {
			t.row("TOPIC\tPARTITION\tPRODUCER-ID\tEPOCH\tCOORDINATOR-EPOCH\tSTART-OFFSET\tLAST-TIMESTAMP\tTRANSACTIONAL-ID\tCOORDINATOR-STATE\n")
			for _, h := range h.Transactions {
				id := "-"
				if h.TransactionalID != nil {
					id = *h.TransactionalID
				}
				t.row("%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", h.Topic, h.Partition, h.ProducerID, h.ProducerEpoch,
					h.CoordinatorEpoch, h.StartOffset, millisString(h.LastTimestamp), id, orDash(h.CoordinatorState))
			}
		})
		if err != nil {
			return err
		}
		return failed.err("%d of %d partitions could not be examined", failed.n, len(h.Partitions))
	})
}
