package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/nodeapi"
)

// compactTimeout bounds a compaction asked of one node.
const compactTimeout = 10 * time.Minute

// topicCompactJSON is the JSON output of topic compact: each node's answer.
type topicCompactJSON struct {
	Version int                  `json:"version"`
	Topic   string               `json:"topic"`
	DryRun  bool                 `json:"dry_run"`
	Nodes   []nodeapi.Compaction `json:"nodes"`
}

func newTopicCompactCmd(g *globals) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "compact TOPIC[/PARTITION] [--dry-run]",
		Short: "Clean a compacted topic now, or show what cleaning would remove",
		Long: `Run the log cleaner over a compacted topic now, on every replica, whatever
its dirty ratio (min.cleanable.dirty.ratio): each key keeps its latest
record, tombstones past delete.retention.ms and aborted transactions' records
go. What cleaning may not touch still holds: the active segment, records
above the last stable offset, and those younger than min.compaction.lag.ms;
the output shows where each replica had to stop (HELD FROM).

With --dry-run nothing is written: the output lists, per replica, the keys
that would lose records (the most first) and the tombstones that cleaning
keeps, with when they may go.

` + adminHelp + `
Kafka has no such request; this works against klog only.`,
		Example: `  klog topic compact orders
  klog topic compact orders/0 --dry-run
  klog topic compact orders --admin 127.0.0.1:9644,127.0.0.1:9645,127.0.0.1:9646`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicCompact(cmd.Context(), g, args[0], dryRun, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only show what cleaning would remove")
	return cmd
}

func runTopicCompact(ctx context.Context, g *globals, arg string, dryRun bool, out io.Writer) error {
	set, err := parseTopicPartitions([]string{arg})
	if err != nil {
		return err
	}
	var topic string
	partition := int32(-1)
	for t, ps := range set {
		topic = t
		for p := range ps {
			partition = p
		}
	}
	nodes, err := g.adminNodes(ctx, compactTimeout)
	if err != nil {
		return err
	}
	doc := topicCompactJSON{Version: 1, Topic: topic, DryRun: dryRun, Nodes: []nodeapi.Compaction{}}
	for _, c := range nodes {
		res, err := c.Compact(ctx, topic, partition, dryRun)
		if err != nil {
			return err
		}
		doc.Nodes = append(doc.Nodes, res)
	}
	return writeOutput(g, out, doc, func(t *table) { compactTable(t, doc) })
}

func compactTable(t *table, doc topicCompactJSON) {
	removed := "REMOVED"
	if doc.DryRun {
		removed = "WOULD REMOVE"
	}
	t.row("NODE\tPARTITION\t%s\tBYTES\tTOMBSTONES\tMARKERS\tSEGMENTS\tCLEAN TO\tHELD FROM\tDIRTY RATIO\n", removed)
	for _, n := range doc.Nodes {
		for _, p := range n.Partitions {
			t.row("%d\t%d\t%d\t%d\t%d\t%d\t%d -> %d\t%d\t%d\t%.2f\n", n.NodeID, p.Partition, p.RecordsRemoved, p.BytesRemoved,
				p.TombstonesRemoved, p.MarkersRemoved, p.SegmentsBefore, p.SegmentsAfter, p.EndOffset, p.FirstUncleanableOffset, p.Cleaner.DirtyRatio)
		}
	}
	if !doc.DryRun {
		return
	}
	now := time.Now()
	for _, n := range doc.Nodes {
		for _, p := range n.Partitions {
			if p.Plan == nil {
				continue
			}
			t.section()
			more := ""
			if p.Plan.KeysAffected > len(p.Plan.Keys) {
				more = fmt.Sprintf(", the %d losing the most shown", len(p.Plan.Keys))
			}
			t.row("node %d, %s/%d: %s would lose records%s; %s of aborted transactions, %d without key\n",
				n.NodeID, doc.Topic, p.Partition, plural(p.Plan.KeysAffected, "key"), more, plural(p.Plan.AbortedRecords, "record"), p.Plan.KeylessRecords)
			if len(p.Plan.Keys) > 0 {
				t.row("KEY\tRECORDS\n")
				for _, k := range p.Plan.Keys {
					t.row("%s\t%d\n", keyCell(k.Bytes), k.Records)
				}
			}
			t.section()
			t.row("node %d, %s/%d: %s pending\n", n.NodeID, doc.Topic, p.Partition, plural(p.Plan.TombstonesPending, "tombstone"))
			if len(p.Plan.Tombstones) > 0 {
				t.row("KEY\tOFFSET\tEXPIRES\tIN\n")
				for _, ts := range p.Plan.Tombstones {
					t.row("%s\t%d\t%s\t%s\n", keyCell(ts.Bytes), ts.Offset, ts.Expires.UTC().Format(time.RFC3339), max(ts.Expires.Sub(now), 0).Round(time.Second))
				}
			}
		}
	}
}

// keyCell renders a key in a table: base64 ones marked so.
func keyCell(b nodeapi.Bytes) string {
	if b.KeyEncoding != "" {
		return b.KeyEncoding + ":" + b.Key
	}
	return b.Key
}
