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

// remove takes partition p of topic out of a, and the topic too when it
// was its last partition.
func (a assignment) remove(topic string, p int32) {
	ps := a[topic]
	for i, q := range ps {
		if q == p {
			a[topic] = append(ps[:i:i], ps[i+1:]...)
			break
		}
	}
	if len(a[topic]) == 0 {
		delete(a, topic)
	}
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

// subscribers are the ids of the members subscribed to topic, in id
// order.
func (in assignInput) subscribers(topic string) []string {
	var out []string
	for _, m := range in.members {
		if m.subscribed[topic] {
			out = append(out, m.id)
		}
	}
	return out
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
		subs := in.subscribers(name)
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
	u := newUniformAssigner(in)
	u.keepCurrent()
	u.assignFree()
	u.evenOut()
	return u.out
}

// uniformAssigner is the state of assignUniform.
type uniformAssigner struct {
	in    assignInput
	all   []tp                  // every partition, by topic name then number
	out   map[string]assignment // by member id
	owner map[tp]string         // the member each assigned partition went to
}

// newUniformAssigner lists the partitions of in and starts every member
// with an empty assignment.
func newUniformAssigner(in assignInput) *uniformAssigner {
	u := &uniformAssigner{in: in, out: make(map[string]assignment, len(in.members)), owner: make(map[tp]string)}
	for _, m := range in.members {
		u.out[m.id] = make(assignment)
	}
	for _, name := range sortedTopics(in.topics) {
		for p := int32(0); p < in.topics[name].Partitions; p++ {
			u.all = append(u.all, tp{name, p})
		}
	}
	return u
}

// eligible returns the ids of the members subscribed to t's topic.
func (u *uniformAssigner) eligible(t tp) []string {
	var ids []string
	for _, m := range u.in.members {
		if m.subscribed[t.topic] {
			ids = append(ids, m.id)
		}
	}
	return ids
}

// fewest returns the one of ids with the fewest partitions so far, the
// first of them on a tie.
func (u *uniformAssigner) fewest(ids []string) string {
	best := ""
	for _, id := range ids {
		if best == "" || u.out[id].count() < u.out[best].count() {
			best = id
		}
	}
	return best
}

// keepCurrent gives each member back the partitions it owned that it is
// still subscribed to and that still exist, up to a quota: no member keeps
// more than the even share of the partitions some member can own.
func (u *uniformAssigner) keepCurrent() {
	total := 0
	for _, t := range u.all {
		if len(u.eligible(t)) > 0 {
			total++
		}
	}
	limit := 0
	if len(u.in.members) > 0 {
		limit = (total + len(u.in.members) - 1) / len(u.in.members)
	}
	for _, m := range u.in.members {
		for topic, ps := range m.current {
			for _, p := range ps {
				t := tp{topic, p}
				if _, taken := u.owner[t]; taken || !m.subscribed[topic] || u.in.topics[topic].Partitions <= p {
					continue
				}
				if u.out[m.id].count() < limit {
					u.owner[t] = m.id
					u.out[m.id].add(topic, p)
				}
			}
		}
	}
}

// assignFree gives each partition without an owner to the eligible member
// with the fewest partitions.
func (u *uniformAssigner) assignFree() {
	for _, t := range u.all {
		if _, ok := u.owner[t]; ok {
			continue
		}
		ids := u.eligible(t)
		if len(ids) == 0 {
			continue
		}
		id := u.fewest(ids)
		u.owner[t] = id
		u.out[id].add(t.topic, t.part)
	}
}

// evenOut evens out heterogeneous subscriptions: it moves partitions from
// a member with two or more over an eligible one. Each move lowers the
// spread, and the loop is bounded by the partition count.
func (u *uniformAssigner) evenOut() {
	for range u.all {
		moved := false
		for _, t := range u.all {
			from, ok := u.owner[t]
			if !ok {
				continue
			}
			to := u.fewest(u.eligible(t))
			if u.out[from].count()-u.out[to].count() < 2 {
				continue
			}
			u.out[from].remove(t.topic, t.part)
			u.owner[t] = to
			u.out[to].add(t.topic, t.part)
			moved = true
		}
		if !moved {
			break
		}
	}
}

// assignSimple is the share groups' assignor (KIP-932's simple assignor):
// each topic's partitions go round-robin over the members subscribed to
// it, in member id order; with more members than partitions every member
// gets one partition and each partition is shared by several members, so
// that every member has records to fetch. It does not keep previous
// assignments: share-partition state is on the partition leader, not with
// a member, so a partition moving costs a member nothing but in-flight
// records it had not acknowledged, which are delivered again.
func assignSimple(in assignInput) map[string]assignment {
	out := make(map[string]assignment, len(in.members))
	for _, m := range in.members {
		out[m.id] = make(assignment)
	}
	for _, name := range sortedTopics(in.topics) {
		subs := in.subscribers(name)
		n := int(in.topics[name].Partitions)
		if len(subs) == 0 || n == 0 {
			continue
		}
		for i := 0; i < max(n, len(subs)); i++ {
			out[subs[i%len(subs)]].add(name, int32(i%n))
		}
	}
	return out
}
