package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

func TestBuildChange(t *testing.T) {
	part := func(leader int32, isr ...int32) metadata.Partition {
		return metadata.Partition{Leader: leader, Replicas: []int32{1, 2, 3}, ISR: isr}
	}
	fenced := func(ids ...int32) func(int32) bool {
		return func(id int32) bool { return !slices.Contains(ids, id) }
	}
	for _, tc := range []struct {
		name     string
		p        metadata.Partition
		target   []int32
		el       election
		eligible func(int32) bool
		leader   int32
		isr      []int32
		unclean  bool
	}{
		{"isr shrink keeps the leader", part(1, 1, 2, 3), []int32{1, 2}, electOnline, fenced(), 1, []int32{1, 2}, false},
		{"leader out of the isr: next replica in order", part(1, 1, 2, 3), []int32{3, 2}, electOnline, fenced(), 2, []int32{3, 2}, false},
		{"fenced leader: next eligible", part(1, 1, 2, 3), []int32{1, 3}, electOnline, fenced(1, 2), 3, []int32{1, 3}, false},
		{"empty target keeps the isr, offline", part(3, 3), nil, electOnline, fenced(3), -1, []int32{3}, false},
		{"unclean takes any eligible replica", part(3, 3), nil, electUnclean, fenced(3), 1, []int32{1}, true},
		{"unclean prefers the isr", part(-1, 2, 3), []int32{2, 3}, electUnclean, fenced(1), 2, []int32{2, 3}, false},
		{"unclean with nobody eligible", part(-1, 3), nil, electUnclean, fenced(1, 2, 3), -1, []int32{3}, false},
		{"back from offline", part(-1, 3), []int32{3}, electOnline, fenced(), 3, []int32{3}, false},
		{"preferred moves back", part(2, 1, 2, 3), []int32{1, 2, 3}, electPreferred, fenced(), 1, []int32{1, 2, 3}, false},
		{"preferred out of the isr: leader stays", part(2, 2, 3), []int32{2, 3}, electPreferred, fenced(), 2, []int32{2, 3}, false},
		{"preferred fenced: leader stays", part(2, 1, 2, 3), []int32{1, 2, 3}, electPreferred, fenced(1), 2, []int32{1, 2, 3}, false},
		{"online does not move to the preferred", part(2, 1, 2, 3), []int32{1, 2, 3}, electOnline, fenced(), 2, []int32{1, 2, 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := buildChange(tc.p, tc.target, tc.el, tc.eligible)
			if ch.leader != tc.leader || !slices.Equal(ch.isr, tc.isr) || ch.unclean != tc.unclean {
				t.Errorf("got leader %d isr %v unclean %v, want %d %v %v", ch.leader, ch.isr, ch.unclean, tc.leader, tc.isr, tc.unclean)
			}
		})
	}
}

// withBrokers registers brokers besides the controller's own on a
// single-node controller, for tests of partitions with several replicas.
func withBrokers(t *testing.T, c *Controller, brokers ...metadata.Broker) {
	t.Helper()
	for _, b := range brokers {
		res, err := c.propose(ctxT(t), &metadata.RegisterBrokerRecord{Broker: b})
		if err == nil {
			err = res.err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func partitionOf(t *testing.T, c *Controller, topic string, p int32) metadata.Partition {
	t.Helper()
	top, ok := c.Image().Topic(topic)
	if !ok {
		t.Fatalf("no topic %s", topic)
	}
	part, ok := top.Partition(p)
	if !ok {
		t.Fatalf("no partition %s-%d", topic, p)
	}
	return part
}

func TestAlterPartition(t *testing.T) {
	c := start(t, testConfig(t, ""))
	ctx := ctxT(t)
	withBrokers(t, c, metadata.Broker{ID: 2, Host: "h", Port: 2}, metadata.Broker{ID: 3, Host: "h", Port: 3}, metadata.Broker{ID: 4, Host: "h", Port: 4, Fenced: true})
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "t", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{1, 2, 3}}, {1, []int32{2, 3, 4}}}}, false); err != nil {
		t.Fatal(err)
	}
	// Shrink: the partition epoch bumps, the leader epoch does not.
	p, err := c.AlterPartition(ctx, 1, "t", 0, 0, 0, []int32{1, 2})
	if err != nil || p.Leader != 1 || p.LeaderEpoch != 0 || p.PartitionEpoch != 1 || !slices.Equal(p.ISR, []int32{1, 2}) {
		t.Fatalf("shrink: %+v %v", p, err)
	}
	// The same ISR again changes nothing.
	if p, err := c.AlterPartition(ctx, 1, "t", 0, 0, 1, []int32{1, 2}); err != nil || p.PartitionEpoch != 1 {
		t.Errorf("no-op: %+v %v", p, err)
	}
	for _, tc := range []struct {
		name          string
		broker        int32
		topic         string
		partition     int32
		leaderEpoch   int32
		partitionEpch int32
		isr           []int32
		want          error
	}{
		{"stale leader epoch", 1, "t", 0, 5, 1, []int32{1}, ErrFencedLeaderEpoch},
		{"not the leader", 2, "t", 0, 0, 1, []int32{1}, ErrInvalidRequest},
		{"stale partition epoch", 1, "t", 0, 0, 0, []int32{1}, ErrInvalidUpdateVersion},
		{"empty isr", 1, "t", 0, 0, 1, nil, ErrInvalidRequest},
		{"non-replica", 1, "t", 0, 0, 1, []int32{1, 4}, ErrInvalidRequest},
		{"repeated", 1, "t", 0, 0, 1, []int32{1, 1}, ErrInvalidRequest},
		{"unknown topic", 1, "nope", 0, 0, 0, []int32{1}, ErrUnknownTopic},
		{"unknown partition", 1, "t", 7, 0, 0, []int32{1}, ErrUnknownTopic},
		{"fenced broker joins", 2, "t", 1, 0, 0, []int32{2, 3, 4}, ErrIneligibleReplica},
	} {
		if _, err := c.AlterPartition(ctx, tc.broker, tc.topic, tc.partition, tc.leaderEpoch, tc.partitionEpch, tc.isr); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// Expand again.
	if p, err := c.AlterPartition(ctx, 1, "t", 0, 0, 1, []int32{1, 2, 3}); err != nil || p.PartitionEpoch != 2 || len(p.ISR) != 3 {
		t.Errorf("expand: %+v %v", p, err)
	}
	// An ISR without the leader elects another and says so.
	p, err = c.AlterPartition(ctx, 1, "t", 0, 0, 2, []int32{3, 2})
	if !errors.Is(err, ErrNewLeaderElected) || p.Leader != 2 || p.LeaderEpoch != 1 || p.PartitionEpoch != 3 {
		t.Errorf("leader left out: %+v %v", p, err)
	}
	// The old leader's epoch is fenced now.
	if _, err := c.AlterPartition(ctx, 1, "t", 0, 0, 3, []int32{1, 2, 3}); !errors.Is(err, ErrFencedLeaderEpoch) {
		t.Errorf("old leader: %v", err)
	}
}

func TestElectLeader(t *testing.T) {
	c := start(t, testConfig(t, ""))
	ctx := ctxT(t)
	withBrokers(t, c, metadata.Broker{ID: 2, Host: "h", Port: 2}, metadata.Broker{ID: 3, Host: "h", Port: 3})
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "t", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{1, 2, 3}}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.ElectLeader(ctx, "t", 0, false); !errors.Is(err, ErrElectionNotNeeded) {
		t.Errorf("preferred on the preferred leader: %v", err)
	}
	if err := c.ElectLeader(ctx, "t", 0, true); !errors.Is(err, ErrElectionNotNeeded) {
		t.Errorf("unclean with a leader: %v", err)
	}
	// Leadership moves to 2 (1 leaves the ISR), then 1 comes back.
	if _, err := c.AlterPartition(ctx, 1, "t", 0, 0, 0, []int32{2, 3}); !errors.Is(err, ErrNewLeaderElected) {
		t.Fatal(err)
	}
	if err := c.ElectLeader(ctx, "t", 0, false); !errors.Is(err, ErrPreferredLeaderNotAvailable) {
		t.Errorf("preferred out of the isr: %v", err)
	}
	p := partitionOf(t, c, "t", 0)
	if _, err := c.AlterPartition(ctx, 2, "t", 0, p.LeaderEpoch, p.PartitionEpoch, []int32{2, 3, 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.ElectLeader(ctx, "t", 0, false); err != nil {
		t.Fatalf("preferred: %v", err)
	}
	if p := partitionOf(t, c, "t", 0); p.Leader != 1 || p.LeaderEpoch != 2 {
		t.Errorf("after the preferred election: %+v", p)
	}
	for _, tc := range []struct {
		topic string
		p     int32
	}{{"nope", 0}, {"t", 3}, {"t", -1}} {
		if err := c.ElectLeader(ctx, tc.topic, tc.p, false); !errors.Is(err, ErrUnknownTopic) {
			t.Errorf("%s-%d: %v", tc.topic, tc.p, err)
		}
	}
}

// fastFencingQuorum starts three voters with a 600ms broker session and
// returns the leader, a follower and the third node.
func fastFencingQuorum(t *testing.T) (q *quorum, leader, follower, other int) {
	t.Helper()
	q = newQuorumConfigs(t, 3, map[string]string{"broker.heartbeat.interval.ms": "50", "broker.session.timeout.ms": "600"})
	leader = q.leader()
	follower = q.follower()
	return q, leader, follower, 3 - leader - follower
}

// TestQuorumFencingElects: a broker whose session expires leaves every
// ISR and the leadership of its partitions; when it comes back nothing
// moves until a preferred election; a partition whose whole ISR is fenced
// goes offline, keeping its last ISR member, and comes back with it.
func TestQuorumFencingElects(t *testing.T) {
	q, l, f, other := fastFencingQuorum(t)
	ctx := ctxT(t)
	assign := []PartitionReplicas{{0, []int32{int32(f), int32(l), int32(other)}}, {1, []int32{int32(l), int32(f), int32(other)}}}
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "t", Partitions: -1, ReplicationFactor: -1, Assignment: assign}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "solo", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{int32(f)}}}}, false); err != nil {
		t.Fatal(err)
	}
	q.nodes[f].Isolate()
	testkit.WaitFor(t, "the fenced broker out of every isr and leadership", func() (bool, string) {
		l := q.leader(f)
		img := q.nodes[l].Image()
		top, _ := img.Topic("t")
		solo, _ := img.Topic("solo")
		p0, p1, p2 := top.Partitions[0], top.Partitions[1], solo.Partitions[0]
		ok := p0.Leader == int32(l) && !slices.Contains(p0.ISR, int32(f)) && p0.LeaderEpoch == 1 &&
			!slices.Contains(p1.ISR, int32(f)) && p1.LeaderEpoch == 0 &&
			p2.Leader == -1 && slices.Equal(p2.ISR, []int32{int32(f)})
		return ok, fmt.Sprintf("%+v %+v", top.Partitions, p2)
	})
	q.nodes[f].Heal()
	testkit.WaitFor(t, "the broker back, its offline partition led by it on every node", func() (bool, string) {
		var seen []string
		ok := true
		for i, c := range q.nodes {
			img := c.Image()
			top, ok1 := img.Topic("t")
			solo, ok2 := img.Topic("solo")
			if !ok1 || !ok2 {
				return false, fmt.Sprintf("node %d lacks the topics", i)
			}
			p0, p2 := top.Partitions[0], solo.Partitions[0]
			seen = append(seen, fmt.Sprintf("node %d: p0 %+v p2 %+v", i, p0, p2))
			ok = ok && !c.Image().Brokers[int32(f)].Fenced && p2.Leader == int32(f) && p0.Leader == int32(l)
		}
		return ok, strings.Join(seen, "; ")
	})
	// The broker back: p0 keeps its leader until its ISR has the preferred
	// replica again and a preferred election runs.
	p0 := partitionOf(t, q.nodes[q.leader()], "t", 0)
	if p0.Leader != int32(l) {
		t.Fatalf("p0 moved by itself: %+v", p0)
	}
	c := q.nodes[p0.Leader]
	if err := c.ElectLeader(ctx, "t", 0, false); !errors.Is(err, ErrPreferredLeaderNotAvailable) {
		t.Errorf("preferred election before the isr expands: %v", err)
	}
	if _, err := c.AlterPartition(ctx, p0.Leader, "t", 0, p0.LeaderEpoch, p0.PartitionEpoch, append(slices.Clone(p0.ISR), int32(f))); err != nil {
		t.Fatal(err)
	}
	// ElectLeaders from a follower goes through forwarding.
	if err := q.nodes[q.follower()].ElectLeader(ctx, "t", 0, false); err != nil {
		t.Fatalf("preferred election: %v", err)
	}
	testkit.WaitFor(t, "the preferred leader back on every node", func() (bool, string) {
		for i, c := range q.nodes {
			if top, _ := c.Image().Topic("t"); top.Partitions[0].Leader != int32(f) || top.Partitions[0].LeaderEpoch != 2 {
				p := top.Partitions[0]
				return false, fmt.Sprintf("node %d: %+v", i, p)
			}
		}
		return true, ""
	})
}

// TestQuorumUncleanElection: with unclean.leader.election.enable on the
// topic, or as a dynamic cluster-wide broker default, a partition whose
// ISR is all fenced gets a live replica as leader, with the ISR just that
// replica.
func TestQuorumUncleanElection(t *testing.T) {
	for _, byDefault := range []bool{false, true} {
		t.Run(fmt.Sprintf("broker-default=%v", byDefault), func(t *testing.T) {
			q, l, f, other := fastFencingQuorum(t)
			ctx := ctxT(t)
			spec := TopicSpec{Name: "u", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{int32(f), int32(other)}}},
				Configs: map[string]string{"unclean.leader.election.enable": "true"}}
			if byDefault {
				spec.Configs = nil
				on := "true"
				if err := q.nodes[l].AlterBrokerConfigs(ctx, "", map[string]*string{"unclean.leader.election.enable": &on}, true, false); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := q.nodes[l].CreateTopic(ctx, spec, false); err != nil {
				t.Fatal(err)
			}
			// The ISR shrinks to f alone, then f is fenced.
			p := partitionOf(t, q.nodes[l], "u", 0)
			if _, err := q.nodes[l].AlterPartition(ctx, int32(f), "u", 0, p.LeaderEpoch, p.PartitionEpoch, []int32{int32(f)}); err != nil {
				t.Fatal(err)
			}
			q.nodes[f].Isolate()
			defer q.nodes[f].Heal()
			testkit.WaitFor(t, "an unclean leader", func() (bool, string) {
				p := partitionOf(t, q.nodes[q.leader(f)], "u", 0)
				return p.Leader == int32(other) && slices.Equal(p.ISR, []int32{int32(other)}), fmt.Sprintf("%+v", p)
			})
		})
	}
}

// TestPlacementRackAware: with broker.rack set, each partition's replicas
// span as many racks as they can, and preferred leaders still spread
// evenly over the brokers.
func TestPlacementRackAware(t *testing.T) {
	cfg := testConfig(t, "")
	cfg.Self.Rack = "a"
	c := start(t, cfg)
	ctx := ctxT(t)
	racks := map[int32]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
	for id := int32(2); id <= 6; id++ {
		withBrokers(t, c, metadata.Broker{ID: id, Host: "h", Port: id, Rack: racks[id]})
	}
	withBrokers(t, c, metadata.Broker{ID: 7, Host: "h", Port: 7, Rack: "c", Fenced: true})
	for _, rf := range []int16{2, 3, 4} {
		top, err := c.CreateTopic(ctx, TopicSpec{Name: fmt.Sprintf("rf%d", rf), Partitions: 6, ReplicationFactor: rf}, false)
		if err != nil {
			t.Fatal(err)
		}
		leaders := map[int32]int{}
		for _, p := range top.Partitions {
			leaders[p.Leader]++
			seen := map[string]bool{}
			for _, r := range p.Replicas {
				if r == 7 {
					t.Errorf("rf %d: fenced broker 7 placed: %v", rf, p.Replicas)
				}
				seen[racks[r]] = true
			}
			if want := min(int(rf), 3); len(seen) != want || len(p.Replicas) != int(rf) {
				t.Errorf("rf %d partition %d: replicas %v span racks %v", rf, p.Index, p.Replicas, seen)
			}
		}
		for id := int32(1); id <= 6; id++ {
			if leaders[id] != 1 {
				t.Errorf("rf %d: broker %d leads %d partitions, want 1 (%v)", rf, id, leaders[id], top.Partitions)
			}
		}
	}
}

// TestQuorumControlledShutdown: a node in controlled shutdown leads
// nothing and is in no ISR once ControlledShutdown returns (a partition
// only it holds goes offline), gets no new replicas and cannot rejoin an
// ISR; its next start registers it afresh and its offline partition
// comes back.
func TestQuorumControlledShutdown(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	l := q.leader()
	f := q.follower()
	other := 3 - l - f
	assign := []PartitionReplicas{{0, []int32{int32(f), int32(l), int32(other)}}, {1, []int32{int32(l), int32(f), int32(other)}}}
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "t", Partitions: -1, ReplicationFactor: -1, Assignment: assign}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "solo", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{int32(f)}}}}, false); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("solo")
	if err := q.nodes[f].ControlledShutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c := q.nodes[f]
	p0, p1, solo := partitionOf(t, c, "t", 0), partitionOf(t, c, "t", 1), partitionOf(t, c, "solo", 0)
	if p0.Leader != int32(l) || slices.Contains(p0.ISR, int32(f)) || slices.Contains(p1.ISR, int32(f)) || p1.Leader != int32(l) {
		t.Errorf("after controlled shutdown: p0 %+v p1 %+v", p0, p1)
	}
	if solo.Leader != -1 || !slices.Equal(solo.ISR, []int32{int32(f)}) {
		t.Errorf("the partition only node %d holds: %+v", f, solo)
	}
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "rf3", Partitions: 1, ReplicationFactor: 3}, false); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Errorf("RF 3 with a node shutting down: %v", err)
	}
	if _, err := c.AlterPartition(ctx, p1.Leader, "t", 1, p1.LeaderEpoch, p1.PartitionEpoch, []int32{int32(l), int32(f), int32(other)}); !errors.Is(err, ErrIneligibleReplica) {
		t.Errorf("a node shutting down rejoins an isr: %v", err)
	}
	q.stop(f)
	q.start(f)
	q.waitReady(f)
	testkit.WaitFor(t, "the restarted node leading its partition again", func() (bool, string) {
		for i, c := range q.nodes {
			img := c.Image()
			b := img.Brokers[int32(f)]
			top, ok := img.Topic("solo")
			if !ok {
				return false, fmt.Sprintf("node %d lacks the topic", i)
			}
			if p, _ := top.Partition(0); p.Leader != int32(f) || b.ShuttingDown {
				return false, fmt.Sprintf("node %d: %+v %+v", i, p, b)
			}
		}
		return true, ""
	})
}

// TestQuorumControlledShutdownOfController: the active controller's
// controlled shutdown, with one voter already down, leaves the last one
// applying its moves although no quorum is left to commit anything:
// leadership is handed off first (handOff), else that node would keep
// the image from before the moves (and a leader in an ISR of two that
// has gone, so acks=all waits for a dead node instead of being refused
// NOT_ENOUGH_REPLICAS).
func TestQuorumControlledShutdownOfController(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	l := q.leader()
	f := q.follower()
	other := 3 - l - f
	assign := []PartitionReplicas{{0, []int32{int32(l), int32(f), int32(other)}}}
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "t", Partitions: -1, ReplicationFactor: -1, Assignment: assign}, false); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("t")
	q.stop(other)
	if err := q.nodes[l].ControlledShutdown(ctx); err != nil {
		t.Fatal(err)
	}
	q.stop(l)
	testkit.WaitFor(t, "the last node applying the controlled shutdown's moves", func() (bool, string) {
		p := partitionOf(t, q.nodes[f], "t", 0)
		return p.Leader == int32(f) && !slices.Contains(p.ISR, int32(l)), fmt.Sprintf("%+v", p)
	})
}

// TestQuorumWholeClusterStop: nodes stopping one after another, each
// with a controlled shutdown, as klog up -n 3 stops them: the last has no
// peer to move anything to and no quorum to commit the moves, so its
// controlled shutdown returns at once instead of waiting out its bound.
func TestQuorumWholeClusterStop(t *testing.T) {
	q := newQuorum(t, 3)
	ctx := ctxT(t)
	l := q.leader()
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "t", Partitions: 3, ReplicationFactor: 3}, false); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("t")
	order := []int{q.follower(), q.follower(q.follower()), l}
	for _, i := range order {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := q.nodes[i].ControlledShutdown(sctx)
		cancel()
		if err != nil {
			t.Fatalf("node %d (stopped before it: %v): %v", i, order[:slices.Index(order, i)], err)
		}
		q.stop(i)
	}
}

// TestQuorumDescribe: DescribeQuorum from any node, a broker-only one
// included, shows the leader, its term, the voters and the observer, and
// every member's log end offset from its heartbeats.
func TestQuorumDescribe(t *testing.T) {
	b, err := config.ParseBroker(map[string]string{"broker.heartbeat.interval.ms": "50", "broker.session.timeout.ms": "600"})
	if err != nil {
		t.Fatal(err)
	}
	q := newClusterWith(t, 3, 1, func(cfg *Config) { cfg.Broker = b })
	ctx := ctxT(t)
	leader := q.leader()
	testkit.WaitFor(t, "every member's progress known, from every node", func() (bool, string) {
		for i, c := range q.nodes {
			qs, err := c.DescribeQuorum(ctx)
			if err != nil {
				return false, fmt.Sprintf("node %d: %v", i, err)
			}
			if qs.LeaderID != int32(leader) || qs.LeaderEpoch < 1 || qs.HighWatermark < 1 || len(qs.Voters) != 3 || len(qs.Observers) != 1 || qs.Observers[0].ID != 3 {
				return false, fmt.Sprintf("node %d: %+v", i, qs)
			}
			for _, r := range append(slices.Clone(qs.Voters), qs.Observers...) {
				if r.LogEndOffset < 1 || r.LastFetch < 0 || r.LastCaughtUp < 0 {
					return false, fmt.Sprintf("node %d: %+v", i, qs)
				}
			}
		}
		return true, ""
	})
}

func TestDescribeQuorumSingleNode(t *testing.T) {
	c := start(t, testConfig(t, ""))
	qs, err := c.DescribeQuorum(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if qs.LeaderID != 1 || len(qs.Voters) != 1 || qs.Voters[0].ID != 1 || len(qs.Observers) != 0 || qs.HighWatermark < 1 || qs.Voters[0].LogEndOffset < qs.HighWatermark {
		t.Errorf("%+v", qs)
	}
}

// TestQuorumAutoLeaderRebalance: with auto.leader.rebalance.enable (the
// default) leadership returns to the preferred replica once it is back in
// the ISR, within leader.imbalance.check.interval.seconds.
func TestQuorumAutoLeaderRebalance(t *testing.T) {
	q := newQuorumConfigs(t, 3, map[string]string{"broker.heartbeat.interval.ms": "50", "broker.session.timeout.ms": "600",
		"leader.imbalance.check.interval.seconds": "1"})
	ctx := ctxT(t)
	l := q.leader()
	f := q.follower()
	other := 3 - l - f
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "t", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{int32(f), int32(l), int32(other)}}}}, false); err != nil {
		t.Fatal(err)
	}
	// The preferred leader leaves the ISR, so another leads; back in the
	// ISR, it leads again by itself.
	if _, err := q.nodes[l].AlterPartition(ctx, int32(f), "t", 0, 0, 0, []int32{int32(l), int32(other)}); !errors.Is(err, ErrNewLeaderElected) {
		t.Fatal(err)
	}
	p := partitionOf(t, q.nodes[l], "t", 0)
	if _, err := q.nodes[l].AlterPartition(ctx, p.Leader, "t", 0, p.LeaderEpoch, p.PartitionEpoch, []int32{int32(l), int32(other), int32(f)}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the preferred leader back", func() (bool, string) {
		p := partitionOf(t, q.nodes[l], "t", 0)
		return p.Leader == int32(f) && p.LeaderEpoch == 2, fmt.Sprintf("%+v", p)
	})
}

// TestQuorumDescribeKnowsEveryoneAtOnce: a node heartbeats the active
// controller as soon as it is registered or sees a new one, so
// DescribeQuorum knows every member's progress within a round trip, not
// after a heartbeat interval (an hour here).
func TestQuorumDescribeKnowsEveryoneAtOnce(t *testing.T) {
	q := newQuorumConfigs(t, 3, map[string]string{"broker.heartbeat.interval.ms": "3600000", "broker.session.timeout.ms": "14400000"})
	ctx := ctxT(t)
	known := func(what string) {
		t.Helper()
		leader := q.leader()
		testkit.WaitFor(t, what, func() (bool, string) {
			qs, err := q.nodes[leader].DescribeQuorum(ctx)
			if err != nil {
				return false, err.Error()
			}
			for _, r := range qs.Voters {
				if r.LogEndOffset < 1 || r.LastFetch < 0 {
					return false, fmt.Sprintf("%+v", qs)
				}
			}
			return qs.LeaderID == int32(leader), fmt.Sprintf("%+v", qs)
		})
	}
	known("every voter's progress, right after the start")
	// A new active controller hears from the others at once too.
	old := q.leader()
	q.nodes[old].Isolate()
	q.leader(old)
	q.nodes[old].Heal()
	known("every voter's progress at the new active controller")
}

// TestQuorumRestartIsNewIncarnation: a broker started again long before
// its session (a minute here) could expire is a new incarnation: ready
// only once the controller has taken it out of every ISR and elected
// another leader at a new leader epoch for what it led, so that it never
// leads on the strength of its previous run (whose log it may have lost
// a tail of); its one-replica partition, whose ISR it is the last of,
// comes back led by it.
// longSessionQuorum starts a quorum of three whose sessions last 60 s and
// creates topic t, one partition led by a follower f of leader l.
func longSessionQuorum(t *testing.T) (q *quorum, l, f, other int) {
	t.Helper()
	q = newQuorumConfigs(t, 3, map[string]string{"broker.heartbeat.interval.ms": "50", "broker.session.timeout.ms": "60000"})
	l, f = q.leader(), q.follower()
	other = 3 - l - f
	assign := []PartitionReplicas{{0, []int32{int32(f), int32(l), int32(other)}}}
	if _, err := q.nodes[l].CreateTopic(ctxT(t), TopicSpec{Name: "t", Partitions: -1, ReplicationFactor: -1, Assignment: assign}, false); err != nil {
		t.Fatal(err)
	}
	return q, l, f, other
}

func TestQuorumRestartIsNewIncarnation(t *testing.T) {
	q, l, f, _ := longSessionQuorum(t)
	ctx := ctxT(t)
	if _, err := q.nodes[l].CreateTopic(ctx, TopicSpec{Name: "solo", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{int32(f)}}}}, false); err != nil {
		t.Fatal(err)
	}
	q.waitTopic("solo")
	before := q.nodes[f].Image().Brokers[int32(f)]
	q.stop(f)
	q.start(f)
	q.waitReady(f)
	img := q.nodes[f].Image()
	now := img.Brokers[int32(f)]
	if now.Incarnation == before.Incarnation || now.Fenced {
		t.Errorf("broker %d ready as %+v, was %+v: want a new incarnation, unfenced", f, now, before)
	}
	p0 := partitionOf(t, q.nodes[f], "t", 0)
	if p0.Leader == int32(f) || p0.LeaderEpoch != 1 || slices.Contains(p0.ISR, int32(f)) {
		t.Errorf("t-0 once broker %d is ready again: %+v; want another leader at epoch 1, an ISR without it", f, p0)
	}
	testkit.WaitFor(t, "the one-replica partition led by the restarted broker", func() (bool, string) {
		p := partitionOf(t, q.nodes[f], "solo", 0)
		return p.Leader == int32(f) && p.LeaderEpoch > 0, fmt.Sprintf("%+v", p)
	})
}

// TestQuorumFenceExited: a broker whose process exited is fenced at once
// when FenceExited is asked, on any node, though its session (60 s here)
// has long to run: it leaves every ISR, a partition it led gets another
// leader at a new epoch, and no session expiry is needed for either.
func TestQuorumFenceExited(t *testing.T) {
	q, _, f, other := longSessionQuorum(t)
	ctx := ctxT(t)
	q.waitTopic("t")
	q.stop(f)
	if err := q.nodes[other].FenceExited(ctx, int32(f)); err != nil {
		t.Fatal(err)
	}
	if b := q.nodes[other].Image().Brokers[int32(f)]; !b.Fenced {
		t.Fatalf("broker %d after FenceExited: %+v, want fenced", f, b)
	}
	testkit.WaitFor(t, "t-0 led by another broker, without the exited one in its ISR", func() (bool, string) {
		p := partitionOf(t, q.nodes[other], "t", 0)
		return p.Leader >= 0 && p.Leader != int32(f) && p.LeaderEpoch == 1 && !slices.Contains(p.ISR, int32(f)), fmt.Sprintf("%+v", p)
	})
	if err := q.nodes[other].FenceExited(ctx, int32(f)); err != nil {
		t.Errorf("FenceExited of a fenced broker: %v", err)
	}
	if err := q.nodes[other].FenceExited(ctx, 7); !errors.Is(err, ErrUnknownBroker) {
		t.Errorf("FenceExited of broker 7: %v, want ErrUnknownBroker", err)
	}
}
