package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
)

// askTimeout bounds the questions to one node: a node cut off from the
// others may hold a quorum question until it gives up.
const askTimeout = 3 * time.Second

// lagAfter is how far behind the quorum's most recent fetch a node's
// last catch-up may be before its metadata counts as stale.
const lagAfter = 5 * time.Second

// nodes is what KafkaSource knows of the cluster's nodes across
// refreshes: a client to each address, asking that node alone, and every
// node seen with its address, so that one gone from every answer is still
// asked, and shown down.
type nodes struct {
	mu      sync.Mutex
	clients map[string]*kgo.Client // by address
	seen    map[int32]string       // address by node id
}

// client returns the client asking the node at addr alone.
func (s *KafkaSource) nodeClient(addr string) (*kgo.Client, error) {
	s.nodes.mu.Lock()
	defer s.nodes.mu.Unlock()
	if c, ok := s.nodes.clients[addr]; ok {
		return c, nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTimeout(askTimeout)}
	var c *kgo.Client
	var err error
	if s.newClient != nil {
		c, err = s.newClient(opts...)
	} else {
		c, err = kgo.NewClient(opts...)
	}
	if err != nil {
		return nil, err
	}
	if s.nodes.clients == nil {
		s.nodes.clients, s.nodes.seen = map[string]*kgo.Client{}, map[int32]string{}
	}
	s.nodes.clients[addr] = c
	return c, nil
}

// Close closes the clients of the nodes asked.
func (s *KafkaSource) Close() {
	s.nodes.mu.Lock()
	defer s.nodes.mu.Unlock()
	for addr, c := range s.nodes.clients {
		c.Close()
		delete(s.nodes.clients, addr)
	}
}

// askAll asks every node known directly, at once: those seen before,
// those the client knows, and those the answers name.
func (s *KafkaSource) askAll(ctx context.Context) []inspect.NodeAnswer {
	addrs := map[string]bool{}
	s.nodes.mu.Lock()
	for _, a := range s.nodes.seen {
		addrs[a] = true
	}
	s.nodes.mu.Unlock()
	if bs, err := s.adm.BrokerMetadata(ctx); err == nil {
		for _, b := range bs.Brokers {
			addrs[fmt.Sprintf("%s:%d", b.Host, b.Port)] = true
		}
	}
	var out []inspect.NodeAnswer
	asked := map[string]bool{}
	for len(addrs) > 0 { // a second round asks the nodes the first named
		out = append(out, s.ask(ctx, addrs)...)
		for a := range addrs {
			asked[a] = true
		}
		addrs = map[string]bool{}
		for _, a := range out {
			for _, b := range a.Registered {
				if !asked[b.Address] {
					addrs[b.Address] = true
				}
			}
			if a.Overview != nil {
				for _, b := range a.Overview.Brokers {
					if !asked[b.Address] {
						addrs[b.Address] = true
					}
				}
			}
		}
	}
	return out
}

// ask asks the nodes at addrs at once.
func (s *KafkaSource) ask(ctx context.Context, addrs map[string]bool) []inspect.NodeAnswer {
	out := make([]inspect.NodeAnswer, 0, len(addrs))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for addr := range addrs {
		wg.Go(func() {
			a := inspect.NodeAnswer{Addr: addr}
			if c, err := s.nodeClient(addr); err != nil {
				a.MetadataErr = err
			} else {
				actx, cancel := context.WithTimeout(ctx, askTimeout)
				a = inspect.AskNode(actx, c.SeedBrokers()[0], addr)
				cancel()
			}
			mu.Lock()
			out = append(out, a)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b inspect.NodeAnswer) int { return cmp.Compare(a.Addr, b.Addr) })
	return out
}

// Overview implements Source: every node asked directly, the counts from
// the freshest metadata among their answers.
func (s *KafkaSource) Overview(ctx context.Context) (ClusterState, error) {
	answers := s.askAll(ctx)
	s.nodes.mu.Lock()
	seen := maps.Clone(s.nodes.seen)
	s.nodes.mu.Unlock()
	st, err := clusterState(answers, seen)
	s.nodes.mu.Lock()
	for _, n := range st.Nodes {
		if n.Address != "" {
			s.nodes.seen[n.NodeID] = n.Address
		}
	}
	s.nodes.mu.Unlock()
	return st, err
}

// clusterState makes the cluster's state of the nodes' answers and the
// nodes seen before (address by id).
func clusterState(answers []inspect.NodeAnswer, seen map[int32]string) (ClusterState, error) {
	st := ClusterState{From: -1}
	var fresh *inspect.NodeAnswer
	var quorum *inspect.Quorum
	var registered []inspect.RegisteredBroker
	var firstErr, quorumErr error
	for i := range answers {
		a := &answers[i]
		if a.Overview == nil {
			firstErr = cmp.Or(firstErr, a.MetadataErr)
			continue
		}
		if fresh == nil || a.LeaderEpochs > fresh.LeaderEpochs {
			fresh = a
		}
		if a.Registered != nil && (registered == nil || a == fresh) {
			registered = a.Registered
		}
		switch q := a.Quorum; {
		case q != nil && (quorum == nil || q.LeaderEpoch > quorum.LeaderEpoch || q.LeaderEpoch == quorum.LeaderEpoch && q.HighWatermark > quorum.HighWatermark):
			quorum = q
		case q == nil && (errors.Is(a.QuorumErr, inspect.ErrNoQuorumLeader) || errors.Is(a.QuorumErr, context.DeadlineExceeded)):
			quorumErr = cmp.Or(quorumErr, a.QuorumErr) // other errors: a cluster without the question
		}
	}
	if fresh == nil {
		if firstErr == nil {
			firstErr = errors.New("no node known")
		}
		return st, fmt.Errorf("no node answered: %w", firstErr)
	}
	st.Overview = *fresh.Overview
	st.Nodes = nodeHealth(answers, st.Overview, registered, quorum, seen)
	for _, n := range st.Nodes {
		if n.Address == fresh.Addr {
			st.From = n.NodeID
		}
	}
	st.Stale = staleness(st.From, quorum, quorumErr)
	return st, nil
}

// nodeHealth lists every node known: in the freshest metadata, the
// registrations, the quorum or seen before, each with whether it answered.
func nodeHealth(answers []inspect.NodeAnswer, o inspect.ClusterOverview, registered []inspect.RegisteredBroker,
	quorum *inspect.Quorum, seen map[int32]string) []NodeHealth {
	byID := map[int32]*NodeHealth{}
	node := func(id int32) *NodeHealth {
		if n, ok := byID[id]; ok {
			return n
		}
		n := &NodeHealth{NodeID: id, Address: seen[id]}
		byID[id] = n
		return n
	}
	for id := range seen {
		node(id)
	}
	for _, b := range registered {
		n := node(b.NodeID)
		n.Address, n.Rack, n.Fenced = b.Address, b.Rack, b.Fenced
	}
	for _, b := range o.Brokers {
		n := node(b.NodeID)
		n.Address, n.Rack, n.Listed = b.Address, b.Rack, true
	}
	if quorum != nil {
		for _, r := range quorum.Replicas {
			n := node(r.NodeID)
			n.InQuorum, n.Voter, n.LastFetch = true, r.Voter, r.LastFetch
		}
	}
	out := make([]NodeHealth, 0, len(byID))
	for _, n := range byID {
		n.Err = "address unknown"
		for _, a := range answers {
			if a.Addr != n.Address || n.Address == "" {
				continue
			}
			n.Reachable, n.Err = a.Overview != nil, ""
			if a.MetadataErr != nil {
				n.Err = a.MetadataErr.Error()
			}
		}
		if n.Err == "address unknown" && n.Address != "" {
			n.Err = "not asked"
		}
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b NodeHealth) int { return cmp.Compare(a.NodeID, b.NodeID) })
	return out
}

// staleness says why the metadata of node from may be out of date, ""
// when it is current: no quorum leader, or from lagging it.
func staleness(from int32, quorum *inspect.Quorum, quorumErr error) string {
	if quorum == nil {
		if quorumErr == nil {
			return "" // not asked, or a cluster without the question
		}
		if errors.Is(quorumErr, context.DeadlineExceeded) {
			return fmt.Sprintf("metadata quorum lost: no node reached its leader in %s", askTimeout)
		}
		return "metadata quorum lost: no node knows its leader"
	}
	var latest time.Time
	for _, r := range quorum.Replicas {
		latest = later(latest, r.LastFetch)
	}
	r, ok := quorum.Replica(from)
	if !ok || r.LastCaughtUp.IsZero() || from == quorum.LeaderID {
		return ""
	}
	if lag := latest.Sub(r.LastCaughtUp); lag > lagAfter {
		return fmt.Sprintf("node %d's metadata lags the quorum by %s", from, lag.Truncate(time.Second))
	}
	return ""
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
