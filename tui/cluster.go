package tui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
)

// clusterScreen is the cluster overview: every node known and whether it
// is up, the controller, and how many partitions are under-replicated or
// offline, marked stale when the metadata they come from is not current;
// on klog, each node's part in the metadata quorum from its admin API
// (Raft role, term, the metadata offset it serves, when it last heard
// from the leader).
type clusterScreen struct {
	flat
	brokers table
	last    deltas
	summary row
	st      *ClusterState
	// prev is each node's traffic counters at the last refresh, trend
	// the bytes-in rates since the screen opened.
	prev  map[int32]traffic
	trend history
	// seen is every node seen since the screen opened, downSince when
	// each node down was first seen so, staleSince when the counts
	// became stale.
	seen       map[int32]NodeHealth
	downSince  map[int32]time.Time
	staleSince time.Time
	// why says why each node down is, now is the time of the last read.
	why []string
	now time.Time
}

// traffic is a node's counters read at one time.
type traffic struct {
	at      time.Time
	in, out uint64
}

func newClusterScreen() *clusterScreen {
	return &clusterScreen{brokers: table{cols: []column{
		{title: "ID", right: true}, {title: "STATUS"}, {title: "ADDRESS"}, {title: "RACK"}, {title: "ROLE"},
		{title: "RAFT"}, {title: "TERM", right: true}, {title: "METADATA", right: true}, {title: "LEADER-CONTACT", right: true},
		{title: "IN/S", right: true}, {title: "OUT/S", right: true}, {title: "IN TREND"},
	}}, prev: map[int32]traffic{}, seen: map[int32]NodeHealth{}, downSince: map[int32]time.Time{}}
}

func (c *clusterScreen) name() string  { return "cluster" }
func (c *clusterScreen) title() string { return "cluster" }
func (c *clusterScreen) list() *table  { return &c.brokers }

func (c *clusterScreen) fetch() (string, fetchFunc) {
	return "", func(ctx context.Context, src Source) (any, error) {
		st, err := src.Overview(ctx)
		if err != nil {
			return nil, err
		}
		q, _ := src.Nodes(ctx) // none without the admin API
		return clusterData{st, q}, nil
	}
}

// clusterData is what the cluster screen reads.
type clusterData struct {
	state  ClusterState
	quorum []NodeState
}

// status is a node's STATUS cell, up or down since when, and why it is
// down. A node gone from every answer is down since the refresh that
// missed it; one the TUI never reached up is unreachable.
func (c *clusterScreen) status(n NodeHealth, gone bool, now time.Time) (status, why string) {
	if !gone && !n.Down() {
		delete(c.downSince, n.NodeID)
		return "up", ""
	}
	since, ok := c.downSince[n.NodeID]
	if !ok {
		since = now
		if !n.LastFetch.IsZero() && n.LastFetch.Before(now) {
			since = n.LastFetch // its last fetch of the metadata log
		}
		c.downSince[n.NodeID] = since
	}
	var whys []string
	switch {
	case gone:
		whys = append(whys, "gone from every node's answer")
	case n.Fenced:
		whys = append(whys, "fenced by the controller")
	}
	if !gone && !n.Reachable {
		whys = append(whys, "no answer: "+n.Err)
	}
	why = strings.Join(whys, "; ")
	if _, wasUp := c.seen[n.NodeID]; !wasUp && !n.Fenced && !n.Listed {
		return "unreachable", why
	}
	return "down since " + since.Format("15:04:05"), why
}

func (c *clusterScreen) loaded(_ string, v any, err error, now time.Time) error {
	if err != nil {
		return err
	}
	d := v.(clusterData)
	st := d.state
	rafts := map[int32]NodeState{}
	for _, q := range d.quorum {
		rafts[q.NodeID] = q
	}
	nodes := st.Nodes
	for id, n := range c.seen {
		if !slices.ContainsFunc(nodes, func(m NodeHealth) bool { return m.NodeID == id }) {
			n.Reachable, n.Listed = false, false
			nodes = append(nodes, n)
		}
	}
	slices.SortFunc(nodes, func(a, b NodeHealth) int { return int(a.NodeID) - int(b.NodeID) })
	var rows []row
	rates := map[string]int64{}
	down := 0
	c.why, c.now = nil, now
	for _, n := range nodes {
		_, current := indexNode(st.Nodes, n.NodeID)
		r := c.nodeRow(n, !current, st.Overview.Controller, now)
		if r.bad[1] {
			down++
		} else if n.Reachable || n.Listed {
			c.seen[n.NodeID] = n
		}
		if q, ok := rafts[n.NodeID]; ok {
			c.raft(&r, q, now, rates)
		}
		rows = append(rows, r)
	}
	c.trend = c.trend.add(rates)
	for i := range rows {
		rows[i].cells[11] = sparkline(c.trend[rows[i].key])
	}
	c.setSummary(rows, st, down, now)
	c.st = &st
	return nil
}

// indexNode finds node id in ns.
func indexNode(ns []NodeHealth, id int32) (int, bool) {
	i := slices.IndexFunc(ns, func(n NodeHealth) bool { return n.NodeID == id })
	return i, i >= 0
}

// nodeRow is node n's row, before its quorum state and traffic.
func (c *clusterScreen) nodeRow(n NodeHealth, gone bool, controller int32, now time.Time) row {
	role := ""
	if n.NodeID == controller {
		role = "controller"
	}
	status, why := c.status(n, gone, now)
	if why != "" {
		c.why = append(c.why, fmt.Sprintf("node %d: %s", n.NodeID, why))
	}
	r := row{key: strconv.Itoa(int(n.NodeID)), cells: []string{
		strconv.Itoa(int(n.NodeID)), status, cmp.Or(n.Address, "?"), n.Rack, role, "-", "-", "-", "-", "-", "-", "",
	}, bad: make([]bool, 12)}
	r.bad[1] = status != "up"
	return r
}

// raft fills a node's quorum and traffic cells from its admin API.
func (c *clusterScreen) raft(r *row, q NodeState, now time.Time, rates map[string]int64) {
	contact := "-"
	if q.Raft.LastContact != nil {
		contact = now.Sub(*q.Raft.LastContact).Truncate(time.Millisecond).String() + " ago"
	}
	r.cells[5], r.cells[6], r.cells[7], r.cells[8] = q.Raft.Role, strconv.FormatUint(q.Raft.Term, 10), strconv.FormatUint(q.Raft.MetadataOffset, 10), contact
	r.bad[5] = q.Raft.Role == "candidate" || q.Raft.Role == "shutdown"
	cur := traffic{at: now, in: q.Throughput.BytesIn, out: q.Throughput.BytesOut}
	if p, ok := c.prev[q.NodeID]; ok && now.After(p.at) && cur.in >= p.in && cur.out >= p.out {
		dt := now.Sub(p.at).Seconds()
		inRate, outRate := float64(cur.in-p.in)/dt, float64(cur.out-p.out)/dt
		r.cells[9], r.cells[10] = byteSize(int64(inRate)), byteSize(int64(outRate))
		rates[r.key] = int64(inRate)
	}
	c.prev[q.NodeID] = cur
}

// setSummary sets the rows and the summary, a table row too, so that its
// counts are marked when they change.
func (c *clusterScreen) setSummary(rows []row, st ClusterState, down int, now time.Time) {
	o := st.Overview
	brokers := strconv.Itoa(len(rows) - down)
	if down > 0 {
		brokers += " up, " + strconv.Itoa(down) + " down"
	}
	all := append([]row{{key: "summary", cells: []string{
		brokers, strconv.Itoa(o.Topics), strconv.Itoa(o.Partitions),
		strconv.Itoa(o.UnderReplicated), strconv.Itoa(o.Offline),
	}}}, rows...)
	c.last = c.last.mark(all, 8, 9, 10, 11) // times and rates move every refresh
	c.summary = all[0]
	c.brokers.setRows(all[1:])
	switch {
	case st.Stale == "":
		c.staleSince = time.Time{}
	case c.staleSince.IsZero():
		c.staleSince = now
	}
}

func (c *clusterScreen) view(s Styles, width, height int) string {
	if c.st == nil {
		return s.Dim.Render("reading the cluster's metadata…")
	}
	o := c.st.Overview
	labels := []string{"brokers", "topics", "partitions", "under-replicated", "offline"}
	var parts []string
	for i, l := range labels {
		v := c.summary.cells[i]
		st := s.Header
		switch {
		case c.st.Stale != "" && i >= 3:
			st = s.Dim
		case i == 0 && strings.Contains(v, "down"), (i == 3 || i == 4) && v != "0":
			st = s.Bad
		}
		if c.summary.changed[i] {
			v += "Δ"
		}
		parts = append(parts, l+" "+st.Render(v))
	}
	if c.st.Stale != "" {
		parts[len(parts)-1] += " " + s.Bad.Render("(stale "+c.now.Sub(c.staleSince).Truncate(time.Second).String()+")")
	}
	controller := "unknown"
	if o.Controller >= 0 {
		controller = strconv.Itoa(int(o.Controller))
	}
	info := []string{"controller " + s.Header.Render(controller), "cluster id " + o.ClusterID}
	if c.st.From >= 0 {
		info = append(info, fmt.Sprintf("metadata of node %d", c.st.From))
	}
	if o.TopicErrors > 0 {
		info = append(info, s.Bad.Render(fmt.Sprintf("%d topics unreadable", o.TopicErrors)))
	}
	lines := append(flow(parts, width), flow(info, width)...)
	if c.st.Stale != "" {
		lines = append(lines, s.Bad.Render("metadata stale since "+c.staleSince.Format("15:04:05")+": "+c.st.Stale))
	}
	for _, w := range c.why {
		lines = append(lines, s.Bad.Render(w))
	}
	return strings.Join(lines, "\n") + "\n\n" + c.brokers.view(s, width, height-len(lines)-1)
}

// flow joins parts with three spaces into lines of at most width cells,
// as many parts a line as fit.
func flow(parts []string, width int) []string {
	var lines []string
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case lipgloss.Width(cur)+3+lipgloss.Width(p) <= width:
			cur += "   " + p
		default:
			lines = append(lines, cur)
			cur = p
		}
	}
	return append(lines, cur)
}
