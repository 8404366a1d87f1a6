package tui

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/nodeapi"
)

// clientsScreen is the client telemetry the nodes received (KIP-714):
// each client instance that asked a node for its subscription, and each
// metric it pushed with its value and age. A client that pushed nothing
// says whether it was asked for anything; a metric older than two of its
// client's push intervals is stale (the client stopped pushing, or lost
// its subscription), in red.
type clientsScreen struct {
	flat
	rows    table
	ready   bool
	noAdmin error // why there is no admin API to ask
}

func newClientsScreen() *clientsScreen {
	return &clientsScreen{rows: table{cols: []column{
		{title: "CLIENT-ID"}, {title: "METRIC"}, {title: "VALUE", right: true}, {title: "PUSHED", right: true},
		{title: "NODE"}, {title: "INSTANCE"}, {title: "SOFTWARE"},
	}}}
}

func (c *clientsScreen) name() string  { return "clients" }
func (c *clientsScreen) title() string { return "client telemetry" }
func (c *clientsScreen) list() *table  { return &c.rows }

func (c *clientsScreen) fetch() (string, fetchFunc) {
	return "", func(ctx context.Context, src Source) (any, error) { return src.Telemetry(ctx) }
}

func (c *clientsScreen) loaded(_ string, v any, err error, now time.Time) error {
	c.noAdmin = nil
	if errors.Is(err, ErrNoAdminAPI) {
		c.noAdmin, c.ready = err, true
		return nil // the screen says so
	}
	nodes, _ := v.([]NodeTelemetry)
	if nodes == nil && err != nil {
		return err
	}
	var rows []row
	for _, n := range nodes {
		if n.Error != "" {
			rows = append(rows, row{key: n.Addr, cells: []string{"?", n.Error, "", "", n.Addr, "", ""}, bad: []bool{1: true}})
			continue
		}
		for _, cl := range n.Telemetry.Clients {
			rows = append(rows, clientRows(n.Telemetry.NodeID, cl, now)...)
		}
	}
	c.rows.setRows(rows)
	c.ready = true
	return err
}

// clientRows are one client instance's rows: a metric each, or one
// saying why it pushed none.
func clientRows(node int32, cl nodeapi.TelemetryClient, now time.Time) []row {
	id := strconv.Itoa(int(node))
	software := strings.TrimSpace(cl.SoftwareName + " " + cl.SoftwareVersion)
	instance := cl.InstanceID
	if len(instance) > 8 {
		instance = instance[:8]
	}
	tail := []string{id, instance, software}
	if len(cl.Series) == 0 {
		why := "asked for no metrics: no kafka-client-metrics subscription matches it"
		if len(cl.Metrics) > 0 {
			why = "asked for " + strings.Join(cl.Metrics, ",") + " every " + (time.Duration(cl.PushIntervalMs) * time.Millisecond).String() + "; none pushed yet"
		}
		return []row{{key: id + "/" + cl.InstanceID, cells: append([]string{cl.ClientID, why, "", ""}, tail...), bad: make([]bool, 7)}}
	}
	stale := 2 * time.Duration(cl.PushIntervalMs) * time.Millisecond
	out := make([]row, 0, len(cl.Series))
	for _, s := range cl.Series {
		age := now.Sub(s.At)
		value := strconv.FormatFloat(s.Value, 'g', 6, 64)
		if s.Kind == "histogram" {
			value = strconv.FormatUint(s.Count, 10) + " obs, sum " + value
		}
		r := row{
			key:   id + "/" + cl.InstanceID + "/" + s.Name + s.Attrs,
			cells: append([]string{cl.ClientID, s.Name + s.Attrs, value, age.Truncate(time.Second).String() + " ago"}, tail...),
			bad:   make([]bool, 7),
		}
		r.bad[3] = age > stale
		out = append(out, r)
	}
	return out
}

func (c *clientsScreen) view(s Styles, width, height int) string {
	switch {
	case c.noAdmin != nil:
		return s.Bad.Render("No client telemetry: "+c.noAdmin.Error()+".") + "\n\n" +
			"This screen reads a klog node's admin API (GET /v1/telemetry).\n" + noAdminHelp + "\n" +
			"The other screens work against any Kafka-compatible cluster."
	case !c.ready:
		return s.Dim.Render("asking the nodes for client telemetry…")
	case len(c.rows.rows) == 0:
		return s.Dim.Render("No client asked for a telemetry subscription yet (KIP-714: Java clients and\n" +
			"librdkafka do by default). kafka-client-metrics --alter subscribes them.")
	}
	return c.rows.view(s, width, height)
}
