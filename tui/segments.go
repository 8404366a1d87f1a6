package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/recordjson"
)

// segmentsScreen is one partition's log as its leader holds it, from the
// admin API: each segment's offsets, size, time range and index entries;
// enter opens a segment's offset index (offset → position in its .log),
// and enter on an index entry the batch it points at: its header and its
// records. The partition is the command's argument: :seg orders/0.
type segmentsScreen struct {
	drill
	topic     string
	partition int32
	set       bool
	data      *PartitionSegments
	index     *nodeapi.Index
	noAdmin   error
	lastSegs  deltas
	// entry is the open index entry's offset, "" when none; batch its
	// batch, records the batch's records.
	entry   string
	batch   *nodeapi.Batch
	records table
	// times is the open segment's time index (its first page).
	times *nodeapi.Index
}

// segmentIndexes are the first pages of a segment's two indexes.
type segmentIndexes struct {
	offsets, times nodeapi.Index
}

func newSegmentsScreen() *segmentsScreen {
	return &segmentsScreen{drill: drill{
		label: "segments",
		items: table{cols: []column{
			{title: "BASE", right: true}, {title: "LAST", right: true}, {title: "SIZE", right: true},
			{title: "FIRST-TIME"}, {title: "MAX-TIME"}, {title: "INDEX", right: true},
			{title: "TIMEINDEX", right: true}, {title: "ABORTED", right: true}, {title: "ACTIVE"},
		}},
		detail: table{cols: []column{{title: "ENTRY", right: true}, {title: "OFFSET", right: true}, {title: "POSITION", right: true}}},
	}, records: newBatchRecordsTable()}
}

func newBatchRecordsTable() table {
	return table{cols: []column{{title: "OFFSET", right: true}, {title: "TIME"}, {title: "KEY"}, {title: "VALUE"}, {title: "HEADERS", right: true}}}
}

func (g *segmentsScreen) name() string { return "seg" }

func (g *segmentsScreen) title() string {
	if !g.set {
		return "segments"
	}
	t := fmt.Sprintf("segments %s/%d", g.topic, g.partition)
	if g.item != "" {
		t += " › " + g.item + " offset index"
	}
	if g.entry != "" {
		t += " › batch of " + g.entry
	}
	return t
}

func (g *segmentsScreen) list() *table {
	if g.entry != "" {
		return &g.records
	}
	return g.drill.list()
}

// setArg takes the partition to show, TOPIC/PARTITION.
func (g *segmentsScreen) setArg(arg string) error {
	topic, n, err := parseTopicPartition("seg", arg)
	if err != nil {
		return err
	}
	if topic != g.topic || n != g.partition || !g.set {
		*g = *newSegmentsScreen()
		g.topic, g.partition, g.set = topic, n, true
	}
	return nil
}

func (g *segmentsScreen) enter() bool {
	if g.item != "" {
		// An index entry: the batch it points at.
		row, ok := g.detail.selected()
		if !ok || g.entry != "" || g.index == nil {
			return false
		}
		n, _ := strconv.Atoi(row)
		if i := n - g.index.From; i >= 0 && i < len(g.index.Offsets) {
			g.entry, g.batch, g.records = strconv.FormatInt(g.index.Offsets[i].Offset, 10), nil, newBatchRecordsTable()
			return true
		}
		return false
	}
	if !g.open() {
		return false
	}
	g.index = nil
	return true
}

func (g *segmentsScreen) back() bool {
	if g.entry != "" {
		g.entry, g.batch = "", nil
		return true
	}
	return g.drill.back()
}

func (g *segmentsScreen) fetch() (string, fetchFunc) {
	if !g.set {
		return "", func(context.Context, Source) (any, error) { return nil, nil }
	}
	topic, partition := g.topic, g.partition
	id := fmt.Sprintf("%s/%d", topic, partition)
	if entry := g.entry; entry != "" {
		o, _ := strconv.ParseInt(entry, 10, 64)
		return id + "#" + entry, func(ctx context.Context, src Source) (any, error) {
			return src.Batch(ctx, topic, partition, o)
		}
	}
	if base := g.item; base != "" {
		b, _ := strconv.ParseInt(base, 10, 64)
		return id + "@" + base, func(ctx context.Context, src Source) (any, error) {
			off, err := src.Index(ctx, topic, partition, b, nodeapi.IndexOffset)
			if err != nil {
				return nil, err
			}
			times, err := src.Index(ctx, topic, partition, b, nodeapi.IndexTime)
			return segmentIndexes{off, times}, err
		}
	}
	return id, func(ctx context.Context, src Source) (any, error) { return src.Segments(ctx, topic, partition) }
}

func (g *segmentsScreen) loaded(id string, v any, err error, _ time.Time) error {
	if !g.set {
		return nil
	}
	g.noAdmin = nil
	if errors.Is(err, ErrNoAdminAPI) {
		g.noAdmin, g.listed, g.described = err, true, true
		return nil
	}
	if err != nil {
		return err
	}
	if strings.Contains(id, "#") {
		b := v.(nodeapi.Batch)
		var rows []row
		for _, r := range b.Records {
			o, ts := deref(r.Offset), deref(r.Timestamp)
			rows = append(rows, row{key: strconv.FormatInt(o, 10), cells: []string{
				strconv.FormatInt(o, 10), millis(ts), printable(jsonBytes(r.Key, r.KeyEncoding), 24),
				printable(jsonBytes(r.Value, r.ValueEncoding), 48), strconv.Itoa(len(r.Headers)),
			}})
		}
		g.records.setRows(rows)
		g.batch = &b
		return nil
	}
	if !strings.Contains(id, "@") {
		d := v.(PartitionSegments)
		var rows []row
		for _, s := range d.Segments.Segments {
			active := ""
			if s.Active {
				active = "yes"
			}
			rows = append(rows, row{key: strconv.FormatInt(s.BaseOffset, 10), cells: []string{
				strconv.FormatInt(s.BaseOffset, 10), offset(s.LastOffset), byteSize(s.Size),
				millis(s.FirstTimestamp), millis(s.MaxTimestamp), strconv.Itoa(s.IndexEntries),
				strconv.Itoa(s.TimeIndexEntries), strconv.Itoa(s.AbortedTxns), active,
			}})
		}
		g.lastSegs = g.lastSegs.mark(rows)
		g.items.setRows(rows)
		g.data, g.listed = &d, true
		return nil
	}
	ixs := v.(segmentIndexes)
	ix := ixs.offsets
	g.times = &ixs.times
	var rows []row
	for i, e := range ix.Offsets {
		n := strconv.Itoa(ix.From + i)
		rows = append(rows, row{key: n, cells: []string{n, strconv.FormatInt(e.Offset, 10), strconv.FormatInt(e.Position, 10)}})
	}
	g.detail.setRows(rows)
	g.index, g.described = &ix, true
	return nil
}

// millis renders Unix milliseconds; negative is unknown.
func millis(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000")
}

func (g *segmentsScreen) view(s Styles, width, height int) string {
	switch {
	case !g.set:
		return "Which partition? Type :seg TOPIC/PARTITION, e.g. :seg orders/0."
	case g.noAdmin != nil:
		return s.Bad.Render("No segments: "+g.noAdmin.Error()+".") + "\n\n" +
			"This screen reads a klog node's admin API (GET /v1/partitions/T/P/segments).\n" + noAdminHelp
	}
	if g.entry != "" {
		b := g.batch
		if b == nil {
			return s.Dim.Render("reading the batch of offset " + g.entry + "…")
		}
		crc := "ok"
		if !b.CRCValid {
			crc = s.Bad.Render("MISMATCH")
		}
		head := fmt.Sprintf("batch %d to %d   %d records   %s   codec %s   crc %s   leader epoch %d\n", b.BaseOffset, b.LastOffset, b.Count, byteSize(int64(b.Size)), b.Codec, crc, b.PartitionLeaderEpoch)
		head += fmt.Sprintf("producer %d epoch %d sequence %d   transactional %v   control %v   timestamps %s", b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.Transactional, b.Control, b.TimestampType)
		if b.Error != "" {
			head += "\n" + s.Bad.Render(b.Error)
		}
		return head + "\n\n" + g.records.view(s, width, height-3)
	}
	if text, ok := g.waiting(s); ok {
		return text
	}
	if g.item == "" {
		d := g.data
		head := fmt.Sprintf("node %d (%s)   %d segments   log start %d   HW %d   LEO %d", d.Node, d.Partition.Role,
			d.Segments.Total, d.Partition.LogStartOffset, d.Partition.HighWatermark, d.Partition.LogEndOffset)
		return head + "\n\n" + g.items.view(s, width, height-2)
	}
	ix := g.index
	head := fmt.Sprintf("%d entries; each is a batch's last offset and the position where the batch starts; enter opens the batch", ix.Total)
	if ix.Next != nil {
		head += fmt.Sprintf(" (the first %d shown)", len(ix.Offsets))
	}
	out := head + "\n\n" + g.detail.view(s, width, min(height-2, len(g.detail.rows)+1))
	// The time index below: time → the offset of the batch reaching it.
	if tx := g.times; tx != nil && len(tx.Times) > 0 {
		room := height - 2 - (len(g.detail.rows) + 1) - 3
		out += "\n\n" + s.Dim.Render(fmt.Sprintf("time index: %d entries, time → offset", tx.Total))
		for _, e := range tx.Times[:max(0, min(len(tx.Times), room))] {
			out += fmt.Sprintf("\n  %s → %d", millis(e.Timestamp), e.Offset)
		}
	}
	return out
}

// deref is *p, -1 for nil.
func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// jsonBytes decodes a byte string of klog's JSON record schema; one that
// does not decode is shown as written.
func jsonBytes(s *string, encoding string) []byte {
	b, err := recordjson.DecodeBytes("", s, encoding)
	if err != nil {
		return []byte(*s)
	}
	return b
}
