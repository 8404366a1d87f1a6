package tui

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/inspect"
)

// groupsScreen lists the consumer groups; enter shows a group's members
// principals (admin API) and its committed offsets and lag per partition,
// with the member and its principal, and the lag's trend over the
// refreshes since the group was opened.
type groupsScreen struct {
	drill
	lastGroups deltas
	lastParts  deltas
	trend      history
	detailData *inspect.GroupDescription
	// held sums heldBack over the open group's partitions.
	held int64
	// points are the open group's total lag at each refresh (at most
	// historyLen), for the time it takes to catch up.
	points []lagPoint
}

// lagPoint is a group's total lag at one refresh.
type lagPoint struct {
	at  time.Time
	lag int64
}

// catchUp says how long the group takes to read its lag at the rate the
// lag changed over the points: "" without two points or time between
// them, else the time left, or that the lag is not shrinking.
func catchUp(points []lagPoint) string {
	if len(points) < 2 {
		return ""
	}
	first, last := points[0], points[len(points)-1]
	dt := last.at.Sub(first.at).Seconds()
	switch {
	case dt <= 0:
		return ""
	case last.lag == 0:
		return "caught up"
	}
	rate := float64(last.lag-first.lag) / dt // records a second, < 0 when shrinking
	if rate >= 0 {
		return fmt.Sprintf("not catching up (lag +%.1f/s)", rate)
	}
	left := time.Duration(float64(last.lag) / -rate * float64(time.Second))
	return fmt.Sprintf("catching up in ~%s (%.1f/s)", left.Round(time.Second), -rate)
}

func newGroupsScreen() *groupsScreen {
	return &groupsScreen{drill: drill{
		label: "groups",
		items: table{cols: []column{
			{title: "GROUP"}, {title: "TYPE"}, {title: "STATE"}, {title: "PROTOCOL"},
			{title: "MEMBERS", right: true}, {title: "COORDINATOR", right: true}, {title: "ERROR"},
		}},
		detail: table{cols: []column{
			{title: "TOPIC"}, {title: "P", right: true}, {title: "COMMITTED", right: true}, {title: "LSO", right: true},
			{title: "HW", right: true}, {title: "LAG", right: true}, {title: "HELD", right: true}, {title: "TREND"}, {title: "MEMBER"},
			{title: "PRINCIPAL"}, {title: "ERROR"},
		}},
	}}
}

func (g *groupsScreen) name() string { return "groups" }

func (g *groupsScreen) enter() bool {
	if !g.open() {
		return false
	}
	g.detailData, g.lastParts, g.trend, g.points = nil, nil, nil, nil
	return true
}

func (g *groupsScreen) fetch() (string, fetchFunc) {
	if name := g.item; name != "" {
		return "group/" + name, func(ctx context.Context, src Source) (any, error) { return src.Group(ctx, name) }
	}
	return "", func(ctx context.Context, src Source) (any, error) { return src.Groups(ctx) }
}

func (g *groupsScreen) loaded(id string, v any, err error, now time.Time) error {
	if id == "" {
		listed, _ := v.([]inspect.GroupListing)
		if listed == nil && err != nil {
			return err
		}
		var rows []row
		for _, l := range listed {
			r := row{key: l.Group, cells: []string{
				l.Group, l.Type, l.State, orDash(l.Protocol), strconv.Itoa(l.Members), strconv.Itoa(int(l.Coordinator)), l.Error,
			}, bad: make([]bool, 7)}
			r.bad[6] = l.Error != ""
			rows = append(rows, r)
		}
		g.lastGroups = g.lastGroups.mark(rows)
		g.items.setRows(rows)
		g.listed = true
		return err // some brokers did not answer
	}
	if err != nil {
		return err
	}
	d := v.(inspect.GroupDescription)
	g.points = append(g.points, lagPoint{at: now, lag: d.TotalLag})
	if len(g.points) > historyLen {
		g.points = g.points[len(g.points)-historyLen:]
	}
	lags := map[string]int64{"total": d.TotalLag}
	for _, p := range d.Partitions {
		if p.Lag != nil {
			lags[partKey(p)] = *p.Lag
		}
	}
	g.trend = g.trend.add(lags)
	var rows []row
	g.held = 0
	principals := make(map[string]string, len(d.Members))
	for _, m := range d.Members {
		principals[m.MemberID] = m.Principal
	}
	for _, p := range d.Partitions {
		committed, lag := "-", "-"
		if p.Committed != nil {
			committed = strconv.FormatInt(*p.Committed, 10)
		}
		if p.Lag != nil {
			lag = strconv.FormatInt(*p.Lag, 10)
		}
		held := heldBack(p)
		g.held += held
		r := row{key: partKey(p), cells: []string{
			p.Topic, strconv.Itoa(int(p.Partition)), committed, offset(p.LastStableOffset), offset(p.HighWatermark),
			lag, strconv.FormatInt(held, 10), sparkline(g.trend[partKey(p)]), shortMember(p.MemberID), orDash(principals[p.MemberID]), p.Error,
		}, bad: make([]bool, 11)}
		r.bad[6] = held > 0
		r.bad[10] = p.Error != ""
		rows = append(rows, r)
	}
	g.lastParts = g.lastParts.mark(rows, 7) // the trend
	g.detail.setRows(rows)
	g.detailData, g.described = &d, true
	return nil
}

// heldBack is the part of a partition's log a read_committed consumer of
// the group cannot reach yet for an open transaction: the offsets from the
// last stable offset (or its position, when past it) up to the high
// watermark. Lag counts up to the LSO; this is what comes after it once
// the transaction ends (markers and aborted records included).
func heldBack(p inspect.GroupPartition) int64 {
	if p.LastStableOffset < 0 || p.HighWatermark < 0 {
		return 0
	}
	from := max(p.LastStableOffset, p.LogStartOffset)
	if p.Committed != nil {
		from = max(from, *p.Committed)
	}
	return max(0, p.HighWatermark-from)
}

// orDash is s, or - when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// partKey identifies a partition across refreshes.
func partKey(p inspect.GroupPartition) string {
	return p.Topic + "/" + strconv.Itoa(int(p.Partition))
}

// shortMember cuts a generated member id to something a column can hold.
func shortMember(id string) string {
	if r := []rune(id); len(r) > 24 {
		return string(r[:23]) + "…"
	}
	return id
}

func (g *groupsScreen) view(s Styles, width, height int) string {
	if text, ok := g.waiting(s); ok {
		return text
	}
	if g.item == "" {
		return g.items.view(s, width, height)
	}
	d := g.detailData
	var b strings.Builder
	fmt.Fprintf(&b, "state %s   type %s   protocol %s   coordinator %d   members %d\n",
		s.Header.Render(d.State), d.Type, orDash(d.Protocol), d.Coordinator, len(d.Members))
	fmt.Fprintf(&b, "total lag %s %s", s.Header.Render(strconv.FormatInt(d.TotalLag, 10)), sparkline(g.trend["total"]))
	if c := catchUp(g.points); c != "" {
		b.WriteString("   " + c)
	}
	if g.held > 0 {
		b.WriteString("   " + s.Bad.Render(fmt.Sprintf("+%d offsets held back by open transactions (LSO < HW)", g.held)))
	}
	if d.Error != "" {
		b.WriteString("   " + s.Bad.Render(d.Error))
	}
	b.WriteString("\n" + memberPrincipals(d.Members) + "\n\n")
	b.WriteString(g.detail.view(s, width, height-4))
	return b.String()
}

// memberPrincipals says who the group's members are: each principal with
// its count of members, those the admin API did not name as unknown.
func memberPrincipals(members []inspect.GroupMember) string {
	if len(members) == 0 {
		return "principals: no members"
	}
	counts := map[string]int{}
	for _, m := range members {
		counts[cmp.Or(m.Principal, "unknown")]++
	}
	names := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(names))
	for i, p := range names {
		parts[i] = fmt.Sprintf("%s ×%d", p, counts[p])
	}
	return "principals: " + strings.Join(parts, ", ")
}
