package nodeapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PathEvents is GET: the node's recent events (Events), oldest first.
// Query parameters:
//
//   - since=SEQ: only the events after sequence number SEQ (default 0:
//     every event the node holds).
//   - run=RUN: the run SEQ belongs to (Events.Run). When the node's run is
//     another one (it restarted), or SEQ is past its last event, the
//     answer starts from its oldest event and says Reset.
//   - wait=DURATION (e.g. 10s): when there is no event after SEQ, wait up
//     to DURATION for one (a long poll), at most MaxEventsWait; default 0,
//     answer at once.
//   - limit=N: at most N events, 1 to Capacity (default: all the node
//     holds); More says there are more.
const PathEvents = "/v1/events"

// MaxEventsWait bounds the wait of GET /v1/events; a longer one waits
// this long.
const MaxEventsWait = 30 * time.Second

// Kinds of Event.
const (
	EventISRShrink    = "isr_shrink"
	EventISRExpand    = "isr_expand"
	EventLeaderChange = "leader_change"
	EventSegmentRoll  = "segment_roll"
	EventCleaning     = "cleaning"
	EventRebalance    = "rebalance"
	// EventAuthorizationDenied: a request the authorizer denied, with
	// who, from where, the API, the resource and operation, and the rule
	// that decided.
	EventAuthorizationDenied = "authorization_denied"
	// EventAuthenticationFailed: a failed SASL login, with the user the
	// client claimed, from where, the listener, the mechanism, what the
	// client was told and why.
	EventAuthenticationFailed = "authentication_failed"
)

// Events is GET /v1/events. A node holds its last Capacity events
// (1024); older ones are dropped.
type Events struct {
	NodeID int32 `json:"node_id"`
	// Run identifies this run of the node: sequence numbers start at 1
	// with each.
	Run      string `json:"run"`
	Capacity int    `json:"capacity"`
	// FirstSeq and LastSeq are the sequence numbers of the oldest and
	// newest events the node holds (0 when none).
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	// Missed counts the events after since that the node dropped before
	// they were asked for: a gap before Events.
	Missed uint64 `json:"missed"`
	// More says limit cut the answer short: ask again since the last
	// event's Seq.
	More bool `json:"more,omitempty"`
	// Reset says since was of another run of the node (or past its last
	// event): the answer starts from its oldest event.
	Reset  bool    `json:"reset,omitempty"`
	Events []Event `json:"events"`
}

// Event is one thing a node saw happen.
type Event struct {
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	NodeID int32     `json:"node_id"`
	// Kind is one of the Event* constants: isr_shrink, isr_expand
	// (detail: old_isr, new_isr, removed or added, leader_epoch,
	// partition_epoch; told by the partition's leader), leader_change
	// (leader, old_leader, leader_epoch, role: leader, follower or none;
	// told by each replica), segment_roll (reason, old_base, new_base),
	// cleaning (trigger: cleaner or request, first_dirty, end,
	// bytes_removed, records_removed, segments_before, segments_after),
	// rebalance (group_protocol: classic or consumer, state, generation,
	// members, protocol, reason; told by the group's coordinator),
	// authorization_denied (principal, client_id, address, api,
	// operation, resource_type, resource_name, pattern_type, rule,
	// reason, acl), authentication_failed (principal, client_id,
	// address, listener, api, mechanism, error, reason). The last two
	// are coalesced: repeats=N says the event stands for N more of the
	// same, suppressed=N that a flood's N events before it were dropped.
	Kind string `json:"kind"`
	// Topic and Partition name the partition of a partition's event;
	// Partition is -1 for a group's.
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	Group     string `json:"group,omitempty"`
	// Detail holds the kind's fields: numbers, strings, booleans and
	// lists of broker ids.
	Detail map[string]any `json:"detail"`
}

// EventsQuery is the query of GET /v1/events.
type EventsQuery struct {
	Since uint64
	Run   string
	// Wait is the long poll's bound; the Client's timeout must exceed it.
	Wait  time.Duration
	Limit int
}

// Events is GET /v1/events.
func (c *Client) Events(ctx context.Context, q EventsQuery) (Events, error) {
	v := url.Values{}
	if q.Since > 0 {
		v.Set("since", strconv.FormatUint(q.Since, 10))
	}
	if q.Run != "" {
		v.Set("run", q.Run)
	}
	if q.Wait > 0 {
		v.Set("wait", q.Wait.String())
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out Events
	return out, c.call(ctx, http.MethodGet, PathEvents, v, &out)
}

// SortEvents orders events by time, then node and sequence number: the
// events of several nodes merged.
func SortEvents(evs []Event) {
	sort.SliceStable(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		if a.NodeID != b.NodeID {
			return a.NodeID < b.NodeID
		}
		return a.Seq < b.Seq
	})
}

// Subject is what the event is about: "group G", "topic/partition",
// "topic T" (a topic's, an authorization denied), another resource
// denied ("cluster kafka-cluster", "transactional_id T"), the principal
// of a failed login ("login User:U"), or "-".
func (e Event) Subject() string {
	switch {
	case e.Kind == EventAuthenticationFailed:
		if p, _ := e.Detail["principal"].(string); p != "" {
			return "login " + p
		}
		return "login"
	case e.Kind == EventAuthorizationDenied && e.Group == "" && e.Topic == "":
		rt, _ := e.Detail["resource_type"].(string)
		name, _ := e.Detail["resource_name"].(string)
		return strings.TrimSpace(strings.ToLower(rt) + " " + name)
	case e.Group != "":
		return "group " + e.Group
	case e.Topic != "" && e.Partition < 0:
		return "topic " + e.Topic
	case e.Topic != "":
		return e.Topic + "/" + strconv.Itoa(int(e.Partition))
	}
	return "-"
}

// leadingDetail are the details of a kind shown first, in this order:
// what a developer looks for in a denial or a failed login.
var leadingDetail = map[string][]string{
	EventAuthorizationDenied:  {"principal", "operation", "resource_type", "resource_name", "rule", "repeats", "suppressed", "client_id", "address", "api"},
	EventAuthenticationFailed: {"principal", "mechanism", "reason", "repeats", "suppressed", "client_id", "address", "listener"},
}

// DetailText renders the event's details as key=value: a denial's or a
// failed login's leading ones first (leadingDetail), the others in key
// order; lists as [1,2,3], strings quoted when they hold a space.
func (e Event) DetailText() string {
	lead := leadingDetail[e.Kind]
	keys := make([]string, 0, len(e.Detail))
	for k := range e.Detail {
		if !slices.Contains(lead, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var first []string
	for _, k := range lead {
		if _, ok := e.Detail[k]; ok {
			first = append(first, k)
		}
	}
	keys = append(first, keys...)
	fields := make([]string, len(keys))
	for i, k := range keys {
		fields[i] = k + "=" + detailValue(e.Detail[k])
	}
	return strings.Join(fields, " ")
}

func detailValue(v any) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = detailValue(x)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		if v == "" || strings.ContainsAny(v, " \t\"=") {
			return strconv.Quote(v)
		}
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return "-"
	default:
		return fmt.Sprint(v)
	}
}
