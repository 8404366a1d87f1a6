package main

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// txnProducersJSON is the JSON output of txn producers.
type txnProducersJSON struct {
	Version    int                          `json:"version"`
	Partitions []inspect.PartitionProducers `json:"partitions"`
}

func newTxnProducersCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "producers TOPIC[/PARTITION]...",
		Short: "Show the producers writing to partitions: ids, epochs, sequences, open transactions",
		Long: `Show the active producers of partitions as their leaders report them:
producer id and epoch, last sequence number, timestamp of the last write,
coordinator epoch, and the first offset of the producer's open transaction
("-" when none is open).

Name partitions as TOPIC/PARTITION; a bare TOPIC means all its partitions.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTxnProducers(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// parseTopicPartitions parses TOPIC or TOPIC/P arguments; a bare topic is
// returned with no partitions (all of them).
func parseTopicPartitions(args []string) (kadm.TopicsSet, error) {
	set := make(kadm.TopicsSet)
	var bare []string
	for _, a := range args {
		topic, p, hasP := strings.Cut(a, "/")
		if topic == "" {
			return nil, usagef("%q: want TOPIC or TOPIC/PARTITION", a)
		}
		if !hasP {
			bare = append(bare, topic)
			continue
		}
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return nil, usagef("%q: partition must be a non-negative number", a)
		}
		set.Add(topic, int32(n))
	}
	for _, t := range bare {
		set[t] = make(map[int32]struct{}) // all partitions, whatever else was named
	}
	return set, nil
}

func runTxnProducers(ctx context.Context, g *globals, args []string, out, diag io.Writer) error {
	set, err := parseTopicPartitions(args)
	if err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		parts, err := inspect.DescribeProducers(ctx, adm, set)
		if err != nil {
			return err
		}
		failed := partitionFailures(diag, parts)
		if parts == nil {
			parts = []inspect.PartitionProducers{}
		}
		err = writeOutput(g, out, txnProducersJSON{Version: txnJSONVersion, Partitions: parts}, func(t *table) {
			t.row("TOPIC\tPARTITION\tPRODUCER-ID\tEPOCH\tLAST-SEQUENCE\tLAST-TIMESTAMP\tCOORDINATOR-EPOCH\tTXN-START-OFFSET\n")
			for _, p := range parts {
				for _, d := range p.Producers {
					t.row("%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\n", p.Topic, p.Partition, d.ProducerID, d.ProducerEpoch,
						d.LastSequence, millisString(d.LastTimestamp), d.CoordinatorEpoch, offsetOrDash(d.CurrentTxnStartOffset))
				}
			}
		})
		if err != nil {
			return err
		}
		return failed.err("%d of %d partitions failed", failed.n, len(parts))
	})
}

// partitionFailures reports on diag each partition whose producers could
// not be described.
func partitionFailures(diag io.Writer, parts []inspect.PartitionProducers) *failures {
	failed := &failures{diag: diag}
	for _, p := range parts {
		failed.add(p.Error, "%s/%d", p.Topic, p.Partition)
	}
	return failed
}
