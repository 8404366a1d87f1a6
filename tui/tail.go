package tui

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klogdev/klog/inspect"
)

// tailLimit is how many of each partition's last records the tail reads.
const tailLimit = 50

// tailScreen is the live tail of a topic (:tail orders): each partition's
// last records, newest first, refreshed live; / filters on any column.
// enter opens a record: its headers, its batch's attributes (codec,
// transactional, producer, leader epoch) and its value in hex.
type tailScreen struct {
	drill
	topic   string
	set     bool
	records map[string]inspect.TailRecord
	count   int
}

func newTailScreen() *tailScreen {
	return &tailScreen{drill: drill{
		label: "tail",
		items: table{cols: []column{
			{title: "P", right: true}, {title: "OFFSET", right: true}, {title: "TIME"}, {title: "KEY"},
			{title: "VALUE"}, {title: "BATCH"},
		}},
		detail: table{cols: []column{{title: "FIELD"}, {title: "VALUE"}}},
	}}
}

func (t *tailScreen) name() string { return "tail" }

func (t *tailScreen) title() string {
	switch {
	case !t.set:
		return "tail"
	case t.item != "":
		return "tail " + t.topic + " › " + t.item
	}
	return "tail " + t.topic
}

// setArg takes the topic to tail.
func (t *tailScreen) setArg(arg string) error {
	if arg != t.topic || !t.set {
		*t = *newTailScreen()
		t.topic, t.set = arg, true
	}
	return nil
}

func (t *tailScreen) enter() bool { return t.open() }

func (t *tailScreen) fetch() (string, fetchFunc) {
	switch {
	case !t.set:
		return "", func(context.Context, Source) (any, error) { return nil, nil }
	case t.item != "":
		// A record's detail is what the list read; nothing to fetch.
		return "record " + t.item, func(context.Context, Source) (any, error) { return nil, nil }
	}
	topic := t.topic
	return "topic " + topic, func(ctx context.Context, src Source) (any, error) { return src.Tail(ctx, topic, tailLimit) }
}

func (t *tailScreen) loaded(id string, v any, err error, _ time.Time) error {
	if !t.set {
		return nil
	}
	if strings.HasPrefix(id, "record ") {
		t.detail.setRows(recordDetail(t.records[t.item]))
		t.described = true
		return nil
	}
	recs, _ := v.([]inspect.TailRecord)
	if recs == nil && err != nil {
		return err
	}
	t.records = make(map[string]inspect.TailRecord, len(recs))
	rows := make([]row, 0, len(recs))
	for _, r := range recs {
		k := strconv.Itoa(int(r.Partition)) + "@" + strconv.FormatInt(r.Offset, 10)
		t.records[k] = r
		rows = append(rows, row{key: k, cells: []string{
			strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Offset, 10),
			time.UnixMilli(r.Timestamp).UTC().Format("15:04:05.000"), printable(r.Key, 24), printable(r.Value, 48), batchFlags(r),
		}})
	}
	t.items.setRows(rows)
	t.listed, t.count = true, len(recs)
	return err
}

// printable renders bytes for a cell: null, or text cut to n characters
// with anything not printable as ·.
func printable(b []byte, n int) string {
	if b == nil {
		return "null"
	}
	var sb strings.Builder
	i := 0
	for len(b) > 0 && i < n {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			r = '·'
		}
		sb.WriteRune(r)
		b = b[size:]
		i++
	}
	if len(b) > 0 {
		sb.WriteString("…")
	}
	return sb.String()
}

func batchFlags(r inspect.TailRecord) string {
	f := r.Compression
	if r.Transactional {
		f += ",txn"
	}
	return f
}

// recordDetail is the rows of a record's detail.
func recordDetail(r inspect.TailRecord) []row {
	var rows []row
	add := func(field, value string) {
		rows = append(rows, row{key: strconv.Itoa(len(rows)), cells: []string{field, value}})
	}
	tsType := "create time"
	if r.LogAppendTime {
		tsType = "log append time"
	}
	add("partition", strconv.Itoa(int(r.Partition)))
	add("offset", strconv.FormatInt(r.Offset, 10))
	add("timestamp", time.UnixMilli(r.Timestamp).UTC().Format(time.RFC3339Nano)+" ("+tsType+")")
	add("key", printable(r.Key, 200))
	for _, h := range r.Headers {
		add("header "+h.Key, printable(h.Value, 200))
	}
	add("batch", fmt.Sprintf("codec %s, transactional %v, leader epoch %d, producer %d epoch %d",
		r.Compression, r.Transactional, r.LeaderEpoch, r.ProducerID, r.ProducerEpoch))
	if r.Value == nil {
		add("value", "null (a tombstone)")
		return rows
	}
	add("value", fmt.Sprintf("%d bytes", len(r.Value)))
	const maxHex = 1024
	dump := hex.Dump(r.Value[:min(len(r.Value), maxHex)])
	for _, line := range strings.Split(strings.TrimRight(dump, "\n"), "\n") {
		add("", line)
	}
	if len(r.Value) > maxHex {
		add("", fmt.Sprintf("… %d more bytes", len(r.Value)-maxHex))
	}
	return rows
}

func (t *tailScreen) view(s Styles, width, height int) string {
	if !t.set {
		return "Which topic? Type :tail TOPIC."
	}
	if text, ok := t.waiting(s); ok {
		return text
	}
	if t.item != "" {
		return t.detail.view(s, width, height)
	}
	head := fmt.Sprintf("the last %d records of each partition, newest first (%d shown); / filters, enter opens one", tailLimit, t.count)
	return head + "\n\n" + t.items.view(s, width, height-2)
}
