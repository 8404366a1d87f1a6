package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// cleanerScreen is the log cleaner's state of every compacted replica on
// every node, from the admin API: how dirty each log is against the ratio
// at which the cleaner takes it, its checkpoint, and what the last pass
// did.
type cleanerScreen struct {
	flat
	parts   table
	last    deltas
	ready   bool
	noAdmin error // why there is no admin API to ask
}

func newCleanerScreen() *cleanerScreen {
	return &cleanerScreen{parts: table{cols: []column{
		{title: "NODE"}, {title: "TOPIC"}, {title: "P", right: true}, {title: "DIRTY", right: true},
		{title: "MIN-DIRTY", right: true}, {title: "CHECKPOINT", right: true}, {title: "UNCLEANABLE", right: true},
		{title: "LAST-RUN", right: true}, {title: "RUNS", right: true}, {title: "REMOVED", right: true}, {title: "ERROR"},
	}}}
}

func (c *cleanerScreen) name() string  { return "cleaner" }
func (c *cleanerScreen) title() string { return "compaction" }
func (c *cleanerScreen) list() *table  { return &c.parts }

func (c *cleanerScreen) setInternal(show bool) { c.parts.setInternal(show) }

func (c *cleanerScreen) fetch() (string, fetchFunc) {
	return "", func(ctx context.Context, src Source) (any, error) { return src.Cleaner(ctx) }
}

func (c *cleanerScreen) loaded(_ string, v any, err error, now time.Time) error {
	c.noAdmin = nil
	if errors.Is(err, ErrNoAdminAPI) {
		c.noAdmin, c.ready = err, true
		return nil // the screen says so
	}
	nodes, _ := v.([]NodeCleaner)
	if nodes == nil && err != nil {
		return err
	}
	var rows []row
	for _, n := range nodes {
		if n.Error != "" {
			rows = append(rows, row{key: n.Addr, cells: []string{"?", "", "", "", "", "", "", "", "", "", n.Error}, bad: []bool{10: true}})
			continue
		}
		node := strconv.Itoa(int(n.Cleaner.NodeID))
		for _, p := range n.Cleaner.Partitions {
			lastRun := "never"
			if p.LastRun != nil {
				lastRun = now.Sub(*p.LastRun).Truncate(time.Second).String() + " ago"
			}
			r := row{
				key: node + "/" + p.Topic + "/" + strconv.Itoa(int(p.Partition)),
				cells: []string{
					node, p.Topic, strconv.Itoa(int(p.Partition)),
					fmt.Sprintf("%.2f", p.DirtyRatio), fmt.Sprintf("%.2f", p.MinCleanableDirtyRatio),
					strconv.FormatInt(p.FirstDirtyOffset, 10), strconv.FormatInt(p.FirstUncleanableOffset, 10),
					lastRun, strconv.FormatInt(p.Runs, 10),
					fmt.Sprintf("%d rec %s", p.RecordsRemoved, byteSize(p.BytesRemoved)), "",
				},
				bad:      make([]bool, 11),
				internal: internalTopic(p.Topic),
			}
			r.bad[3] = p.DirtyRatio > p.MinCleanableDirtyRatio // the cleaner should take it
			rows = append(rows, r)
		}
	}
	c.last = c.last.mark(rows, 7) // last run, "ago"
	c.parts.setRows(rows)
	c.ready = true
	return err
}

// byteSize renders a byte count with a binary unit.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func (c *cleanerScreen) view(s Styles, width, height int) string {
	switch {
	case c.noAdmin != nil:
		return s.Bad.Render("No compaction state: "+c.noAdmin.Error()+".") + "\n\n" +
			"This screen reads a klog node's admin API (GET /v1/cleaner).\n" + noAdminHelp + "\n" +
			"The other screens work against any Kafka-compatible cluster."
	case !c.ready:
		return s.Dim.Render("asking the nodes' cleaners…")
	}
	return c.parts.view(s, width, height)
}
