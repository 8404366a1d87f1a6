package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

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
