package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

type topicTrimOptions struct {
	before  string
	dryRun  bool
	confirm consent
}

// topicTrimJSON is the JSON output of topic trim. Trimmed tells whether
// DeleteRecords was sent (false for --dry-run and when not confirmed).
type topicTrimJSON struct {
	Version    int            `json:"version"`
	DryRun     bool           `json:"dry_run"`
	Trimmed    bool           `json:"trimmed"`
	Partitions []inspect.Trim `json:"partitions"`
}

func newTopicTrimCmd(g *globals) *cobra.Command {
	var o topicTrimOptions
	cmd := &cobra.Command{
		Use:   "trim TOPIC[/PARTITION]... --before OFFSET|@TIME [--dry-run] [--yes]",
		Short: "Delete the records before an offset or a time (DeleteRecords)",
		Long: `Delete the records of partitions before a position, raising their log start
offset (Kafka's DeleteRecords, as kafka-delete-records does):

  N        offset N (above the high watermark the broker refuses it,
           OFFSET_OUT_OF_RANGE)
  end      the high watermark: every record
  -N / +N  all but the last N / the first N records
  @TIME    the records before TIME (RFC3339, YYYY-MM-DD, unix milliseconds,
           or a duration like -1h): the log starts at the first record at or
           after TIME, or at the end if there is none

A bare TOPIC means all its partitions. The answer comes once every replica
has deleted them, and shows each partition's log start before and after
(the low watermark). A topic with cleanup.policy=compact only is refused
(POLICY_VIOLATION), as are internal topics.

--dry-run prints the plan (log start -> new start) and trims nothing; so
does a trim that is not confirmed. Asking, klog shows the plan with the
question on stderr. Once trimmed, stdout shows each partition's log start
before and after.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicTrim(cmd.Context(), g, args, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	destructive(cmd, &o.confirm, "trim", "trimmed")
	f := cmd.Flags()
	f.StringVar(&o.before, "before", "", "delete the records before this position (required): N|end|-N|+N|@TIME")
	f.BoolVar(&o.dryRun, "dry-run", false, "only print what would be deleted")
	return cmd
}

func runTopicTrim(ctx context.Context, g *globals, args []string, o topicTrimOptions, out, diag io.Writer) error {
	if o.before == "" {
		return usagef("--before is required: N|end|-N|+N|@TIME")
	}
	before, err := parseBound(o.before, time.Now())
	if err != nil {
		return &usageError{err: fmt.Errorf("--before: %w", err)}
	}
	if before.kind == boundStart {
		return usagef("--before %q: the records before the log start are gone already", o.before)
	}
	set, err := parseTopicPartitions(args)
	if err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		trims, err := planTrim(ctx, adm, set, before)
		if err != nil {
			return err
		}
		res := topicTrimJSON{Version: topicJSONVersion, DryRun: o.dryRun, Partitions: trims}
		c := o.confirm
		preview := out // the plan is the answer: nothing is trimmed
		if g.format == formatJSON || (c.asks() && !o.dryRun) {
			preview = diag // the answer is what the trim did
		}
		if (g.format == formatText && (o.dryRun || c.refuses())) || (c.asks() && !o.dryRun) {
			if err := writeTrimTable(preview, trims, false); err != nil {
				return err
			}
		}
		if o.dryRun {
			return finishTrim(g, out, diag, res)
		}
		if c.refuses() {
			// The JSON document goes out before the refusal.
			if err := finishTrim(g, out, diag, res); err != nil && !errors.Is(err, ErrItemsFailed) {
				return err
			}
		}
		question := fmt.Sprintf("Delete the records before the new start of %s?", plural(countTrimmable(trims), "partition"))
		if err := c.ask(question, "trimmed", "delete the records above, or --dry-run to only preview"); err != nil {
			return err
		}
		if err := inspect.DeleteRecords(ctx, adm, trims); err != nil {
			return err
		}
		res.Trimmed = countTrimmable(trims) > 0
		reportTrimmed(diag, trims)
		if g.format == formatText {
			if err := writeTrimTable(out, trims, true); err != nil {
				return err
			}
		}
		return finishTrim(g, out, diag, res)
	})
}

// planTrim resolves before in every partition of set: its log start now
// and the offset to trim to. An exact offset goes to the broker as given,
// which refuses one past the high watermark; the other positions resolve
// within the log start and the high watermark.
func planTrim(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet, before offsetBound) ([]inspect.Trim, error) {
	parts, err := inspect.Partitions(ctx, adm, set)
	if err != nil {
		return nil, err
	}
	var timestamps []int64
	if before.kind == boundTime {
		timestamps = []int64{before.millis}
	}
	lists, err := inspect.ListOffsets(ctx, adm, parts.Topics(), timestamps)
	if err != nil {
		return nil, err
	}
	var trims []inspect.Trim
	for _, tp := range parts.Sorted() {
		for _, p := range slices.Sorted(slices.Values(tp.Partitions)) {
			t := inspect.Trim{Topic: tp.Topic, Partition: p, LogStart: -1, Before: -1, LowWatermark: -1}
			lo, err := lists.Lookup(tp.Topic, p)
			switch {
			case err != nil:
				t.Error = err.Error()
			case before.kind == boundExact:
				t.LogStart, t.Before = lo.LogStart, before.n
			default:
				t.LogStart = lo.LogStart
				t.Before = before.resolve(partitionOffsets{start: lo.LogStart, end: lo.HighWatermark, times: lo.AfterTime})
			}
			trims = append(trims, t)
		}
	}
	return trims, nil
}

// countTrimmable counts the partitions DeleteRecords is sent for.
func countTrimmable(trims []inspect.Trim) int {
	n := 0
	for _, t := range trims {
		if t.Error == "" {
			n++
		}
	}
	return n
}

// finishTrim reports per-partition failures on diag, writes the JSON
// document (text was written already), and returns ErrItemsFailed if any
// partition failed.
func finishTrim(g *globals, out, diag io.Writer, res topicTrimJSON) error {
	failed := failures{diag: diag}
	for _, t := range res.Partitions {
		failed.add(t.Error, "%s/%d", t.Topic, t.Partition)
	}
	if g.format == formatJSON {
		if res.Partitions == nil {
			res.Partitions = []inspect.Trim{}
		}
		if err := writeJSON(out, res); err != nil {
			return err
		}
	}
	return failed.err("%d of %d partitions failed", failed.n, len(res.Partitions))
}

// reportTrimmed says on diag how many partitions lost records: those
// whose log start moved.
func reportTrimmed(diag io.Writer, trims []inspect.Trim) {
	moved := 0
	for _, t := range trims {
		if t.Error == "" && t.LowWatermark > t.LogStart {
			moved++
		}
	}
	if moved == 0 {
		fmt.Fprintln(diag, "nothing trimmed: every partition already started at or after its new start")
		return
	}
	fmt.Fprintf(diag, "trimmed %s\n", plural(moved, "partition"))
}

// writeTrimTable prints the plan (log start -> new start) or, once
// trimmed (done), what moved: the old start and the low watermark.
func writeTrimTable(w io.Writer, trims []inspect.Trim, done bool) error {
	t := newTable(w)
	t.row("TOPIC\tPARTITION\tLOG-START\tNEW-START\n")
	for _, tr := range trims {
		newStart := tr.Before
		if done {
			newStart = tr.LowWatermark
		}
		t.row("%s\t%d\t%s\t%s", tr.Topic, tr.Partition, offsetOrDash(tr.LogStart), offsetOrDash(newStart))
		if tr.Error != "" {
			t.row("\t%s", tr.Error)
		}
		t.row("\n")
	}
	return t.flush()
}
