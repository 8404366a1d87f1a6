package tui

import (
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
type row struct {
	key     string
	cells   []string
	changed []bool
	bad     []bool
}

// table is the list every screen shows: rows filtered by a substring,
// a cursor that j/k/g/G move, and a window scrolled to keep it visible.
type table struct {
	cols   []column
	rows   []row
	filter string
	cursor int    // index into the filtered rows
	at     string // key of the row under the cursor
	offset int    // first filtered row shown
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

// visible returns the rows the filter keeps.
func (t *table) visible() []row {
	if t.filter == "" {
		return t.rows
	}
	f := strings.ToLower(t.filter)
	var out []row
	for _, r := range t.rows {
		if strings.Contains(strings.ToLower(strings.Join(r.cells, " ")), f) {
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

// view renders the table in height lines (the header included).
func (t *table) view(s Styles, height int) string {
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
	var b strings.Builder
	head := make([]string, len(t.cols))
	for i, c := range t.cols {
		head[i] = pad(c.title, widths[i], c.right)
	}
	b.WriteString("  " + s.TableHead.Render(strings.TrimRight(strings.Join(head, "  "), " ")))
	rowsShown := max(1, height-1)
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
		r := vis[i]
		cells := make([]string, len(t.cols))
		for j := range t.cols {
			text := ""
			if j < len(r.cells) {
				text = r.cells[j]
			}
			st := lipgloss.NewStyle()
			switch {
			case j < len(r.bad) && r.bad[j]:
				st = s.Bad
			case j < len(r.changed) && r.changed[j]:
				st = s.Changed
			}
			cell := text
			if j < len(r.changed) && r.changed[j] {
				cell += "Δ"
			}
			cells[j] = st.Render(pad(cell, widths[j], t.cols[j].right))
		}
		line := strings.TrimRight(strings.Join(cells, "  "), " ")
		if i == t.cursor {
			line = s.Selected.Render("> " + line)
		} else {
			line = "  " + line
		}
		b.WriteString("\n")
		b.WriteString(line)
	}
	return b.String()
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
