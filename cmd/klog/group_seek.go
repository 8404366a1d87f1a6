package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
)

type groupSeekOptions struct {
	group   string
	to      string
	topics  []string
	dryRun  bool
	confirm consent
}

// groupSeekJSON is the JSON output of group seek. Committed tells whether
// the new offsets were committed (false for --dry-run and when not
// confirmed).
type groupSeekJSON struct {
	Version    int         `json:"version"`
	Group      string      `json:"group"`
	DryRun     bool        `json:"dry_run"`
	Committed  bool        `json:"committed"`
	Partitions []seekEntry `json:"partitions"`
}

// seekEntry is one partition of a seek: the committed offset now (null if
// none) and the offset the seek commits (null when it could not be
// computed).
type seekEntry struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   *int64 `json:"current"`
	New       *int64 `json:"new"`
	Error     string `json:"error,omitempty"`
}

func newGroupSeekCmd(g *globals) *cobra.Command {
	var o groupSeekOptions
	cmd := &cobra.Command{
		Use:   "seek GROUP --to start|end|N|-N|+N|@TIME [--topics t1,t2] [--dry-run] [--yes]",
		Short: "Set a group's committed offsets (the group must have no members)",
		Long: `Set a group's committed offsets, per partition, to a position:

  start    the log start offset
  end      the last stable offset (the end a read_committed consumer sees)
  N        offset N, clamped to [start, end]
  -N / +N  N before end / N after start
  @TIME    the first record at or after TIME (RFC3339, YYYY-MM-DD, unix
           milliseconds, or a duration like -1h); end if there is none

The partitions are those the group has committed offsets for, or all
partitions of --topics. A group with members is refused: stop its consumers
first (--dry-run still previews).

The preview (current -> new) is printed first.`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeGroups(g, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.group = args[0]
			return runGroupSeek(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "the position to seek to (required): start|end|N|-N|+N|@TIME")
	f.StringSliceVar(&o.topics, "topics", nil, "seek all partitions of these topics (default: the topics the group committed)")
	f.BoolVar(&o.dryRun, "dry-run", false, "only print the new offsets")
	destructive(cmd, &o.confirm, "commit", "committed")
	return cmd
}

func runGroupSeek(ctx context.Context, g *globals, o groupSeekOptions, out, diag io.Writer) error {
	if o.to == "" {
		return usagef("--to is required: start|end|N|-N|+N|@TIME")
	}
	spec, err := parseOffsetSpec(o.to, time.Now())
	if err != nil {
		return &usageError{err: fmt.Errorf("--to: %w", err)}
	}
	if spec.stop != nil {
		return usagef("--to %q: want one position, not a range", o.to)
	}
	for _, t := range o.topics {
		if strings.TrimSpace(t) == "" {
			return usagef("--topics: empty topic name")
		}
	}
	return withClients(g, func(cl *kgo.Client, adm *kadm.Client) error {
		info, err := groupState(ctx, cl, adm, o.group)
		if err != nil {
			return err
		}
		active := info.Active()
		if active && !o.dryRun {
			return activeError(info)
		}
		entries, err := planSeek(ctx, adm, o, spec.start)
		if err != nil {
			return err
		}
		res := groupSeekJSON{Version: groupJSONVersion, Group: o.group, DryRun: o.dryRun, Partitions: entries}
		preview := out
		if g.format == formatJSON {
			preview = diag // stdout carries the one JSON document
		}
		c := o.confirm
		showPreview := g.format == formatText || (c.asks() && !o.dryRun)
		if showPreview {
			if err := writeSeekTable(preview, entries); err != nil {
				return err
			}
		}
		if o.dryRun {
			if active {
				fmt.Fprintf(diag, "klog: note: %v; stop its consumers before seeking\n", activeError(info))
			}
			return finishSeek(g, out, diag, res)
		}
		if c.refuses() {
			// The JSON document goes out before the refusal.
			if err := finishSeek(g, out, diag, res); err != nil && !errors.Is(err, ErrItemsFailed) {
				return err
			}
		}
		question := fmt.Sprintf("Commit %s for group %q?", plural(countCommittable(entries), "offset"), o.group)
		if err := c.ask(question, "committed", "commit the offsets above, or --dry-run to only preview"); err != nil {
			return err
		}
		// Members may have joined while we computed or asked.
		if info, err = groupState(ctx, cl, adm, o.group); err != nil {
			return err
		}
		if info.Active() {
			return activeError(info)
		}
		if err := commitSeek(ctx, adm, o.group, entries); err != nil {
			return err
		}
		res.Committed = countCommittable(entries) > 0
		return finishSeek(g, out, diag, res)
	})
}

// groupState describes one group for seek: its state and members.
func groupState(ctx context.Context, cl *kgo.Client, adm *kadm.Client, group string) (inspect.GroupInfo, error) {
	infos, err := inspect.DescribeGroups(ctx, cl, adm, []string{group})
	if err != nil {
		return inspect.GroupInfo{}, err
	}
	info := infos[group]
	if info.Err != nil {
		return info, fmt.Errorf("describe group %q: %w", group, info.Err)
	}
	return info, nil
}

// activeError says why a group's offsets cannot be changed now.
func activeError(info inspect.GroupInfo) error {
	return fmt.Errorf("group %q is %s with %s: %w", info.Group, info.State, plural(len(info.Members), "member"), ErrGroupActive)
}

// planSeek computes the new offset of every partition the seek covers.
func planSeek(ctx context.Context, adm *kadm.Client, o groupSeekOptions, to offsetBound) ([]seekEntry, error) {
	committed, err := adm.FetchOffsets(ctx, o.group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return nil, fmt.Errorf("fetch committed offsets of group %q: %w", o.group, err)
	}
	parts := make(kadm.TopicsSet)
	if len(o.topics) > 0 {
		details, err := inspect.LookupTopics(ctx, adm, o.topics)
		if err != nil {
			return nil, err
		}
		for _, t := range o.topics {
			for p := range details[t].Partitions {
				parts.Add(t, p)
			}
		}
	} else {
		committed.Each(func(c kadm.OffsetResponse) {
			if c.Err == nil && c.At >= 0 {
				parts.Add(c.Topic, c.Partition)
			}
		})
		if len(parts) == 0 {
			return nil, fmt.Errorf("group %q: %w; name the topics to seek with --topics", o.group, ErrNoCommittedOffsets)
		}
	}
	var timestamps []int64
	if to.kind == boundTime {
		timestamps = []int64{to.millis}
	}
	lists, err := inspect.ListOffsets(ctx, adm, parts.Topics(), timestamps)
	if err != nil {
		return nil, err
	}
	var entries []seekEntry
	for _, tp := range parts.Sorted() {
		for _, p := range slices.Sorted(slices.Values(tp.Partitions)) {
			e := seekEntry{Topic: tp.Topic, Partition: p}
			if c, ok := committed.Lookup(tp.Topic, p); ok && c.Err == nil && c.At >= 0 {
				at := c.At
				e.Current = &at
			}
			lo, err := lists.Lookup(tp.Topic, p)
			if err != nil {
				e.Error = err.Error()
			} else {
				n := to.resolve(partitionOffsets{start: lo.LogStart, end: lo.LastStableOffset, times: lo.AfterTime})
				e.New = &n
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// commitSeek commits the new offsets as an admin (not a member) and records
// per-partition failures in entries.
func commitSeek(ctx context.Context, adm *kadm.Client, group string, entries []seekEntry) error {
	var offsets kadm.Offsets
	for _, e := range entries {
		if e.Error == "" && e.New != nil {
			offsets.AddOffset(e.Topic, e.Partition, *e.New, -1)
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	resps, err := adm.CommitOffsets(ctx, group, offsets)
	if err != nil {
		return fmt.Errorf("commit offsets for group %q: %w", group, err)
	}
	for i, e := range entries {
		if e.Error != "" || e.New == nil {
			continue
		}
		r, ok := resps.Lookup(e.Topic, e.Partition)
		switch {
		case !ok:
			entries[i].Error = inspect.ErrNoResponse.Error()
		case r.Err != nil:
			entries[i].Error = "commit: " + r.Err.Error()
		}
	}
	return nil
}

// countCommittable counts the entries with a new offset.
func countCommittable(entries []seekEntry) int {
	n := 0
	for _, e := range entries {
		if e.Error == "" && e.New != nil {
			n++
		}
	}
	return n
}

// finishSeek reports per-partition failures on diag, writes the JSON
// document (text was previewed already), and returns ErrItemsFailed if any
// partition failed.
func finishSeek(g *globals, out, diag io.Writer, res groupSeekJSON) error {
	failed := failures{diag: diag}
	for _, e := range res.Partitions {
		failed.add(e.Error, "group %q: %s[%d]", res.Group, e.Topic, e.Partition)
	}
	if g.format == formatJSON {
		if res.Partitions == nil {
			res.Partitions = []seekEntry{}
		}
		if err := writeJSON(out, res); err != nil {
			return err
		}
	}
	if res.Committed {
		fmt.Fprintf(diag, "committed %s for group %q\n", plural(len(res.Partitions)-failed.n, "offset"), res.Group)
	}
	return failed.err("%d of %d partitions failed", failed.n, len(res.Partitions))
}

// writeSeekTable prints the preview: current -> new per partition.
func writeSeekTable(w io.Writer, entries []seekEntry) error {
	t := newTable(w)
	t.row("TOPIC\tPARTITION\tCURRENT\tNEW\n")
	for _, e := range entries {
		t.row("%s\t%d\t%s\t%s", e.Topic, e.Partition, optOffset(e.Current), optOffset(e.New))
		if e.Error != "" {
			t.row("\t%s", e.Error)
		}
		t.row("\n")
	}
	return t.flush()
}
