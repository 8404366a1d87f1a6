package tui

import "strings"

// historyLen bounds the points a trend keeps per series.
const historyLen = 24

// history keeps the last historyLen values of each series (a partition's
// lag) across refreshes; series not seen in a refresh are dropped, so it
// stays bounded by what the screen shows.
type history map[string][]int64

// add appends one refresh's values and returns the new history.
func (h history) add(values map[string]int64) history {
	next := make(history, len(values))
	for k, v := range values {
		s := append(h[k], v)
		if len(s) > historyLen {
			s = s[len(s)-historyLen:]
		}
		next[k] = s
	}
	return next
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// sparkline renders values as a bar per value, scaled from 0 to the
// largest value.
func sparkline(values []int64) string {
	var top int64
	for _, v := range values {
		top = max(top, v)
	}
	var b strings.Builder
	for _, v := range values {
		i := 0
		if top > 0 && v > 0 {
			i = int((v*int64(len(sparks)-1) + top - 1) / top)
		}
		b.WriteRune(sparks[i])
	}
	return b.String()
}
