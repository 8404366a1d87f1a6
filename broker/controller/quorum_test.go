package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

// quorum is a group of voters in one test process on loopback ports.
type quorum struct {
	t      *testing.T
	voters []config.Voter
	dirs   []string
	nodes  []*Controller // nil while a node is down
	edit   func(*Config)
}

func newQuorum(t *testing.T, n int) *quorum {
	t.Helper()
	return newQuorumWith(t, n, nil)
}

// newQuorumConfigs starts n voters with the static broker configs given.
func newQuorumConfigs(t *testing.T, n int, configs map[string]string) *quorum {
	t.Helper()
	b, err := config.ParseBroker(configs)
	if err != nil {
		t.Fatal(err)
	}
	return newQuorumWith(t, n, func(cfg *Config) { cfg.Broker = b })
}

// newQuorumWith starts n voters, each configured by edit too.
func newQuorumWith(t *testing.T, n int, edit func(*Config)) *quorum {
	t.Helper()
	return newClusterWith(t, n, 0, edit)
}

// newClusterWith starts voters and then broker-only nodes, numbered from
// 0 in that order, each configured by edit too.
func newClusterWith(t *testing.T, voters, brokers int, edit func(*Config)) *quorum {
	t.Helper()
	n := voters + brokers
	q := &quorum{t: t, nodes: make([]*Controller, n), edit: edit}
	for i, p := range testkit.FreePorts(t, voters) {
		q.voters = append(q.voters, config.Voter{ID: int32(i), Host: "127.0.0.1", Port: int32(p)})
	}
	for range n {
		q.dirs = append(q.dirs, t.TempDir())
	}
	for i := range n {
		q.start(i)
	}
	t.Cleanup(func() {
		for i := range q.nodes {
			q.stop(i)
		}
	})
	for i := range n {
		q.waitReady(i)
	}
	q.waitBrokers(n)
	return q
}

// waitBrokers waits until every running node's image holds n brokers.
func (q *quorum) waitBrokers(n int) {
	q.t.Helper()
	testkit.WaitFor(q.t, "every node registered in every image", func() (bool, string) {
		var seen []string
		ok := true
		for i, c := range q.nodes {
			if c == nil {
				continue
			}
			got := len(c.Image().Brokers)
			seen = append(seen, fmt.Sprintf("node %d: %d", i, got))
			ok = ok && got == n
		}
		return ok, strings.Join(seen, ", ")
	})
}

func (q *quorum) config(i int) Config {
	return Config{
		NodeID:       int32(i),
		DataDir:      q.dirs[i],
		Logger:       testkit.Logger(q.t, slog.LevelWarn).With("node", i),
		Self:         metadata.Broker{Host: "127.0.0.1", Port: 9092 + int32(i)},
		Voters:       q.voters,
		ApplyTimeout: 5 * time.Second,
	}
}

func (q *quorum) start(i int) {
	q.t.Helper()
	cfg := q.config(i)
	if q.edit != nil {
		q.edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		q.t.Fatalf("start node %d: %v", i, err)
	}
	q.nodes[i] = c
}

func (q *quorum) stop(i int) {
	if q.nodes[i] != nil {
		if err := q.nodes[i].Close(); err != nil {
			q.t.Errorf("close node %d: %v", i, err)
		}
		q.nodes[i] = nil
	}
}

func (q *quorum) waitReady(i int) {
	q.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if err := q.nodes[i].WaitReady(ctx); err != nil {
		q.t.Fatalf("node %d ready: %v", i, err)
	}
}

// leader waits until exactly one running node, other than the excluded
// ones, leads, and returns its index.
func (q *quorum) leader(exclude ...int) int {
	q.t.Helper()
	found := -1
	testkit.WaitFor(q.t, "one leader", func() (bool, string) {
		found = -1
		var leaders []int
		for i, c := range q.nodes {
			if c != nil && !slices.Contains(exclude, i) && c.IsLeader() {
				leaders = append(leaders, i)
			}
		}
		if len(leaders) == 1 {
			found = leaders[0]
			return true, ""
		}
		return false, fmt.Sprintf("leaders %v", leaders)
	})
	return found
}

// follower returns a running node other than the excluded ones that does
// not lead.
func (q *quorum) follower(exclude ...int) int {
	for i, c := range q.nodes {
		if c != nil && !slices.Contains(exclude, i) && !c.IsLeader() {
			return i
		}
	}
	q.t.Fatal("no follower")
	return -1
}

// waitTopic waits until every running node, but the excluded ones, has
// topic in its image and all of them at the same metadata offset.
func (q *quorum) waitTopic(topic string, exclude ...int) {
	q.t.Helper()
	testkit.WaitFor(q.t, "topic "+topic+" in every image at one offset", func() (bool, string) {
		var seen []string
		var index uint64
		ok := true
		first := true
		for i, c := range q.nodes {
			if c == nil || slices.Contains(exclude, i) {
				continue
			}
			img := c.Image()
			_, has := img.Topic(topic)
			seen = append(seen, fmt.Sprintf("node %d index %d has=%v", i, img.Index, has))
			if !has || (!first && img.Index != index) {
				ok = false
			}
			index, first = img.Index, false
		}
		return ok, strings.Join(seen, "; ")
	})
}

func createTopic(ctx context.Context, c *Controller, name string) error {
	_, err := c.CreateTopic(ctx, TopicSpec{Name: name, Partitions: 3, ReplicationFactor: 3}, false)
	return err
}

func TestQuorumForwardsToLeader(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	leader := q.leader()
	f := q.follower()
	testkit.WaitFor(t, "every node to know the leader", func() (bool, string) {
		var seen []string
		ok := true
		for i, c := range q.nodes {
			id, known := c.Leader()
			seen = append(seen, fmt.Sprintf("node %d: %d %v", i, id, known))
			ok = ok && known && id == int32(leader)
		}
		return ok, strings.Join(seen, ", ")
	})
	top, err := q.nodes[f].CreateTopic(ctx, TopicSpec{Name: "fwd", Partitions: 3, ReplicationFactor: 3}, false)
	if err != nil {
		t.Fatalf("create on follower %d (leader %d): %v", f, leader, err)
	}
	if len(top.Partitions) != 3 || len(top.Partitions[0].Replicas) != 3 {
		t.Errorf("created %+v", top)
	}
	q.waitTopic("fwd")
	// The state machine's verdict comes back through forwarding too.
	if err := createTopic(ctx, q.nodes[f], "fwd"); !errors.Is(err, ErrTopicExists) {
		t.Errorf("second create on follower: %v", err)
	}
	first, err := q.nodes[f].AllocateProducerIDs(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	second, err := q.nodes[leader].AllocateProducerIDs(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if second != first+10 {
		t.Errorf("producer id blocks %d then %d", first, second)
	}
	// The other admin changes, forwarded too.
	if err := q.nodes[f].CreatePartitions(ctx, "fwd", 5, nil, false); err != nil {
		t.Fatal(err)
	}
	v := "compact"
	if err := q.nodes[f].AlterTopicConfigs(ctx, "fwd", map[string]*string{"cleanup.policy": &v}, true, false); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "5 compacted partitions on every node", func() (bool, string) {
		for i, c := range q.nodes {
			top, ok := c.Image().Topic("fwd")
			if !ok || len(top.Partitions) != 5 || top.Configs["cleanup.policy"] != "compact" {
				return false, fmt.Sprintf("node %d: %+v", i, top)
			}
		}
		return true, ""
	})
	if err := q.nodes[f].DeleteTopic(ctx, "fwd"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the topic gone everywhere", func() (bool, string) {
		for i, c := range q.nodes {
			if _, ok := c.Image().Topic("fwd"); ok {
				return false, fmt.Sprintf("node %d still has it", i)
			}
		}
		return true, ""
	})
}

func TestQuorumLeaderFailover(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	old := q.leader()
	q.stop(old)
	begin := time.Now()
	next := q.leader(old)
	t.Logf("new leader %d after %v", next, time.Since(begin))
	f := q.follower(old)
	if err := createTopic(ctx, q.nodes[f], "after-failover"); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("after-failover")

	// The old leader restarts from its data dir and catches up.
	q.start(old)
	q.waitReady(old)
	q.waitTopic("after-failover")
	if err := createTopic(ctx, q.nodes[old], "from-restarted"); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("from-restarted")
}

// TestQuorumRestartReadyIsCurrent: a restarted follower is ready only
// once its image holds what the cluster committed while it was away, not
// as soon as the replay reaches its old registration (which the first
// entries of the log hold).
func TestQuorumRestartReadyIsCurrent(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	l := q.leader()
	f := q.follower()
	q.stop(f)
	// Enough entries that the replay takes several appends of Raft's.
	// On a busy machine the two voters left may elect again while the
	// topics are created: each is then created through the new leader.
	for i := 0; i < 300; {
		_, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: fmt.Sprintf("t%d", i), Partitions: 1, ReplicationFactor: 2}, false)
		switch {
		case errors.Is(err, ErrNotController):
			l = q.leader()
			continue
		case errors.Is(err, ErrTopicExists):
			// Committed before the leader changed, and retried.
		case err != nil:
			t.Fatal(err)
		}
		i++
	}
	want := q.nodes[l].Image().Index
	q.start(f)
	q.waitReady(f)
	if got := q.nodes[f].Image().Index; got < want {
		t.Errorf("node %d ready at metadata index %d, the leader had applied %d before its restart", f, got, want)
	}
}

func TestQuorumIsolatedLeader(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	old := q.leader()
	q.nodes[old].Isolate()
	next := q.leader(old)
	testkit.WaitFor(t, "the isolated leader to step down", func() (bool, string) {
		return !q.nodes[old].IsLeader(), ""
	})
	if err := createTopic(ctx, q.nodes[next], "while-isolated"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if err := createTopic(short, q.nodes[old], "on-isolated"); !errors.Is(err, ErrNotController) {
		t.Errorf("create on the isolated node: %v", err)
	}
	q.waitTopic("while-isolated", old)
	if _, ok := q.nodes[old].Image().Topic("while-isolated"); ok {
		t.Error("the isolated node applied a topic created while it was cut off")
	}
	q.nodes[old].Heal()
	q.waitTopic("while-isolated")
	if _, ok := q.nodes[old].Image().Topic("on-isolated"); ok {
		t.Error("the refused topic exists")
	}
	if err := createTopic(ctx, q.nodes[old], "after-heal"); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("after-heal")
}

func TestQuorumRefusesOtherDataDir(t *testing.T) {
	q := newQuorum(t, 3)
	q.stop(1)
	q.stop(2)
	// Node 2 on node 1's directory.
	cfg := q.config(2)
	cfg.DataDir = q.dirs[1]
	if c, err := New(cfg); err == nil {
		c.Close()
		t.Fatal("node 2 started on node 1's data directory")
	} else if !strings.Contains(err.Error(), "belongs to node 1") {
		t.Errorf("error %v", err)
	}
	// Node 1 with another voter set.
	cfg = q.config(1)
	other := append([]config.Voter(nil), q.voters...)
	other[2].Port++
	cfg.Voters = other
	if c, err := New(cfg); err == nil {
		c.Close()
		t.Fatal("node 1 started with another voter set")
	} else if !strings.Contains(err.Error(), "controller.quorum.voters") {
		t.Errorf("error %v", err)
	}
	// A one-voter data directory is not a member of a quorum.
	single := testConfig(t, t.TempDir())
	c, err := New(single)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	single.Voters = []config.Voter{{ID: 1, Host: "127.0.0.1", Port: q.voters[1].Port}, q.voters[0]}
	if c, err := New(single); err == nil {
		c.Close()
		t.Fatal("a single node's data directory joined a quorum")
	}
}

func TestQuorumFencesSilentBroker(t *testing.T) {
	q := newQuorumConfigs(t, 3, map[string]string{"broker.heartbeat.interval.ms": "50", "broker.session.timeout.ms": "600"})
	leader := q.leader()
	f := q.follower()
	fenced := func(on int, id int) bool { return q.nodes[on].Image().Brokers[int32(id)].Fenced }
	// Heartbeats keep everyone unfenced well past a session: a check
	// over a window of time, not a wait.
	window := time.NewTimer(3 * 600 * time.Millisecond)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for watching := true; watching; {
		for i := range q.nodes {
			if fenced(leader, i) {
				t.Fatalf("broker %d fenced while heartbeating", i)
			}
		}
		select {
		case <-window.C:
			watching = false
		case <-tick.C:
		}
	}
	q.nodes[f].Isolate()
	testkit.WaitFor(t, "the isolated broker fenced", func() (bool, string) {
		l := q.leader(f)
		return fenced(l, f), ""
	})
	// Metadata and placement leave the fenced broker out.
	ctx := ctxT(t)
	l := q.leader(f)
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "rf3", Partitions: 1, ReplicationFactor: 3}, false); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Errorf("RF 3 with a broker fenced: %v", err)
	}
	q.nodes[f].Heal()
	testkit.WaitFor(t, "the healed broker unfenced everywhere", func() (bool, string) {
		for i := range q.nodes {
			if fenced(i, f) {
				return false, fmt.Sprintf("fenced on node %d", i)
			}
		}
		return true, ""
	})
	q.waitReady(f)
}

// TestQuorumWithoutMajority: with two of three voters down, no node
// leads, and a proposal fails with ErrNotController within its deadline
// rather than hanging; once a voter returns, proposals work again.
func TestQuorumWithoutMajority(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	q.stop(1)
	q.stop(2)
	testkit.WaitFor(t, "node 0 to stop leading", func() (bool, string) { return !q.nodes[0].IsLeader(), "" })
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if err := createTopic(short, q.nodes[0], "no-majority"); !errors.Is(err, ErrNotController) {
		t.Errorf("create without a majority: %v", err)
	}
	if took := time.Since(begin); took > testkit.HangBound {
		t.Errorf("the refusal took %v", took)
	}
	q.start(2)
	q.waitReady(2)
	if err := createTopic(ctx, q.nodes[0], "majority-again"); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("majority-again")
}

func TestForwardFrames(t *testing.T) {
	var buf strings.Builder
	if err := writeFrame(&buf, forwardPropose, []byte("record")); err != nil {
		t.Fatal(err)
	}
	kind, payload, err := readFrame(strings.NewReader(buf.String()))
	if err != nil || kind != forwardPropose || string(payload) != "record" {
		t.Errorf("round trip: kind %d payload %q err %v", kind, payload, err)
	}
	// A length over the bound is refused before anything is allocated.
	huge := "\xff\xff\xff\xff\x01"
	if _, _, err := readFrame(strings.NewReader(huge)); err == nil {
		t.Error("a 4 GiB frame was accepted")
	}
	if _, _, err := readFrame(strings.NewReader("\x00\x00\x00\x00\x01")); err == nil {
		t.Error("an empty frame was accepted")
	}
}

// TestQuorumBrokerOnlyNodes: nodes outside controller.quorum.voters follow
// the quorum as non-voters: they get ready, propose through forwarding,
// survive a controller failover, and come back after a restart at a new
// address with what they missed.
func TestQuorumBrokerOnlyNodes(t *testing.T) {
	q := newClusterWith(t, 3, 2, nil)
	ctx := ctxT(t)
	leader := q.leader()
	f := q.nodes[leader].raft.GetConfiguration()
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	var voters, nonvoters []string
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters = append(voters, string(s.ID))
		} else {
			nonvoters = append(nonvoters, string(s.ID))
		}
	}
	slices.Sort(nonvoters)
	if len(voters) != 3 || !slices.Equal(nonvoters, []string{"3", "4"}) {
		t.Errorf("raft configuration: voters %v non-voters %v", voters, nonvoters)
	}
	// A broker proposes through forwarding; RF 5 spans the brokers too.
	top, err := q.nodes[3].CreateTopic(ctx, TopicSpec{Name: "wide", Partitions: 5, ReplicationFactor: 5}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Partitions[0].Replicas) != 5 {
		t.Errorf("replicas %v", top.Partitions[0].Replicas)
	}
	q.waitTopic("wide")

	// The active controller goes; brokers follow the next one.
	q.stop(leader)
	next := q.leader(leader)
	if next >= 3 {
		t.Fatalf("broker-only node %d leads", next)
	}
	if err := createTopic(ctx, q.nodes[4], "after-failover"); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("after-failover")

	// A broker restarts, at another quorum port, and catches up.
	old := q.nodes[3].net.Addr().String()
	q.stop(3)
	if err := createTopic(ctx, q.nodes[4], "while-down"); err != nil {
		t.Fatal(err)
	}
	q.start(3)
	q.waitReady(3)
	if q.nodes[3].net.Addr().String() == old {
		t.Logf("the restarted broker got its old port %s again", old)
	}
	q.waitTopic("while-down")
	q.start(leader)
	q.waitReady(leader)
	q.waitTopic("while-down")
	if err := createTopic(ctx, q.nodes[3], "from-restarted"); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("from-restarted")

	// A broker's directory is refused with another voter set.
	q.stop(4)
	cfg := q.config(4)
	other := slices.Clone(q.voters)
	other[0].Port++
	cfg.Voters = other
	if c, err := New(cfg); err == nil {
		c.Close()
		t.Error("a broker started with another voter set")
	} else if !strings.Contains(err.Error(), "controller.quorum.voters") {
		t.Errorf("error %v", err)
	}
}

// TestQuorumAdminOnALaggingFollower: a topic created on the leader is
// altered, grown and deleted at once through a follower that took no part
// in creating it. The follower learns of each commit a little later (the
// leader's next AppendEntries), so checking the topic against its own image
// would call it unknown; like Kafka's controller, which checks forwarded
// admin requests against its own state, it first catches up.
func TestQuorumAdminOnALaggingFollower(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	f := q.follower()
	v := "compact"
	for i := range 10 {
		name := fmt.Sprintf("lag-%d", i)
		leader := q.leader()
		if err := settled(t, ctx, "create "+name, func() error { return createTopic(ctx, q.nodes[leader], name) }, ErrTopicExists); err != nil {
			t.Fatal(err)
		}
		if err := settled(t, ctx, "alter "+name, func() error {
			return q.nodes[f].AlterTopicConfigs(ctx, name, map[string]*string{"cleanup.policy": &v}, true, false)
		}); err != nil {
			t.Fatalf("alter %s on follower %d right after its creation on leader %d: %v", name, f, leader, err)
		}
		if err := settled(t, ctx, "grow "+name, func() error { return q.nodes[f].CreatePartitions(ctx, name, 4, nil, false) }, ErrInvalidPartitions); err != nil {
			t.Fatalf("grow %s on follower %d: %v", name, f, err)
		}
		if err := settled(t, ctx, "create "+name+"-again", func() error { return createTopic(ctx, q.nodes[leader], name+"-again") }, ErrTopicExists); err != nil {
			t.Fatal(err)
		}
		if err := settled(t, ctx, "delete "+name+"-again", func() error { return q.nodes[f].DeleteTopic(ctx, name+"-again") }, ErrUnknownTopic); err != nil {
			t.Fatalf("delete %s-again on follower %d right after its creation: %v", name, f, err)
		}
	}
}

// settled runs op until it ends with something other than
// ErrNotController, as a Kafka client sends a request again on
// NOT_CONTROLLER. On a loaded machine a leader can miss its 250ms lease
// (raftTimeouts) while committing, and the proposal's outcome is then
// unknown: a retry that finds op's effect already there (one of already)
// counts as done.
func settled(t *testing.T, ctx context.Context, what string, op func() error, already ...error) error {
	t.Helper()
	retried := false
	for {
		err := op()
		switch {
		case err == nil:
			return nil
		case retried && slices.ContainsFunc(already, func(e error) bool { return errors.Is(err, e) }):
			return nil
		case !errors.Is(err, ErrNotController) || ctx.Err() != nil:
			return err
		}
		t.Logf("%s: %v; sending it again", what, err)
		retried = true
	}
}
