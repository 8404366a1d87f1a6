package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/inspect"
)

// TestClusterState: the counts come from the answer with the newest
// metadata; a node that did not answer, or only some node remembers, is
// listed down; the counts are stale when no node knows a quorum leader,
// or the node they come from lags the quorum.
func TestClusterState(t *testing.T) {
	at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	overview := func(under int, ids ...int32) *inspect.ClusterOverview {
		o := &inspect.ClusterOverview{Controller: 0, UnderReplicated: under}
		for _, id := range ids {
			o.Brokers = append(o.Brokers, inspect.Broker{NodeID: id, Address: addr(id)})
		}
		return o
	}
	quorum := &inspect.Quorum{LeaderID: 0, LeaderEpoch: 4, HighWatermark: 90, Replicas: []inspect.QuorumReplica{
		{NodeID: 0, Voter: true, LastFetch: at, LastCaughtUp: at},
		{NodeID: 1, Voter: true, LastFetch: at.Add(-time.Second), LastCaughtUp: at.Add(-time.Second)},
		{NodeID: 2, Voter: true, LastFetch: at.Add(-20 * time.Second), LastCaughtUp: at.Add(-20 * time.Second)},
	}}
	answers := []inspect.NodeAnswer{
		{Addr: addr(0), Overview: overview(5, 0, 1), LeaderEpochs: 30, Quorum: quorum,
			Registered: []inspect.RegisteredBroker{{NodeID: 0, Address: addr(0)}, {NodeID: 1, Address: addr(1)}, {NodeID: 2, Address: addr(2), Fenced: true}}},
		{Addr: addr(1), Overview: overview(5, 0, 1), LeaderEpochs: 30, Quorum: quorum},
		{Addr: addr(2), Overview: overview(0, 0, 1, 2), LeaderEpochs: 12, QuorumErr: inspect.ErrNoQuorumLeader}, // cut off
		{Addr: addr(3), MetadataErr: errors.New("connection refused")},
	}
	st, err := clusterState(answers, map[int32]string{3: addr(3), 4: addr(4)})
	if err != nil || st.From != 0 || st.Overview.UnderReplicated != 5 || st.Stale != "" {
		t.Fatalf("state = %+v, %v; want node 0's counts, fresh", st, err)
	}
	down := map[int32]string{}
	for _, n := range st.Nodes {
		if n.Down() {
			down[n.NodeID] = n.Err
		}
	}
	if len(st.Nodes) != 5 || len(down) != 3 || down[3] != "connection refused" || down[4] != "not asked" || !st.Nodes[2].Fenced || !st.Nodes[2].Reachable {
		t.Errorf("nodes = %+v; want 5, nodes 2 (fenced), 3 and 4 down", st.Nodes)
	}

	// Only the node cut off answers: its metadata is the freshest there
	// is, and stale.
	st, _ = clusterState(answers[2:], nil)
	if st.From != 2 || !strings.Contains(st.Stale, "metadata quorum lost: no node knows its leader") {
		t.Errorf("state of the cut-off node alone = %+v", st)
	}
	timedOut := []inspect.NodeAnswer{{Addr: addr(2), Overview: overview(0, 2), QuorumErr: context.DeadlineExceeded}}
	if st, _ := clusterState(timedOut, nil); !strings.Contains(st.Stale, "no node reached its leader") {
		t.Errorf("state with the quorum question timing out = %+v", st)
	}
	// A node that fetched the metadata log 20 s before the others lags.
	lagging := []inspect.NodeAnswer{{Addr: addr(2), Overview: overview(0, 2), LeaderEpochs: 40, Quorum: quorum}}
	if st, _ := clusterState(lagging, nil); !strings.Contains(st.Stale, "node 2's metadata lags the quorum by 20s") {
		t.Errorf("state of a lagging node = %+v", st)
	}
	// A cluster without the quorum question is not stale for it.
	old := []inspect.NodeAnswer{{Addr: addr(0), Overview: overview(0, 0), QuorumErr: errors.New("broker is too old")}}
	if st, _ := clusterState(old, nil); st.Stale != "" {
		t.Errorf("state without DescribeQuorum = %+v", st)
	}
	if _, err := clusterState(answers[3:], nil); err == nil || !strings.Contains(err.Error(), "no node answered: connection refused") {
		t.Errorf("no node answering: %v", err)
	}
}

func addr(id int32) string { return "127.0.0.1:" + string(rune('0'+id)) + "092" }
