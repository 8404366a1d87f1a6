package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// partitionScreen is one partition: its leader, epoch and replicas with
// their ISR membership over the Kafka protocol, and from the leader's
// admin API its log end offset and what it knows of each follower (log
// end offset, lag, when it was last caught up), with a bar of the log's
// offsets: log start, last stable offset, high watermark, log end. The
// partition is the command's argument: :part orders/0.
type partitionScreen struct {
	flat
	topic     string
	partition int32
	set       bool
	data      *PartitionDetail
	replicas  table
	last      deltas
	now       time.Time
}

func newPartitionScreen() *partitionScreen {
	return &partitionScreen{replicas: table{cols: []column{
		{title: "REPLICA", right: true}, {title: "ROLE"}, {title: "ISR"}, {title: "LEO", right: true},
		{title: "LAG", right: true}, {title: "LAST-CAUGHT-UP", right: true}, {title: "LAST-FETCH", right: true}, {title: "CAUGHT-UP"},
	}}}
}

func (p *partitionScreen) name() string { return "part" }

func (p *partitionScreen) title() string {
	if !p.set {
		return "partition"
	}
	return fmt.Sprintf("partition %s/%d", p.topic, p.partition)
}

func (p *partitionScreen) list() *table { return &p.replicas }

// setArg takes the partition to show, TOPIC/PARTITION.
func (p *partitionScreen) setArg(arg string) error {
	topic, n, err := parseTopicPartition("part", arg)
	if err != nil {
		return err
	}
	if topic != p.topic || n != p.partition || !p.set {
		*p = *newPartitionScreen()
		p.topic, p.partition, p.set = topic, n, true
	}
	return nil
}

// parseTopicPartition parses a screen's TOPIC/PARTITION argument.
func parseTopicPartition(screen, arg string) (string, int32, error) {
	topic, ps, ok := strings.Cut(arg, "/")
	n, err := strconv.ParseInt(ps, 10, 32)
	if !ok || topic == "" || err != nil || n < 0 {
		return "", 0, fmt.Errorf("%s %q: want TOPIC/PARTITION, e.g. :%s orders/0", screen, arg, screen)
	}
	return topic, int32(n), nil
}

func (p *partitionScreen) fetch() (string, fetchFunc) {
	if !p.set {
		return "", func(context.Context, Source) (any, error) { return nil, nil }
	}
	topic, partition := p.topic, p.partition
	return fmt.Sprintf("%s/%d", topic, partition), func(ctx context.Context, src Source) (any, error) {
		return src.Partition(ctx, topic, partition)
	}
}

func (p *partitionScreen) loaded(_ string, v any, err error, now time.Time) error {
	if !p.set {
		return nil
	}
	if err != nil {
		return err
	}
	d := v.(PartitionDetail)
	followers := map[int32]int{}
	if d.Leader != nil {
		for i, f := range d.Leader.Followers {
			followers[f.ID] = i
		}
	}
	ago := func(t *time.Time) string {
		if t == nil {
			return "never"
		}
		return now.Sub(*t).Truncate(100*time.Millisecond).String() + " ago"
	}
	var rows []row
	for _, id := range d.Kafka.Replicas {
		isr := "out"
		switch {
		case slices.Contains(d.Kafka.OfflineReplicas, id):
			isr = "offline"
		case slices.Contains(d.Kafka.ISR, id):
			isr = "in"
		}
		r := row{key: strconv.Itoa(int(id)), cells: []string{strconv.Itoa(int(id)), "follower", isr, "-", "-", "-", "-", "-"}, bad: make([]bool, 8)}
		r.bad[2] = isr != "in"
		switch i, ok := followers[id]; {
		case id == d.Kafka.Leader:
			r.cells[1] = "leader"
			if d.Leader != nil {
				r.cells[3], r.cells[4] = offset(d.Leader.LogEndOffset), "0"
			}
		case ok:
			f := d.Leader.Followers[i]
			r.cells[3], r.cells[4] = offset(f.LogEndOffset), offset(f.Lag)
			r.cells[5], r.cells[6] = ago(f.LastCaughtUp), ago(f.LastFetch)
			r.cells[7] = "no"
			if f.CaughtUp {
				r.cells[7] = "yes"
			}
			r.bad[4], r.bad[7] = f.Lag != 0, !f.CaughtUp
		}
		rows = append(rows, r)
	}
	p.last = p.last.mark(rows, 5, 6) // the times move every refresh
	p.replicas.setRows(rows)
	p.data, p.now = &d, now
	return nil
}

func (p *partitionScreen) view(s Styles, width, height int) string {
	switch {
	case !p.set:
		return "Which partition? Type :part TOPIC/PARTITION, e.g. :part orders/0."
	case p.data == nil:
		return s.Dim.Render("reading " + p.title() + "…")
	}
	d := p.data
	k := d.Kafka
	var b strings.Builder
	fmt.Fprintf(&b, "leader %d   epoch %d   replicas %s   ISR %s", k.Leader, k.LeaderEpoch, ids(k.Replicas), ids(k.ISR))
	if k.Error != "" {
		b.WriteString("   " + s.Bad.Render(k.Error))
	}
	b.WriteString("\n\n")
	leo := int64(-1)
	if d.Leader != nil {
		leo = d.Leader.LogEndOffset
	}
	fmt.Fprintf(&b, "log start %s   LSO %s   HW %s   LEO %s\n", offset(k.LogStartOffset), offset(k.LastStableOffset), offset(k.HighWatermark), offset(leo))
	b.WriteString(offsetBar(k.LogStartOffset, k.LastStableOffset, k.HighWatermark, leo, max(min(width-2, 60), 10)) + "\n")
	b.WriteString(s.Dim.Render("█ readable (read_committed)  ▓ held back by an open transaction  ░ not yet replicated to the ISR") + "\n")
	if d.AdminErr != "" {
		b.WriteString(s.Dim.Render("followers' state: "+d.AdminErr) + "\n")
	}
	b.WriteString("\n")
	// The ISR change timeline takes what the replicas leave, the newest
	// changes last.
	const maxTimeline = 6
	used := strings.Count(b.String(), "\n")
	tableHeight := height - used
	room := min(maxTimeline, tableHeight-(len(p.replicas.rows)+1)-3)
	tl := d.Timeline[max(0, len(d.Timeline)-max(room, 0)):]
	if len(tl) > 0 {
		tableHeight = len(p.replicas.rows) + 1
	}
	out := b.String() + p.replicas.view(s, width, tableHeight)
	if len(tl) > 0 {
		out += "\n\n" + s.Dim.Render("ISR and leader changes (the newest last):")
		for _, e := range tl {
			out += "\n" + e.Time.UTC().Format("15:04:05.000") + "  " + e.Kind + "  " + e.DetailText()
		}
	}
	return out
}

// offsetBar draws [log start, LEO) in width cells: up to the LSO what a
// read_committed consumer can read, to the HW what an open transaction
// holds back, to the LEO what the ISR has not all got. Unknown offsets
// (-1) draw nothing past the last known one.
func offsetBar(start, lso, hw, leo int64, width int) string {
	end := max(leo, hw, lso, start)
	if start < 0 || end <= start {
		return "[" + strings.Repeat(" ", width) + "]"
	}
	cell := func(o int64) int {
		if o < start {
			return 0
		}
		return int(float64(min(o, end)-start) / float64(end-start) * float64(width))
	}
	l, h := cell(max(lso, start)), cell(max(hw, lso, start))
	e := cell(end)
	return "[" + strings.Repeat("█", l) + strings.Repeat("▓", h-l) + strings.Repeat("░", e-h) + strings.Repeat(" ", width-e) + "]"
}
