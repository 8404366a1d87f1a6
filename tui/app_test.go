package tui

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestRouting: the command line switches screens by name or unique
// prefix, tab completes, an unknown name is an error; enter and esc drill
// into a topic and back.
func TestRouting(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{})
	if got := d.m.screen().name(); got != "cluster" {
		t.Fatalf("first screen %q", got)
	}
	d.press(":")
	d.typeText("to")
	d.press("tab")
	if d.m.input != "topics" {
		t.Errorf("tab completed %q to %q, want topics", "to", d.m.input)
	}
	d.press("enter")
	if got := d.m.screen().name(); got != "topics" || src.count("topics") != 1 {
		t.Fatalf("after :topics on %q, %d topic listings", got, src.count("topics"))
	}
	// A unique prefix is enough; an ambiguous or unknown one is not.
	d.press(":")
	d.typeText("g")
	d.press("enter")
	if got := d.m.screen().name(); got != "groups" {
		t.Errorf(":g went to %q", got)
	}
	d.press(":")
	d.typeText("c")
	if s := d.screen(); !strings.Contains(s, ":c  cluster cleaner") {
		t.Errorf("command line does not offer cluster and cleaner:\n%s", s)
	}
	d.press("enter")
	if d.m.err == nil || !strings.Contains(d.m.err.Error(), "ambiguous") || d.m.screen().name() != "groups" {
		t.Errorf(":c: err %v, screen %q", d.m.err, d.m.screen().name())
	}
	d.press(":")
	d.typeText("nope")
	d.press("enter")
	if d.m.err == nil || !strings.Contains(d.screen(), `no screen "nope"`) {
		t.Errorf(":nope: err %v", d.m.err)
	}
	d.press("esc") // clears the error
	if d.m.err != nil {
		t.Errorf("esc left the error %v", d.m.err)
	}
	// esc closes the command line without running it.
	d.press(":")
	d.typeText("txn")
	d.press("esc")
	if d.m.screen().name() != "groups" || d.m.mode != modeNormal {
		t.Errorf("esc ran the command line: screen %q, mode %d", d.m.screen().name(), d.m.mode)
	}

	d.press(":")
	d.typeText("topics")
	d.press("enter", "G", "k") // the last, then one up: orders
	d.press("enter")
	if got := d.m.screen().title(); got != "topics › orders" || src.count("topic") != 1 {
		t.Fatalf("enter on orders: title %q, %d describes", got, src.count("topic"))
	}
	d.press("esc")
	if got := d.m.screen().title(); got != "topics" {
		t.Fatalf("esc: title %q", got)
	}
	if k, _ := d.m.screen().list().selected(); k != "orders" {
		t.Errorf("back on the list, the cursor is on %q, want orders", k)
	}
	d.press(":")
	d.typeText("quit")
	d.press("enter")
	if !d.quit {
		t.Error(":quit did not quit")
	}
}

// TestMoveKeys: j/k move one row, g/G to the ends, never past them.
func TestMoveKeys(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "topics"})
	sel := func() string { k, _ := d.m.screen().list().selected(); return k }
	for _, step := range []struct{ key, want string }{
		{"j", "payments"}, {"j", "payments"}, {"g", "orders"},
		{"k", "orders"}, {"G", "payments"}, {"k", "orders"},
	} {
		d.press(step.key)
		if got := sel(); got != step.want {
			t.Fatalf("after %s on %s, want %s", step.key, got, step.want)
		}
	}
}

// TestFilter: / filters as it is typed, enter keeps the filter, esc
// clears it; the cursor stays on a row the filter keeps.
func TestFilter(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "topics"})
	d.press("/")
	d.typeText("pay")
	if vis := d.m.screen().list().visible(); len(vis) != 1 || vis[0].key != "payments" {
		t.Fatalf("/pay shows %v", vis)
	}
	d.press("enter")
	if d.m.mode != modeNormal || !strings.Contains(d.screen(), "\n/pay\n") {
		t.Errorf("enter: mode %d, status line:\n%s", d.m.mode, d.screen())
	}
	d.press("/", "backspace", "backspace", "backspace")
	d.typeText("zzz")
	if s := d.screen(); !strings.Contains(s, "no row matches /zzz") {
		t.Errorf("/zzz:\n%s", s)
	}
	d.press("esc")
	if n := len(d.m.screen().list().visible()); n != 2 {
		t.Errorf("esc left %d rows shown, want 2 (the internal topic hidden)", n)
	}
	// esc in normal mode clears a kept filter too.
	d.press("/")
	d.typeText("ord")
	d.press("enter", "esc")
	if f := d.m.screen().list().filter; f != "" {
		t.Errorf("esc kept the filter %q", f)
	}
}

// TestPause: p stops the live refresh (the timer then does nothing) and
// shows it; p again refreshes at once and rearms the timer.
func TestPause(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{})
	if src.count("overview") != 1 || len(d.ticks) != 1 {
		t.Fatalf("start: %d fetches, %d timers", src.count("overview"), len(d.ticks))
	}
	d.tick()
	if src.count("overview") != 2 || len(d.ticks) != 2 {
		t.Fatalf("a tick: %d fetches, %d timers", src.count("overview"), len(d.ticks))
	}
	if !strings.Contains(d.screen(), "refresh 2s") {
		t.Errorf("the refresh interval is not shown:\n%s", d.screen())
	}
	d.press("p")
	if !strings.Contains(d.screen(), "paused") {
		t.Errorf("pause is not shown:\n%s", d.screen())
	}
	d.tick()
	if src.count("overview") != 2 {
		t.Errorf("paused, a tick fetched: %d fetches", src.count("overview"))
	}
	d.press("r") // one refresh by hand, still paused
	if src.count("overview") != 3 || len(d.ticks) != 2 {
		t.Errorf("r while paused: %d fetches, %d timers", src.count("overview"), len(d.ticks))
	}
	d.press("p")
	if src.count("overview") != 4 || len(d.ticks) != 3 || strings.Contains(d.screen(), "paused") {
		t.Errorf("unpaused: %d fetches, %d timers\n%s", src.count("overview"), len(d.ticks), d.screen())
	}
	// A timer armed before the pause does nothing after it.
	d.send(d.ticks[0])
	if src.count("overview") != 4 {
		t.Errorf("a stale timer fetched: %d fetches", src.count("overview"))
	}
}

// TestNoOverlappingPolls: while a fetch is in flight, neither the timer,
// nor r, nor a screen switch starts another; the one asked for runs when
// the first answers, for the screen shown then.
func TestNoOverlappingPolls(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{})
	// Take the next fetch's command without running it: it is in flight.
	_, pending := d.m.Update(d.ticks[len(d.ticks)-1])
	if pending == nil || !d.m.inFlight {
		t.Fatal("the tick started no fetch")
	}
	for _, msg := range []any{d.ticks[len(d.ticks)-1], keyMsg("r")} {
		if _, cmd := d.m.Update(msg); cmd != nil {
			t.Fatalf("%T while a fetch is in flight returned a command", msg)
		}
	}
	d.press(":")
	d.typeText("topics")
	_, cmd := d.m.Update(keyMsg("enter"))
	if cmd != nil {
		t.Fatal("a screen switch while a fetch is in flight returned a command")
	}
	if src.count("overview") != 1 || src.count("topics") != 0 {
		t.Fatalf("fetches ran: %v", src.calls)
	}
	d.run(pending) // the overview answers; the topics are read next
	if src.count("overview") != 2 || src.count("topics") != 1 {
		t.Errorf("after the answer: %v", src.calls)
	}
	if !strings.Contains(d.screen(), "payments") {
		t.Errorf("the topics screen shows no topics:\n%s", d.screen())
	}
	if src.overlaps != 0 {
		t.Errorf("%d fetches overlapped", src.overlaps)
	}
}

// TestChangedValuesMarked: a value that changed since the last refresh is
// marked, and only until the next refresh.
func TestChangedValuesMarked(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{Screen: "topics"})
	if strings.Contains(d.screen(), "Δ") {
		t.Fatalf("first load marked values:\n%s", d.screen())
	}
	src.topics[2].Partitions = 4
	d.tick()
	if !strings.Contains(d.screen(), " 4Δ") {
		t.Errorf("the new partition count is not marked:\n%s", d.screen())
	}
	d.tick()
	if strings.Contains(d.screen(), "Δ") {
		t.Errorf("the mark outlived the next refresh:\n%s", d.screen())
	}
}

// TestHelpAndQuit: ? shows every key, any key closes it, q quits.
func TestHelpAndQuit(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{})
	d.press("?")
	if !strings.Contains(d.screen(), "screens: cluster topics groups txn hanging cleaner") {
		t.Fatalf("? shows:\n%s", d.screen())
	}
	d.press("j")
	if d.m.showHelp || d.quit {
		t.Fatal("j did not close the help")
	}
	d.press("q")
	if !d.quit {
		t.Fatal("q did not quit")
	}
}

// TestDrillWhileInFlight: enter while the list is being read waits for
// that answer, then reads the row opened; the list's answer does not
// replace the partitions shown.
func TestDrillWhileInFlight(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{Screen: "topics"})
	_, pending := d.m.Update(d.ticks[len(d.ticks)-1])
	if _, cmd := d.m.Update(keyMsg("enter")); cmd != nil {
		t.Fatal("enter while a fetch is in flight returned a command")
	}
	if s := d.screen(); !strings.Contains(s, "describing orders…") {
		t.Errorf("before the answer:\n%s", s)
	}
	d.run(pending)
	if src.count("topics") != 2 || src.count("topic") != 1 {
		t.Errorf("fetches: %v", src.calls)
	}
	if s := d.screen(); !strings.Contains(s, "topics › orders") || !strings.Contains(s, "LOG-START") {
		t.Errorf("after the answers:\n%s", s)
	}
}

// TestCommandArguments: :seg takes TOPIC/PARTITION and says what it wants
// without one; a screen without arguments refuses one; the segments
// screen asks its Source for the partition named, and after esc from a
// segment's index shows the segments again.
func TestCommandArguments(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{})
	command := func(text string) {
		d.press(":")
		d.typeText(text)
		d.press("enter")
	}
	command("seg")
	if d.m.screen().name() != "seg" || !strings.Contains(d.screen(), "Which partition? Type :seg TOPIC/PARTITION") || src.count("segments") != 0 {
		t.Fatalf(":seg alone:\n%s", d.screen())
	}
	command("seg orders")
	if d.m.err == nil || !strings.Contains(d.m.err.Error(), `seg "orders": want TOPIC/PARTITION`) {
		t.Fatalf(":seg orders: err %v", d.m.err)
	}
	command("topics orders")
	if d.m.err == nil || d.m.err.Error() != "screen topics takes no argument" || d.m.screen().name() != "seg" {
		t.Fatalf(":topics orders: err %v, screen %s", d.m.err, d.m.screen().name())
	}
	command("seg orders/7")
	if d.m.err == nil || !strings.Contains(d.m.err.Error(), "no node has a replica of orders/7") {
		t.Fatalf(":seg orders/7: err %v", d.m.err)
	}
	command("seg orders/0")
	if d.m.err != nil || !strings.Contains(d.screen(), "3 segments") {
		t.Fatalf(":seg orders/0: err %v\n%s", d.m.err, d.screen())
	}
	d.press("G", "enter")
	if src.count("index") != 2 || !strings.Contains(d.screen(), "› 100 offset index") { // offset and time
		t.Fatalf("enter on the last segment: %d index reads\n%s", src.count("index"), d.screen())
	}
	d.press("esc")
	if !strings.Contains(d.screen(), "3 segments") {
		t.Fatalf("esc:\n%s", d.screen())
	}
}

// TestAbortAsksFirst: a on a hanging transaction asks, y aborts that one
// and refreshes, any other key drops it; --readonly refuses; a screen
// without an action says so.
func TestAbortAsksFirst(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{Screen: "hanging"})
	d.press("j", "a")
	if d.m.mode != modeConfirm || !strings.Contains(d.screen(), "abort the transaction of producer 4002 (epoch 7) on payments/0 starting at offset 12? y to confirm") {
		t.Fatalf("a:\n%s", d.screen())
	}
	d.press("n")
	if len(src.aborted) != 0 || !strings.Contains(d.screen(), "not done: abort the transaction of producer 4002") {
		t.Fatalf("n: aborted %v\n%s", src.aborted, d.screen())
	}
	before := src.count("hanging")
	d.press("a", "y")
	if len(src.aborted) != 1 || src.aborted[0].ProducerID != 4002 || src.aborted[0].StartOffset != 12 ||
		!strings.Contains(d.screen(), "done: abort the transaction of producer 4002") || src.count("hanging") != before+1 {
		t.Fatalf("y: aborted %+v, %d refreshes\n%s", src.aborted, src.count("hanging")-before, d.screen())
	}
	src.abortErr = errors.New("COORDINATOR_FENCED")
	d.press("a", "y")
	if !strings.Contains(d.screen(), "failed: abort the transaction of producer 4002 (epoch 7) on payments/0 starting at offset 12: COORDINATOR_FEN") {
		t.Fatalf("failed abort:\n%s", d.screen())
	}

	ro := newDriver(t, src, Options{Screen: "hanging", Readonly: true})
	ro.press("a")
	if ro.m.mode == modeConfirm || ro.m.err == nil || !strings.HasPrefix(ro.m.err.Error(), "readonly: not allowed to abort the transaction of producer 3999") {
		t.Fatalf("readonly a: mode %v err %v", ro.m.mode, ro.m.err)
	}
	other := newDriver(t, src, Options{Screen: "topics"})
	other.press("a")
	if other.m.err == nil || other.m.err.Error() != "screen topics has no action" {
		t.Fatalf("a on topics: %v", other.m.err)
	}
}

// TestCatchUp: the time a group takes to read its lag, at the rate the
// lag moved over the refreshes seen.
func TestCatchUp(t *testing.T) {
	at := func(s int) time.Time { return clock.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		points []lagPoint
		want   string
	}{
		{nil, ""},
		{[]lagPoint{{at(0), 10}}, ""},
		{[]lagPoint{{at(0), 10}, {at(0), 5}}, ""},
		{[]lagPoint{{at(0), 100}, {at(5), 50}, {at(10), 0}}, "caught up"},
		{[]lagPoint{{at(0), 100}, {at(10), 60}}, "catching up in ~15s (4.0/s)"},
		{[]lagPoint{{at(0), 100}, {at(10), 100}}, "not catching up (lag +0.0/s)"},
		{[]lagPoint{{at(0), 100}, {at(4), 110}}, "not catching up (lag +2.5/s)"},
	} {
		if got := catchUp(tc.points); got != tc.want {
			t.Errorf("catchUp(%v) = %q, want %q", tc.points, got, tc.want)
		}
	}
}

// TestClusterRates: the cluster screen turns each node's traffic counters
// into rates between refreshes, with a trend.
func TestClusterRates(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{})
	d.send(tea.WindowSizeMsg{Width: 160, Height: 16})
	now := clock
	d.m.now = func() time.Time { return now }
	for range 3 {
		now = now.Add(2 * time.Second)
		d.tick()
	}
	// 2048 bytes in a refresh (2 s): 1 KiB/s; out grows by (2n-1) KiB.
	if s := d.screen(); !regexp.MustCompile(`127\.0\.0\.1:9092 .* follower .* 1\.0 KiB +3\.5 KiB +███`).MatchString(s) {
		t.Fatalf("rates:\n%s", s)
	}
}

// TestInternalToggle: the internal topics' rows are hidden on topics,
// cleaner and events until i shows them, after the user's; i again hides
// them.
func TestInternalToggle(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "topics"})
	keys := func() []string {
		var out []string
		for _, r := range d.m.screen().list().visible() {
			out = append(out, r.key)
		}
		return out
	}
	if got := keys(); strings.Join(got, " ") != "orders payments" || !strings.Contains(d.screen(), "+ 1 rows of internal topics, hidden (i shows them)") {
		t.Fatalf("topics before i: %v\n%s", got, d.screen())
	}
	d.press("i")
	if got := keys(); strings.Join(got, " ") != "orders payments __consumer_offsets" || strings.Contains(d.screen(), "hidden (i shows them)") {
		t.Fatalf("topics after i: %v\n%s", got, d.screen())
	}
	for _, scr := range []string{"cleaner", "events"} {
		d.press(":")
		d.typeText(scr)
		d.press("enter")
		if !strings.Contains(d.screen(), "__consumer_offsets") {
			t.Errorf("%s after i shows no internal row:\n%s", scr, d.screen())
		}
		d.press("i")
		if s := d.screen(); strings.Contains(s, "__consumer_offsets") || !strings.Contains(s, "+ 1 rows of internal topics") {
			t.Errorf("%s after i again:\n%s", scr, s)
		}
		d.press("i")
	}
}
