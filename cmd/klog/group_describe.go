package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
)

// groupDescribeJSON is the JSON output of group describe.
type groupDescribeJSON struct {
	Version int                        `json:"version"`
	Groups  []inspect.GroupDescription `json:"groups"`
}

func newGroupDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Describe groups: members, assignments, committed offsets and lag",
		Long: `Describe groups: state, assignor, members with their assigned partitions,
and per partition the committed offset, log start, high watermark (HW), last
stable offset (LSO) and lag.

Lag is what a read_committed consumer has left to read between its
committed offset and the LSO, counted in records: transaction markers and
aborted records are not counted (beyond 10,000 offsets, lag is the offset
distance). A partition without a committed offset shows "-" and its lag
from the log start.

When a partition's leader cannot be reached (a node is down), its offsets
and lag show "?", each distinct reason is given once on stderr, and klog
exits 3 after printing what it could read (with --format json the offsets
are -1, lag null, and the partition's "errors" says why, keyed by field).`,
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: completeGroups(g, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGroupDescribe(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runGroupDescribe(ctx context.Context, g *globals, names []string, out, diag io.Writer) error {
	return withClients(g, func(cl *kgo.Client, adm *kadm.Client) error {
		infos, err := inspect.DescribeGroups(ctx, cl, adm, names)
		if err != nil {
			return err
		}
		descs := make([]inspect.GroupDescription, 0, len(names))
		failed := failures{diag: diag}
		var unknown unknowns
		for _, n := range names {
			d := inspect.GroupOffsets(ctx, adm, g.newClient, infos[n])
			failed.add(d.Error, "group %q", n)
			for _, p := range d.Partitions {
				if !unknown.add(cellsError(p.Errors), "group %q %s/%d", n, p.Topic, p.Partition) {
					failed.add(p.Error, "group %q: %s/%d", n, p.Topic, p.Partition)
				}
			}
			descs = append(descs, d)
		}
		unknown.report(diag)
		doc := groupDescribeJSON{Version: groupJSONVersion, Groups: descs}
		if err := writeOutput(g, out, doc, func(t *table) { writeGroupDescribeText(t, descs) }); err != nil {
			return err
		}
		if err := failed.err("%s failed", plural(failed.n, "item")); err != nil {
			return err
		}
		return unknown.err()
	})
}

// writeGroupDescribeText prints one section per group, and one each for
// its members and its partitions.
func writeGroupDescribeText(t *table, descs []inspect.GroupDescription) {
	for _, d := range descs {
		if d.Error != "" && len(d.Partitions) == 0 {
			continue
		}
		t.section()
		t.row("GROUP\t%s\n", d.Group)
		t.row("TYPE\t%s\n", d.Type)
		t.row("STATE\t%s\n", orDash(d.State))
		t.row("PROTOCOL-TYPE\t%s\n", orDash(d.ProtocolType))
		t.row("PROTOCOL\t%s\n", orDash(d.Protocol))
		t.row("COORDINATOR\t%d\n", d.Coordinator)
		t.row("MEMBERS\t%d\n", len(d.Members))
		totalLag := fmt.Sprint(d.TotalLag)
		for _, p := range d.Partitions {
			totalLag = cell(totalLag, p.Errors["lag"])
		}
		t.row("TOTAL-LAG\t%s\n", totalLag)
		if len(d.Members) > 0 {
			t.section()
			t.row("MEMBER-ID\tINSTANCE-ID\tCLIENT-ID\tHOST\tASSIGNED\n")
			for _, m := range d.Members {
				inst := "-"
				if m.InstanceID != nil {
					inst = *m.InstanceID
				}
				t.row("%s\t%s\t%s\t%s\t%s\n", m.MemberID, inst, orDash(m.ClientID), orDash(m.Host), partitionsString(m.Assigned))
			}
		}
		if len(d.Partitions) > 0 {
			t.section()
			t.row("TOPIC\tPARTITION\tCOMMITTED\tLOG-START\tHW\tLSO\tLAG\tMEMBER-ID\n")
			for _, p := range d.Partitions {
				e := p.Errors
				t.row("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s", p.Topic, p.Partition, cell(optOffset(p.Committed), e["committed"]),
					cell(offsetOrDash(p.LogStartOffset), e["log_start_offset"]), cell(offsetOrDash(p.HighWatermark), e["high_watermark"]),
					cell(offsetOrDash(p.LastStableOffset), e["last_stable_offset"]), cell(optOffset(p.Lag), e["lag"]), orDash(p.MemberID))
				if p.Error != "" && len(e) == 0 {
					t.row("\t%s", p.Error)
				}
				t.row("\n")
			}
		}
	}
}
