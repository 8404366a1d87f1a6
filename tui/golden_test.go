package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The golden files hold each screen's View() at 110×16, ANSI stripped,
// with the data of newFakeSource. go test ./tui -update rewrites them.

func TestGoldenCluster(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{})
	d.golden("cluster")
}

func TestGoldenTopics(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "topics"})
	d.golden("topics")
	d.press("j", "enter")
	d.golden("topic-partitions")
}

func TestGoldenGroups(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{Screen: "groups"})
	d.golden("groups")
	d.press("enter")
	// Two more refreshes in which the lag moves: the trend grows and the
	// changed values are marked.
	g := src.group["billing"]
	for _, lag := range []int64{18, 30} {
		g.Partitions[0].Lag, g.TotalLag = i64(lag), lag+15
		src.group["billing"] = g
		d.tick()
	}
	d.golden("group-lag")
}

func TestGoldenTransactions(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "txn", Readonly: true})
	d.golden("txn")
	d.press("enter")
	d.golden("txn-partitions")
	// An ending transaction: a marker written, one pending behind an
	// unavailable leader, one failed; then an ended one, all written.
	d.press("esc", "j", "j", "enter")
	d.golden("txn-markers")
	d.press("esc", "j", "enter")
	d.golden("txn-markers-complete")
}

func TestGoldenTransactionsNoAdminAPI(t *testing.T) {
	src := newFakeSource()
	src.noAdmin = true
	d := newDriver(t, src, Options{Screen: "txn", Readonly: true})
	d.press("j", "j", "enter")
	d.golden("txn-markers-no-admin")
}

func TestGoldenCleaner(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "cleaner"})
	d.golden("cleaner")
}

func TestGoldenCleanerNoAdminAPI(t *testing.T) {
	src := newFakeSource()
	src.noAdmin = true
	d := newDriver(t, src, Options{Screen: "cleaner"})
	d.golden("cleaner-no-admin")
}

func TestGoldenHelp(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{})
	d.press("?")
	d.golden("help")
}

func TestGoldenSegments(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{})
	d.press(":")
	d.typeText("seg orders/0")
	d.press("enter")
	d.golden("segments")
	d.press("j", "enter")
	d.golden("segment-index")
	d.press("j", "enter")
	d.golden("segment-batch")
	d.press("esc")
	if !strings.Contains(d.screen(), "offset index") {
		t.Fatalf("esc from the batch:\n%s", d.screen())
	}
}

func TestGoldenPartition(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{})
	d.send(tea.WindowSizeMsg{Width: 110, Height: 20}) // room for the timeline
	d.press(":")
	d.typeText("part orders/2")
	d.press("enter")
	d.golden("partition")
	src.noAdmin = true
	d.tick()
	d.golden("partition-no-admin")
}

func TestGoldenEvents(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "events"})
	d.golden("events")
}

func TestGoldenHanging(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "hanging"})
	d.golden("hanging")
	d.press("a")
	d.golden("hanging-confirm")
}

func TestGoldenConfigs(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{})
	d.press(":")
	d.typeText("configs orders")
	d.press("enter")
	d.golden("configs-topic")
	d.press(":")
	d.typeText("configs broker/1")
	d.press("enter")
	d.golden("configs-broker")
}

func TestGoldenTail(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{})
	d.press(":")
	d.typeText("tail orders")
	d.press("enter")
	d.golden("tail")
	d.press("enter")
	d.golden("tail-record")
	d.press("esc", "j", "enter")
	d.golden("tail-binary")
}
