package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/inspect"
)

// clusterScreen is the cluster overview: brokers, the controller, and how
// many partitions are under-replicated or offline; on klog, each node's
// part in the metadata quorum from its admin API (Raft role, term, the
// metadata offset it serves, when it last heard from the leader).
type clusterScreen struct {
	flat
	brokers table
	last    deltas
	summary row
	o       *inspect.ClusterOverview
	// prev is each node's traffic counters at the last refresh, trend
	// the bytes-in rates since the screen opened.
	prev  map[int32]traffic
	trend history
}

// traffic is a node's counters read at one time.
type traffic struct {
	at      time.Time
	in, out uint64
}

func newClusterScreen() *clusterScreen {
	return &clusterScreen{brokers: table{cols: []column{
		{title: "ID", right: true}, {title: "ADDRESS"}, {title: "RACK"}, {title: "ROLE"},
		{title: "RAFT"}, {title: "TERM", right: true}, {title: "METADATA", right: true}, {title: "LEADER-CONTACT", right: true},
		{title: "IN/S", right: true}, {title: "OUT/S", right: true}, {title: "IN TREND"},
	}}, prev: map[int32]traffic{}}
}

func (c *clusterScreen) name() string  { return "cluster" }
func (c *clusterScreen) title() string { return "cluster" }
func (c *clusterScreen) list() *table  { return &c.brokers }

func (c *clusterScreen) fetch() (string, fetchFunc) {
	return "", func(ctx context.Context, src Source) (any, error) {
		o, err := src.Overview(ctx)
		if err != nil {
			return nil, err
		}
		q, _ := src.Nodes(ctx) // none without the admin API
		return clusterData{o, q}, nil
	}
}

// clusterData is what the cluster screen reads.
type clusterData struct {
	overview inspect.ClusterOverview
	quorum   []NodeState
}

func (c *clusterScreen) loaded(_ string, v any, err error, now time.Time) error {
	if err != nil {
		return err
	}
	d := v.(clusterData)
	o := d.overview
	rafts := map[int32]NodeState{}
	for _, q := range d.quorum {
		rafts[q.NodeID] = q
	}
	var rows []row
	rates := map[string]int64{}
	for _, b := range o.Brokers {
		role := ""
		if b.Controller {
			role = "controller"
		}
		r := row{key: strconv.Itoa(int(b.NodeID)), cells: []string{strconv.Itoa(int(b.NodeID)), b.Address, b.Rack, role, "-", "-", "-", "-", "-", "-", ""}, bad: make([]bool, 11)}
		if q, ok := rafts[b.NodeID]; ok {
			contact := "-"
			if q.Raft.LastContact != nil {
				contact = now.Sub(*q.Raft.LastContact).Truncate(time.Millisecond).String() + " ago"
			}
			r.cells[4], r.cells[5], r.cells[6], r.cells[7] = q.Raft.Role, strconv.FormatUint(q.Raft.Term, 10), strconv.FormatUint(q.Raft.MetadataOffset, 10), contact
			r.bad[4] = q.Raft.Role == "candidate" || q.Raft.Role == "shutdown"
			cur := traffic{at: now, in: q.Throughput.BytesIn, out: q.Throughput.BytesOut}
			if p, ok := c.prev[b.NodeID]; ok && now.After(p.at) && cur.in >= p.in && cur.out >= p.out {
				dt := now.Sub(p.at).Seconds()
				inRate, outRate := float64(cur.in-p.in)/dt, float64(cur.out-p.out)/dt
				r.cells[8], r.cells[9] = byteSize(int64(inRate)), byteSize(int64(outRate))
				rates[r.key] = int64(inRate)
			}
			c.prev[b.NodeID] = cur
		}
		rows = append(rows, r)
	}
	c.trend = c.trend.add(rates)
	for i := range rows {
		rows[i].cells[10] = sparkline(c.trend[rows[i].key])
	}
	// The summary is a table too, so that its counts are marked when
	// they change.
	all := append([]row{{key: "summary", cells: []string{
		strconv.Itoa(len(o.Brokers)), strconv.Itoa(o.Topics), strconv.Itoa(o.Partitions),
		strconv.Itoa(o.UnderReplicated), strconv.Itoa(o.Offline),
	}}}, rows...)
	c.last = c.last.mark(all, 7, 8, 9, 10) // times and rates move every refresh
	c.summary = all[0]
	c.brokers.setRows(all[1:])
	c.o = &o
	return nil
}

func (c *clusterScreen) view(s Styles, width, height int) string {
	if c.o == nil {
		return s.Dim.Render("reading the cluster's metadata…")
	}
	o := c.o
	var b strings.Builder
	labels := []string{"brokers", "topics", "partitions", "under-replicated", "offline"}
	var parts []string
	for i, l := range labels {
		v := c.summary.cells[i]
		st := s.Header
		if (i == 3 || i == 4) && v != "0" {
			st = s.Bad
		}
		if c.summary.changed[i] {
			v += "Δ"
		}
		parts = append(parts, l+" "+st.Render(v))
	}
	b.WriteString(strings.Join(parts, "   "))
	b.WriteString("\n")
	controller := "unknown"
	if o.Controller >= 0 {
		controller = strconv.Itoa(int(o.Controller))
	}
	fmt.Fprintf(&b, "controller %s   cluster id %s", s.Header.Render(controller), o.ClusterID)
	if o.TopicErrors > 0 {
		b.WriteString("   " + s.Bad.Render(fmt.Sprintf("%d topics unreadable", o.TopicErrors)))
	}
	b.WriteString("\n\n")
	b.WriteString(c.brokers.view(s, height-3))
	return b.String()
}
