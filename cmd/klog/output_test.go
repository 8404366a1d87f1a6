package main

import (
	"strings"
	"testing"
)

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "record", "0 records"},
		{1, "record", "1 record"},
		{1, "segment", "1 segment"},
		{2, "segment", "2 segments"},
		{3, "process", "3 processes"},
	} {
		if got := plural(c.n, c.noun); got != c.want {
			t.Errorf("plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

// TestUnknownsReport: one line per distinct reason, each naming a bounded
// number of items, and a bounded number of lines.
func TestUnknownsReport(t *testing.T) {
	var u unknowns
	for p := range 10 {
		u.add("node 1 is down", "orders/%d", p)
	}
	for r := range 7 {
		u.add(strings.Repeat("x", r+1), "t/%d", r)
	}
	u.add("", "fine/0")
	var diag strings.Builder
	u.report(&diag)
	got := lines(diag.String())
	if len(got) != unknownReasonsMax+1 ||
		got[0] != "klog: ? for orders/0, orders/1, orders/2, orders/3, orders/4, orders/5 and 4 more: node 1 is down" ||
		got[unknownReasonsMax] != "klog: ? for other cells: 3 more reasons" {
		t.Errorf("report:\n%s", diag.String())
	}
	if err := u.err(); err == nil || err.Error() != "partial answer: 17 items could not be read" {
		t.Errorf("err = %v", err)
	}
}
