package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// logJSONVersion is the version of klog log's JSON output (the lines of
// log dump -f json, the document of log segments -f json).
const logJSONVersion = 1

func newLogCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Read partition files offline: dump, verify and list segments",
		Long: `Read a partition's files on disk without a running broker: the segments
(.log), their indexes (.index, .timeindex, .txnindex), producer snapshots
(.snapshot), leader-epoch-checkpoint, partition.metadata and the data
directory's offset checkpoints, as klog and Kafka write them.`,
	}
	cmd.AddCommand(newLogDumpCmd(g), newLogSegmentsCmd(g))
	return cmd
}

// addLogFormatFlag gives a klog log command -f as a short form of the
// global --format.
func addLogFormatFlag(g *globals, cmd *cobra.Command) {
	cmd.Flags().StringVarP(&g.format, "format", "f", formatText, "output format: text|json")
}

// streamTable writes rows in aligned columns as they come, without
// buffering them all as table does, for output as long as a segment: each
// column is as wide as the widest cell so far (start widths are the
// header's, or given), so rows stay aligned unless a cell outgrows its
// column.
type streamTable struct {
	w      io.Writer
	widths []int
	err    error
}

func newStreamTable(w io.Writer, minWidths []int) *streamTable {
	return &streamTable{w: w, widths: append([]int(nil), minWidths...)}
}

// row writes one row of cells.
func (t *streamTable) row(cells ...string) {
	if t.err != nil {
		return
	}
	var b strings.Builder
	for i, c := range cells {
		if i == len(cells)-1 {
			b.WriteString(c)
			break
		}
		for len(t.widths) <= i {
			t.widths = append(t.widths, 0)
		}
		t.widths[i] = max(t.widths[i], len(c))
		b.WriteString(c)
		b.WriteString(strings.Repeat(" ", t.widths[i]-len(c)+2))
	}
	b.WriteByte('\n')
	t.line(b.String())
}

// line writes a line as it is, outside the columns.
func (t *streamTable) line(s string) {
	if t.err != nil {
		return
	}
	if _, err := io.WriteString(t.w, s); err != nil {
		t.err = fmt.Errorf("write output: %w", err)
	}
}

// millisCell renders a unix millisecond timestamp with millisecond
// precision, fixed width; negative is none.
func millisCell(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// progress is the progress line of long work on stderr (CLI.md), shown
// only when stderr is a terminal and stdout is not, so that it never mixes
// with the data. Updates come at most every progressInterval; a nil
// progress shows nothing.
type progress struct {
	w     io.Writer
	now   func() time.Time
	last  time.Time
	shown bool
}

const progressInterval = 200 * time.Millisecond

// newProgress returns the progress line for a command writing data to out
// and diagnostics to diag, nil when it should not show.
func newProgress(out, diag io.Writer) *progress {
	r, ok := diag.(io.Reader)
	if !ok || !isTerminal(r) {
		return nil
	}
	if o, ok := out.(io.Reader); ok && isTerminal(o) {
		return nil
	}
	return &progress{w: diag, now: time.Now}
}

// show replaces the line with the formatted text, unless the last update
// was less than progressInterval ago.
func (p *progress) show(format string, args ...any) {
	if p == nil {
		return
	}
	if now := p.now(); now.Sub(p.last) >= progressInterval {
		p.last = now
		p.shown = true
		fmt.Fprintf(p.w, "\r\033[K"+format, args...)
	}
}

// clear erases the line, before a diagnostic or at the end.
func (p *progress) clear() {
	if p != nil && p.shown {
		p.shown = false
		io.WriteString(p.w, "\r\033[K")
	}
}

// diagWriter writes diagnostics below (in place of) the progress line.
type diagWriter struct {
	p *progress
	w io.Writer
}

func (d diagWriter) Write(b []byte) (int, error) {
	d.p.clear()
	return d.w.Write(b)
}
