package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// ---- topic list ----

// topicListJSON is the JSON output of topic list.
type topicListJSON struct {
	Version int                    `json:"version"`
	Topics  []inspect.TopicListing `json:"topics"`
}

func newTopicListCmd(g *globals) *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List topics",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTopicList(cmd.Context(), g, internal, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVarP(&internal, "internal", "i", false, "include internal topics")
	return cmd
}

func runTopicList(ctx context.Context, g *globals, internal bool, out io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		items, err := inspect.ListTopics(ctx, adm, internal)
		if err != nil {
			return err
		}
		return writeOutput(g, out, topicListJSON{Version: topicJSONVersion, Topics: items}, func(t *table) {
			t.row("NAME\tPARTITIONS\tREPLICAS\n")
			for _, it := range items {
				t.row("%s\t%d\t%d\n", it.Name, it.Partitions, it.ReplicationFactor)
			}
		})
	})
}

// ---- topic describe ----

// topicDescribeJSON is the JSON output of topic describe.
type topicDescribeJSON struct {
	Version int                        `json:"version"`
	Topics  []inspect.TopicDescription `json:"topics"`
}

func newTopicDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME...",
		Short: "Describe topics: partitions, leaders, replicas, ISR, offsets, configs",
		Long: `Describe topics: partitions, leaders, replicas, ISR, offsets, configs.

When a partition's leader cannot be reached (a node is down), its offsets
show "?", each distinct reason is given once on stderr, and klog exits 3
after printing what it could read (with --format json the offset is -1 and
the partition's "errors" says why, keyed by field).`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicDescribe(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runTopicDescribe(ctx context.Context, g *globals, names []string, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		descs, err := inspect.DescribeTopics(ctx, adm, names)
		if err != nil {
			return err
		}
		failed := failures{diag: diag}
		var unknown unknowns
		for _, d := range descs {
			failed.add(d.Error, "topic %q", d.Name)
			for _, p := range d.Partitions {
				unknown.add(cellsError(p.Errors), "%s/%d", d.Name, p.Partition)
			}
		}
		unknown.report(diag)
		doc := topicDescribeJSON{Version: topicJSONVersion, Topics: descs}
		if err := writeOutput(g, out, doc, func(t *table) { writeTopicDescribeText(t, descs) }); err != nil {
			return err
		}
		if err := failed.err("%d of %d topics failed", failed.n, len(descs)); err != nil {
			return err
		}
		return unknown.err()
	})
}

// writeTopicDescribeText prints one section per topic, one for its
// configs and one for its partitions.
func writeTopicDescribeText(t *table, descs []inspect.TopicDescription) {
	for _, d := range descs {
		if d.Error != "" && len(d.Partitions) == 0 {
			continue
		}
		t.section()
		t.row("NAME\t%s\n", d.Name)
		if d.ID != "" {
			t.row("ID\t%s\n", d.ID)
		}
		t.row("INTERNAL\t%t\n", d.Internal)
		t.row("PARTITIONS\t%d\n", len(d.Partitions))
		t.row("REPLICATION-FACTOR\t%d\n", d.ReplicationFactor)
		if len(d.Configs) > 0 {
			t.section()
			t.row("CONFIG\tVALUE\tSOURCE\n")
			for _, c := range d.Configs {
				v := "<null>"
				switch {
				case c.Sensitive:
					v = "<sensitive>"
				case c.Value != nil:
					v = *c.Value
				}
				t.row("%s\t%s\t%s\n", c.Key, v, c.Source)
			}
		}
		t.section()
		t.row("PARTITION\tLEADER\tEPOCH\tREPLICAS\tISR\tLOG-START\tHIGH-WATERMARK\n")
		for _, p := range d.Partitions {
			t.row("%d\t%d\t%d\t%s\t%s\t%s\t%s", p.Partition, p.Leader, p.LeaderEpoch,
				int32List(p.Replicas), int32List(p.ISR),
				cell(fmt.Sprint(p.LogStartOffset), p.Errors["log_start_offset"]),
				cell(fmt.Sprint(p.HighWatermark), p.Errors["high_watermark"]))
			if p.Error != "" {
				t.row("\t%s", p.Error)
			}
			t.row("\n")
		}
	}
}
