package tui

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/twmb/franz-go/pkg/kerr"
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
	d.press("enter")
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

// The screens that read only the admin API say so when there is none.
func TestGoldenNoAdminAPI(t *testing.T) {
	for _, screen := range []string{"cleaner", "clients"} {
		src := newFakeSource()
		src.noAdmin = true
		d := newDriver(t, src, Options{Screen: screen})
		d.golden(screen + "-no-admin")
	}
}

func TestGoldenClients(t *testing.T) {
	d := newDriver(t, newFakeSource(), Options{Screen: "clients"})
	d.send(tea.WindowSizeMsg{Width: 160, Height: 16})
	d.golden("clients")
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

// TestGoldenSecurity shows the users, ACLs (by principal, the denials
// marked) and client quotas, and the ACL screen of a cluster without an
// authorizer.
func TestGoldenSecurity(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{Screen: "users"})
	d.golden("users")
	d.press(":")
	d.typeText("acls")
	d.press("enter")
	d.golden("acls")
	d.press(":")
	d.typeText("quotas")
	d.press("enter")
	d.golden("quotas")
	src.aclsErr = errors.New(kerr.SecurityDisabled.Error())
	d.press(":")
	d.typeText("acls")
	d.press("enter")
	d.golden("acls-no-authorizer")
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

// downNode makes node 2 of src down: the controller fenced it, it does
// not answer, the metadata no longer lists it.
func downNode(src *fakeSource) {
	st := &src.cluster
	st.Overview.Brokers = st.Overview.Brokers[:2]
	st.Overview.UnderReplicated = 20
	n := &st.Nodes[2]
	n.Reachable, n.Listed, n.Fenced = false, false, true
	n.Err, n.LastFetch = "dial tcp 127.0.0.1:9094: connect: connection refused", clock.Add(-12*time.Second)
}

// TestGoldenClusterNodeDown: a node the controller fenced and that does
// not answer stays listed, down since its last fetch of the metadata log;
// one gone from every answer stays listed, down since the refresh that
// missed it.
func TestGoldenClusterNodeDown(t *testing.T) {
	src := newFakeSource()
	d := newDriver(t, src, Options{})
	downNode(src)
	d.tick()
	d.golden("cluster-node-down")
	src.cluster.Nodes = src.cluster.Nodes[:2]
	d.m.now = func() time.Time { return clock.Add(4 * time.Second) }
	d.tick()
	if s := d.screen(); !strings.Contains(s, "down since 00:59:48") || !strings.Contains(s, "node 2: gone from every node's answer") || !strings.Contains(s, "brokers 2 up, 1 down") {
		t.Errorf("a node gone from every answer:\n%s", s)
	}
}

// TestGoldenClusterStale: with the metadata quorum lost the counts are
// marked stale, since when it was first seen lost; a refresh that fails
// keeps the last values, the header saying they are stale since the last
// good read, the error bar why.
func TestGoldenClusterStale(t *testing.T) {
	src := newFakeSource()
	downNode(src)
	src.cluster.Stale = "metadata quorum lost: no metadata quorum leader"
	d := newDriver(t, src, Options{})
	d.golden("cluster-quorum-lost")
	src.clusterErr = errors.New("no node answered: dial tcp 127.0.0.1:9092: connect: connection refused")
	d.m.now = func() time.Time { return clock.Add(12 * time.Second) }
	d.tick()
	d.golden("cluster-refresh-failed")
	src.clusterErr, src.cluster.Stale = nil, ""
	d.tick()
	if s := d.screen(); strings.Contains(s, "stale") || !strings.Contains(s, "at 01:00:12") {
		t.Errorf("after a good read:\n%s", s)
	}
}

// TestGolden80Columns: at 80 columns a table too wide keeps its first
// column and scrolls the others sideways with ←/→, saying how many are
// out of sight on each side.
func TestGolden80Columns(t *testing.T) {
	src := newFakeSource()
	downNode(src)
	d := newDriver(t, src, Options{})
	d.send(tea.WindowSizeMsg{Width: 80, Height: 12})
	d.golden("cluster-80")
	d.send(tea.KeyPressMsg{Code: tea.KeyRight})
	d.press("l", "l", "l")
	d.golden("cluster-80-scrolled")
	d.press("h", "h", "h", "h", "h", "h")
	if s := d.screen(); !strings.Contains(s, "ID  STATUS") || regexp.MustCompile(`←\d`).MatchString(s) {
		t.Errorf("scrolled back left:\n%s", s)
	}
	d.press(":")
	d.typeText("txn")
	d.press("enter")
	d.golden("txn-80")
}
