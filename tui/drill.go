package tui

// drill is the part of a screen whose list rows open a detail table (a
// topic's partitions, a group's lag): it knows which row is open and
// which table the keys work on.
type drill struct {
	label  string // the screen's title on its list
	items  table  // the list
	detail table  // the open row's table
	item   string // key of the open row, "" on the list
	// listed and described say the list and the open row have data.
	listed, described bool
}

// waiting returns what to show while the table shown has no data yet.
func (d *drill) waiting(s Styles) (string, bool) {
	switch {
	case d.item == "" && !d.listed:
		return s.Dim.Render("listing " + d.label + "…"), true
	case d.item != "" && !d.described:
		return s.Dim.Render("describing " + d.item + "…"), true
	}
	return "", false
}

func (d *drill) title() string {
	if d.item != "" {
		return d.label + " › " + d.item
	}
	return d.label
}

func (d *drill) list() *table {
	if d.item != "" {
		return &d.detail
	}
	return &d.items
}

// open opens the row under the cursor with an empty detail table and
// reports whether it did.
func (d *drill) open() bool {
	if d.item != "" {
		return false
	}
	key, ok := d.items.selected()
	if !ok {
		return false
	}
	d.item, d.described = key, false
	d.detail = table{cols: d.detail.cols}
	return true
}

func (d *drill) back() bool {
	if d.item == "" {
		return false
	}
	d.item = ""
	return true
}

// flat is the part of a screen without rows to open.
type flat struct{}

func (flat) enter() bool { return false }
func (flat) back() bool  { return false }
