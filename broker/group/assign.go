package group

import (
	"sort"
)

// assignment maps topic name to sorted partitions.
type assignment map[string][]int32

// assignInput is what a server-side assignor sees.
type assignInput struct {
	members []assignMember       // sorted by id
	topics  map[string]TopicInfo // every topic some member subscribes to
}

type assignMember struct {
	id         string
	subscribed map[string]bool
	current    assignment // the previous target, for stickiness
}

// tp is one topic partition.
type tp struct {
	topic string
	part  int32
}

func (a assignment) clone() assignment {
	out := make(assignment, len(a))
	for t, ps := range a {
		out[t] = append([]int32(nil), ps...)
	}
	return out
}

func (a assignment) has(topic string, p int32) bool {
	for _, q := range a[topic] {
		if q == p {
			return true
		}
	}
	return false
}

func (a assignment) add(topic string, p int32) {
	ps := append(a[topic], p)
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	a[topic] = ps
}

func (a assignment) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

// equal reports whether a and b hold the same partitions.
func (a assignment) equal(b assignment) bool {
	if a.count() != b.count() {
		return false
	}
	for t, ps := range a {
		for _, p := range ps {
			if !b.has(t, p) {
				return false
			}
		}
	}
	return true
}

// minus returns the partitions of a not in b.
func (a assignment) minus(b assignment) assignment {
	out := make(assignment)
	for t, ps := range a {
		for _, p := range ps {
			if !b.has(t, p) {
				out[t] = append(out[t], p)
			}
		}
	}
	return out
}

// intersect returns the partitions in both a and b.
func (a assignment) intersect(b assignment) assignment {
	out := make(assignment)
	for t, ps := range a {
		for _, p := range ps {
			if b.has(t, p) {
				out[t] = append(out[t], p)
			}
		}
	}
	return out
}

func sortedTopics(topics map[string]TopicInfo) []string {
	names := make([]string, 0, len(topics))
	for n := range topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// assignRange gives each topic's partitions to the members subscribed to it
// in contiguous ranges, members ordered by id, the first ones taking one
// extra partition when the division is uneven.
func assignRange(in assignInput) map[string]assignment {
	out := make(map[string]assignment, len(in.members))
	for _, m := range in.members {
		out[m.id] = make(assignment)
	}
	for _, name := range sortedTopics(in.topics) {
		var subs []string
		for _, m := range in.members {
			if m.subscribed[name] {
				subs = append(subs, m.id)
			}
		}
		if len(subs) == 0 {
			continue
		}
		n := int(in.topics[name].Partitions)
		per, extra := n/len(subs), n%len(subs)
		next := 0
		for i, id := range subs {
			take := per
			if i < extra {
				take++
			}
			for p := next; p < next+take; p++ {
				out[id][name] = append(out[id][name], int32(p))
			}
			next += take
		}
	}
	return out
}

// assignUniform spreads partitions evenly over the members subscribed to
// them, keeping each partition with its previous owner where balance
// allows.
func assignUniform(in assignInput) map[string]assignment {
	out := make(map[string]assignment, len(in.members))
	for _, m := range in.members {
		out[m.id] = make(assignment)
	}
	var all []tp
	for _, name := range sortedTopics(in.topics) {
		for p := int32(0); p < in.topics[name].Partitions; p++ {
			all = append(all, tp{name, p})
		}
	}
	eligible := func(t tp) []string {
		var ids []string
		for _, m := range in.members {
			if m.subscribed[t.topic] {
				ids = append(ids, m.id)
			}
		}
		return ids
	}
	// Quota for stickiness: no member keeps more than the even share of
	// what it could own.
	total := 0
	for _, t := range all {
		if len(eligible(t)) > 0 {
			total++
		}
	}
	limit := 0
	if len(in.members) > 0 {
		limit = (total + len(in.members) - 1) / len(in.members)
	}
	owner := make(map[tp]string)
	for _, m := range in.members {
		for topic, ps := range m.current {
			for _, p := range ps {
				t := tp{topic, p}
				if _, taken := owner[t]; taken || !m.subscribed[topic] || in.topics[topic].Partitions <= p {
					continue
				}
				if out[m.id].count() < limit {
					owner[t] = m.id
					out[m.id].add(topic, p)
				}
			}
		}
	}
	fewest := func(ids []string) string {
		best := ""
		for _, id := range ids {
			if best == "" || out[id].count() < out[best].count() {
				best = id
			}
		}
		return best
	}
	for _, t := range all {
		if _, ok := owner[t]; ok {
			continue
		}
		ids := eligible(t)
		if len(ids) == 0 {
			continue
		}
		id := fewest(ids)
		owner[t] = id
		out[id].add(t.topic, t.part)
	}
	// Even out heterogeneous subscriptions: move partitions from a member
	// with two or more over an eligible one. Each move lowers the spread,
	// and the loop is bounded by the partition count.
	for range all {
		moved := false
		for _, t := range all {
			from, ok := owner[t]
			if !ok {
				continue
			}
			to := fewest(eligible(t))
			if out[from].count()-out[to].count() < 2 {
				continue
			}
			ps := out[from][t.topic]
			for i, p := range ps {
				if p == t.part {
					out[from][t.topic] = append(ps[:i:i], ps[i+1:]...)
					break
				}
			}
			if len(out[from][t.topic]) == 0 {
				delete(out[from], t.topic)
			}
			owner[t] = to
			out[to].add(t.topic, t.part)
			moved = true
		}
		if !moved {
			break
		}
	}
	return out
}
