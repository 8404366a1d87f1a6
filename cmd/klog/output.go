package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// writeOutput writes a command's result to out: doc as indented JSON with
// --format json, else the table that text fills.
func writeOutput(g *globals, out io.Writer, doc any, text func(*table)) error {
	if g.format == formatJSON {
		return writeJSON(out, doc)
	}
	t := newTable(out)
	text(t)
	return t.flush()
}

// writeJSON writes v as indented JSON with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// table is text output in aligned columns, two spaces apart. Rows are
// buffered and aligned together until flush; the first write error is kept
// and what is written after it is dropped.
type table struct {
	tw       *tabwriter.Writer
	err      error
	sections int // started by section
}

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
}

// row writes formatted text: cells end with \t, rows with \n.
func (t *table) row(format string, args ...any) {
	if t.err == nil {
		fmt.Fprintf(t.tw, format, args...)
	}
}

// flush writes the rows so far, aligned; rows written after it are aligned
// on their own. It returns the first write error.
func (t *table) flush() error {
	if t.err == nil {
		if err := t.tw.Flush(); err != nil {
			t.err = fmt.Errorf("write output: %w", err)
		}
	}
	return t.err
}

// section starts a section of rows aligned on their own: it flushes the
// rows so far and, unless this is the first section, writes a blank line.
func (t *table) section() {
	if t.sections > 0 {
		t.flush()
		t.row("\n")
	}
	t.sections++
}

// failures counts the items of a command that failed, each reported on diag
// as it is found.
type failures struct {
	diag io.Writer
	n    int
}

// add reports a failed item, "klog: <item>: <errText>", unless errText is
// empty.
func (f *failures) add(errText, item string, args ...any) {
	if errText == "" {
		return
	}
	f.n++
	fmt.Fprintf(f.diag, "klog: %s: %s\n", fmt.Sprintf(item, args...), errText)
}

// err returns nil when no item failed, else the summary, formatted, wrapping
// ErrItemsFailed.
func (f *failures) err(summary string, args ...any) error {
	if f.n == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(summary, args...), ErrItemsFailed)
}

// unknownCell is the text of a cell that could not be read.
const unknownCell = "?"

// Bounds of what unknowns writes on stderr.
const (
	unknownReasonsMax = 5 // reasons, one line each
	unknownItemsMax   = 6 // items named on one reason's line
)

// unknowns collects the cells of a partial answer that could not be read,
// by reason, to report each distinct reason once.
type unknowns struct {
	reasons []string            // in the order first seen
	items   map[string][]string // by reason
}

// add records that the cells of item could not be read for reason, unless
// reason is empty; it reports whether it recorded anything.
func (u *unknowns) add(reason, item string, args ...any) bool {
	if reason == "" {
		return false
	}
	if u.items == nil {
		u.items = make(map[string][]string)
	}
	if _, seen := u.items[reason]; !seen {
		u.reasons = append(u.reasons, reason)
	}
	u.items[reason] = append(u.items[reason], fmt.Sprintf(item, args...))
	return true
}

// lines are the distinct reasons, "<items>: <reason>" each, at most
// unknownReasonsMax of them and a last line for the others.
func (u *unknowns) lines() []string {
	var out []string
	for i, r := range u.reasons {
		if i == unknownReasonsMax {
			return append(out, "other cells: "+plural(len(u.reasons)-i, "more reason"))
		}
		items := u.items[r]
		named := strings.Join(items[:min(len(items), unknownItemsMax)], ", ")
		if len(items) > unknownItemsMax {
			named += fmt.Sprintf(" and %d more", len(items)-unknownItemsMax)
		}
		out = append(out, named+": "+r)
	}
	return out
}

// report writes the lines on diag, "klog: ? for <items>: <reason>".
func (u *unknowns) report(diag io.Writer) {
	for _, l := range u.lines() {
		fmt.Fprintf(diag, "klog: ? for %s\n", l)
	}
}

// err returns nil when every cell was read, else an error wrapping
// ErrPartial.
func (u *unknowns) err() error {
	if len(u.reasons) == 0 {
		return nil
	}
	n := 0
	for _, items := range u.items {
		n += len(items)
	}
	return fmt.Errorf("%w: %s could not be read", ErrPartial, plural(n, "item"))
}

// addShardErrors adds to u each failed piece of a request err reports
// (kadm.ShardErrors), as "<what> broker N"; any other error as it is.
func addShardErrors(u *unknowns, err error, what string) {
	se, ok := errors.AsType[*kadm.ShardErrors](err)
	if !ok {
		if err != nil {
			u.add(err.Error(), "%s some brokers", what)
		}
		return
	}
	for _, e := range se.Errs {
		u.add(e.Err.Error(), "%s broker %d", what, e.Broker.NodeID)
	}
}

// cellsError is the reason shared by the cells of an item that could not
// be read, given by field: the first in field order; "" when there is none.
func cellsError(byField map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(byField)) {
		return byField[k]
	}
	return ""
}

// cell is value, or unknownCell when reason is not empty.
func cell(value, reason string) string {
	if reason != "" {
		return unknownCell
	}
	return value
}

// plural renders a count of things: "1 record", "3 records", "2
// processes". noun is the singular; its plural adds "s", or "es" after an
// s. Every count klog prints in words goes through it.
func plural[N ~int | ~int32 | ~int64](n N, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ---- cells ----

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// optOffset renders an offset that may be missing.
func optOffset(o *int64) string {
	if o == nil {
		return "-"
	}
	return fmt.Sprint(*o)
}

// offsetOrDash renders an offset; negative is unknown.
func offsetOrDash(o int64) string {
	if o < 0 {
		return "-"
	}
	return fmt.Sprint(o)
}

// millisString renders a unix millisecond timestamp; negative is unknown.
func millisString(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// int32List renders [1 2 3] as "1,2,3".
func int32List(s []int32) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// partitionsString renders partitions of topics as "t1[0,1] t2[3]".
func partitionsString(tps []inspect.TopicPartitions) string {
	if len(tps) == 0 {
		return "-"
	}
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = tp.Topic + "[" + int32List(tp.Partitions) + "]"
	}
	return strings.Join(parts, " ")
}
