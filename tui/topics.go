package tui

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/inspect"
)

// topicsScreen lists the topics; enter shows a topic's partitions with
// their leader, replicas, ISR and offsets.
type topicsScreen struct {
	drill
	lastTopics deltas
	lastParts  deltas
	detailData *TopicDetail
}

func newTopicsScreen() *topicsScreen {
	return &topicsScreen{drill: drill{
		label: "topics",
		items: table{cols: []column{{title: "NAME"}, {title: "PARTITIONS", right: true}, {title: "RF", right: true}, {title: "INTERNAL"}}},
		detail: table{cols: []column{
			{title: "P", right: true}, {title: "LEADER", right: true}, {title: "EPOCH", right: true},
			{title: "REPLICAS"}, {title: "ISR"}, {title: "LOG-START", right: true}, {title: "LSO", right: true},
			{title: "HW", right: true}, {title: "ERROR"},
		}},
	}}
}

func (t *topicsScreen) name() string { return "topics" }

func (t *topicsScreen) setInternal(show bool) {
	t.items.setInternal(show)
}

// internalTopic reports whether a topic is one of Kafka's own
// (__consumer_offsets, __transaction_state): its rows are hidden unless
// i shows them.
func internalTopic(name string) bool { return strings.HasPrefix(name, "__") }

func (t *topicsScreen) enter() bool {
	if !t.open() {
		return false
	}
	t.detailData, t.lastParts = nil, nil
	return true
}

func (t *topicsScreen) fetch() (string, fetchFunc) {
	if name := t.item; name != "" {
		return "topic/" + name, func(ctx context.Context, src Source) (any, error) { return src.Topic(ctx, name) }
	}
	return "", func(ctx context.Context, src Source) (any, error) { return src.Topics(ctx) }
}

func (t *topicsScreen) loaded(id string, v any, err error, _ time.Time) error {
	if err != nil {
		return err
	}
	if id == "" {
		var rows []row
		for _, l := range v.([]inspect.TopicListing) {
			internal := ""
			if l.Internal || internalTopic(l.Name) {
				internal = "yes"
			}
			rows = append(rows, row{key: l.Name, cells: []string{l.Name, strconv.Itoa(l.Partitions), strconv.Itoa(l.ReplicationFactor), internal}, internal: internal != ""})
		}
		// The user's topics first, the internal ones after.
		slices.SortStableFunc(rows, func(a, b row) int {
			switch {
			case a.internal == b.internal:
				return 0
			case a.internal:
				return 1
			}
			return -1
		})
		t.lastTopics = t.lastTopics.mark(rows)
		t.items.setRows(rows)
		t.listed = true
		return nil
	}
	d := v.(TopicDetail)
	var rows []row
	for _, p := range d.Partitions {
		r := row{
			key: strconv.Itoa(int(p.Partition)),
			cells: []string{
				strconv.Itoa(int(p.Partition)), strconv.Itoa(int(p.Leader)), strconv.Itoa(int(p.LeaderEpoch)),
				ids(p.Replicas), ids(p.ISR), offset(p.LogStartOffset), offset(p.LastStableOffset),
				offset(p.HighWatermark), p.Error,
			},
			bad: make([]bool, 9),
		}
		r.bad[1] = p.Leader < 0
		r.bad[4] = len(p.ISR) < len(p.Replicas)
		r.bad[6] = p.LastStableOffset >= 0 && p.LastStableOffset < p.HighWatermark // an open transaction holds it back
		r.bad[8] = p.Error != ""
		rows = append(rows, r)
	}
	t.lastParts = t.lastParts.mark(rows)
	t.detail.setRows(rows)
	t.detailData, t.described = &d, true
	return nil
}

func (t *topicsScreen) view(s Styles, width, height int) string {
	if text, ok := t.waiting(s); ok {
		return text
	}
	if t.item == "" {
		return t.items.view(s, width, height)
	}
	d := t.detailData
	head := strconv.Itoa(len(d.Partitions)) + " partitions   replication factor " + strconv.Itoa(d.ReplicationFactor)
	if d.Internal {
		head += "   internal"
	}
	return head + "\n\n" + t.detail.view(s, width, height-2)
}
