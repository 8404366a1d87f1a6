package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
)

// column is one column of a table.
type column struct {
	title string
	right bool // numbers align right
}

// row is one row of a table: key identifies it across refreshes (the
// cursor stays on it), cells are its text, changed marks the cells whose
// value changed since the last refresh, bad those to show as unhealthy.
// An internal row (of __consumer_offsets, __transaction_state) is shown
// only when the table shows internal rows.
type row struct {
	key      string
	cells    []string
	changed  []bool
	bad      []bool
	internal bool
}

// table is the list every screen shows: rows filtered by a substring,
// a cursor that j/k/g/G move, and a window scrolled to keep it visible.
// A table wider than the window keeps its first column and scrolls the
// others sideways (left/right), its header saying how many columns are
// out of sight on each side.
type table struct {
	cols   []column
	rows   []row
	filter string
	cursor int    // index into the filtered rows
	at     string // key of the row under the cursor
	offset int    // first filtered row shown
	// hscroll is how many columns after the first are scrolled out of
	// sight on the left.
	hscroll int
	// internal shows the internal rows; stale dims the rows, whose
	// values are no longer current.
	internal bool
	stale    bool
}

// hiddenInternal counts the internal rows the table does not show.
func (t *table) hiddenInternal() int {
	if t.internal {
		return 0
	}
	n := 0
	for _, r := range t.rows {
		if r.internal {
			n++
		}
	}
	return n
}

// setInternal shows or hides the internal rows.
func (t *table) setInternal(show bool) {
	t.internal = show
	t.follow()
}

// scroll scrolls the columns sideways by delta, within the table.
func (t *table) scroll(delta int) {
	t.hscroll = max(0, min(t.hscroll+delta, len(t.cols)-2))
}

// setRows replaces the rows, keeping the cursor on the row it was on.
func (t *table) setRows(rows []row) {
	t.rows = rows
	t.follow()
}

// setFilter keeps only the rows containing f (any case).
func (t *table) setFilter(f string) {
	t.filter = f
	t.follow()
}

// follow puts the cursor back on the row with key t.at, or clamps it.
func (t *table) follow() {
	vis := t.visible()
	for i, r := range vis {
		if r.key == t.at {
			t.cursor = i
			return
		}
	}
	t.cursor = max(0, min(t.cursor, len(vis)-1))
	if len(vis) > 0 {
		t.at = vis[t.cursor].key
	}
}

// visible returns the rows the filter keeps, internal ones only when
// shown.
func (t *table) visible() []row {
	if t.filter == "" && (t.internal || t.hiddenInternal() == 0) {
		return t.rows
	}
	f := strings.ToLower(t.filter)
	var out []row
	for _, r := range t.rows {
		if (t.internal || !r.internal) && strings.Contains(strings.ToLower(strings.Join(r.cells, " ")), f) {
			out = append(out, r)
		}
	}
	return out
}

// move moves the cursor by delta rows, staying inside the table.
func (t *table) move(delta int) {
	vis := t.visible()
	if len(vis) == 0 {
		return
	}
	t.cursor = max(0, min(t.cursor+delta, len(vis)-1))
	t.at = vis[t.cursor].key
}

// selected returns the key of the row under the cursor.
func (t *table) selected() (string, bool) {
	vis := t.visible()
	if len(vis) == 0 {
		return "", false
	}
	return vis[t.cursor].key, true
}

// view renders the table in width × height (the header line included).
func (t *table) view(s Styles, width, height int) string {
	vis := t.visible()
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		widths[i] = lipgloss.Width(c.title)
	}
	for _, r := range vis {
		for i, c := range r.cells {
			if i < len(widths) {
				widths[i] = max(widths[i], lipgloss.Width(c)+1) // room for a change mark
			}
		}
	}
	shown, note := t.layout(widths, width-2)
	var b strings.Builder
	head := make([]string, len(shown))
	for i, j := range shown {
		head[i] = pad(t.cols[j].title, widths[j], t.cols[j].right)
	}
	b.WriteString("  " + s.TableHead.Render(strings.TrimRight(strings.Join(head, "  "), " ")))
	if note != "" {
		b.WriteString(s.Dim.Render(note))
	}
	rowsShown := max(1, height-1)
	hidden := t.hiddenInternal()
	if hidden > 0 {
		rowsShown = max(1, height-2)
	}
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+rowsShown {
		t.offset = t.cursor - rowsShown + 1
	}
	t.offset = max(0, min(t.offset, len(vis)-rowsShown))
	if len(vis) == 0 {
		b.WriteString("\n")
		if t.filter != "" {
			b.WriteString(s.Dim.Render("no row matches /" + t.filter))
		} else {
			b.WriteString(s.Dim.Render("none"))
		}
	}
	for i := t.offset; i < len(vis) && i < t.offset+rowsShown; i++ {
		line := t.line(s, vis[i], shown, widths)
		if i == t.cursor {
			line = s.Selected.Render("> " + line)
		} else {
			line = "  " + line
		}
		b.WriteString("\n")
		b.WriteString(line)
	}
	if hidden > 0 {
		b.WriteString("\n" + s.Dim.Render(fmt.Sprintf("  + %d rows of internal topics, hidden (i shows them)", hidden)))
	}
	return b.String()
}

// line renders the cells of r in the columns shown.
func (t *table) line(s Styles, r row, shown, widths []int) string {
	cells := make([]string, len(shown))
	for i, j := range shown {
		text := ""
		if j < len(r.cells) {
			text = r.cells[j]
		}
		st := lipgloss.NewStyle()
		switch {
		case j < len(r.bad) && r.bad[j]:
			st = s.Bad
		case t.stale:
			st = s.Dim
		case j < len(r.changed) && r.changed[j]:
			st = s.Changed
		}
		if j < len(r.changed) && r.changed[j] {
			text += "Δ"
		}
		cells[i] = st.Render(pad(text, widths[j], t.cols[j].right))
	}
	return strings.TrimRight(strings.Join(cells, "  "), " ")
}

// layout picks the columns that fit in width: all of them when they
// do, else the first and as many of the rest as fit from hscroll on. The
// note says how many columns are out of sight left and right. The last
// column, free text, fits when its title does (the window cuts the rest
// of its cells, marked …).
func (t *table) layout(widths []int, width int) (shown []int, note string) {
	need := func(j int) int {
		if j == len(widths)-1 {
			return min(widths[j], lipgloss.Width(t.cols[j].title)+1)
		}
		return widths[j]
	}
	total := -2
	for j := range widths {
		total += need(j) + 2
	}
	if total <= width || len(t.cols) < 2 {
		t.hscroll = 0
		for j := range t.cols {
			shown = append(shown, j)
		}
		return shown, ""
	}
	t.hscroll = max(0, min(t.hscroll, len(t.cols)-2))
	const noteWidth = 8 // "  ←9 →9"
	shown = []int{0}
	used := widths[0]
	for j := 1 + t.hscroll; j < len(t.cols); j++ {
		if len(shown) > 1 && used+2+need(j) > width-noteWidth {
			break
		}
		shown = append(shown, j)
		used += 2 + widths[j]
	}
	left, right := t.hscroll, len(t.cols)-1-shown[len(shown)-1]
	note = " "
	if left > 0 {
		note += " ←" + strconv.Itoa(left)
	}
	if right > 0 {
		note += " →" + strconv.Itoa(right)
	}
	return shown, note
}

// pad pads s with spaces to width w, on the left when right.
func pad(s string, w int, right bool) string {
	n := w - lipgloss.Width(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

// deltas remembers each cell's value of the previous refresh, to mark the
// cells that changed.
type deltas map[string]string

// mark records the values of rows and sets their changed flags against
// the previous refresh. A row seen for the first time is not marked, nor
// are the moving columns (a countdown, a trend), which change every time.
func (d deltas) mark(rows []row, moving ...int) deltas {
	next := make(deltas, len(rows)*4)
	for i := range rows {
		r := &rows[i]
		r.changed = make([]bool, len(r.cells))
		for j, c := range r.cells {
			k := r.key + "\x00" + strconv.Itoa(j)
			if old, ok := d[k]; ok && old != c && !slices.Contains(moving, j) {
				r.changed[j] = true
			}
			next[k] = c
		}
	}
	return next
}

// ids renders a list of node ids as 1,2,3.
func ids(ns []int32) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ",")
}

// offset renders an offset, - when unknown.
func offset(o int64) string {
	if o < 0 {
		return "-"
	}
	return strconv.FormatInt(o, 10)
}
