package tui

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/klogdev/klog/nodeapi"
)

// eventsScreen is the timeline of the nodes' recent events, from the admin
// API, newest first: ISR shrinks and expansions, leader changes, segment
// rolls, cleanings, rebalances, denied requests and failed logins (what
// klog events --follow prints), the shrinks, denials and failed logins
// marked.
type eventsScreen struct {
	flat
	events  table
	ready   bool
	noAdmin error
}

func newEventsScreen() *eventsScreen {
	return &eventsScreen{events: table{cols: []column{
		{title: "TIME"}, {title: "NODE", right: true}, {title: "KIND"}, {title: "SUBJECT"}, {title: "DETAIL"},
	}}}
}

func (e *eventsScreen) name() string  { return "events" }
func (e *eventsScreen) title() string { return "events" }
func (e *eventsScreen) list() *table  { return &e.events }

func (e *eventsScreen) setInternal(show bool) { e.events.setInternal(show) }

func (e *eventsScreen) fetch() (string, fetchFunc) {
	return "", func(ctx context.Context, src Source) (any, error) { return src.Events(ctx) }
}

func (e *eventsScreen) loaded(_ string, v any, err error, _ time.Time) error {
	e.noAdmin = nil
	if errors.Is(err, ErrNoAdminAPI) {
		e.noAdmin, e.ready = err, true
		return nil
	}
	evs, _ := v.([]nodeapi.Event)
	if evs == nil && err != nil {
		return err
	}
	rows := make([]row, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		r := row{key: strconv.Itoa(int(ev.NodeID)) + "/" + strconv.FormatUint(ev.Seq, 10), cells: []string{
			ev.Time.UTC().Format("15:04:05.000"), strconv.Itoa(int(ev.NodeID)), ev.Kind, ev.Subject(), ev.DetailText(),
		}, bad: make([]bool, 5), internal: internalTopic(ev.Topic)}
		r.bad[2] = ev.Kind == nodeapi.EventISRShrink || ev.Kind == nodeapi.EventAuthorizationDenied || ev.Kind == nodeapi.EventAuthenticationFailed
		rows = append(rows, r)
	}
	e.events.setRows(rows)
	e.ready = true
	return err
}

// noAdminHelp says where the admin API screens find a node's admin API.
const noAdminHelp = "Each klog node advertises its admin API (broker config\n" +
	"klog.admin.advertised.url); none did: the cluster is not klog, or its nodes\n" +
	"run with --admin-listen off. Give an address with --admin or $KLOG_ADMIN."

func (e *eventsScreen) view(s Styles, width, height int) string {
	switch {
	case e.noAdmin != nil:
		return s.Bad.Render("No events: "+e.noAdmin.Error()+".") + "\n\n" +
			"This screen reads a klog node's admin API (GET /v1/events).\n" + noAdminHelp
	case !e.ready:
		return s.Dim.Render("asking the nodes for their events…")
	}
	return e.events.view(s, width, height)
}
