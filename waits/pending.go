package waits

import (
	"sync/atomic"
	"time"
)

// The hooks count each produced record three times (buffered,
// partitioned, finished), so the counting takes no lock and reads no
// clock: a topic's counts are found once per topic, a partition's by its
// index, and a record is stamped with the watcher's clock, which Run sets
// every clockTick.

// clockTick is how often Run sets the clock the hooks read: a wait's start
// and a delivery are stamped at most clockTick early.
const clockTick = tick / 2

// pendingBits is the width of the pending count in a partWait's state;
// the count stays at its largest value, far above what a client buffers.
const (
	pendingBits = 24
	pendingMax  = 1<<pendingBits - 1
)

// partWait is what a partition's records wait for: how many are pending
// and since when, in milliseconds after the watcher's epoch, the oldest
// pending record was buffered or, if later, the last record was
// delivered. Both are in one word (since above pendingBits) that the hooks
// change without a lock.
type partWait struct {
	state    atomic.Uint64
	reported atomic.Bool // set under the watcher's mu
}

func (pw *partWait) load() (pending int, since int64) {
	s := pw.state.Load()
	return int(s & pendingMax), int64(s >> pendingBits)
}

// add counts a record pending from now on, the wait's start if none was.
func (pw *partWait) add(now int64) {
	for {
		old := pw.state.Load()
		n, since := old&pendingMax, old>>pendingBits
		if n == 0 {
			since = uint64(now)
		}
		if n < pendingMax {
			n++
		}
		if pw.state.CompareAndSwap(old, since<<pendingBits|n) {
			return
		}
	}
}

// remove counts a record no longer pending, delivered now or not, and
// returns since as it was.
func (pw *partWait) remove(now int64, delivered bool) (since int64) {
	for {
		old := pw.state.Load()
		n, s := old&pendingMax, old>>pendingBits
		if n > 0 {
			n--
		}
		if delivered {
			s = uint64(now)
		}
		if pw.state.CompareAndSwap(old, s<<pendingBits|n) {
			return int64(old >> pendingBits)
		}
	}
}

// topicWait holds the partWaits of a topic.
type topicWait struct {
	name   string
	unpart partWait                    // its records not yet partitioned
	parts  atomic.Pointer[[]*partWait] // by partition, replaced under mu to grow
}

// topic returns the counts of topic, added if new: the topic the hooks saw
// last, or one from a map replaced (under mu) when a topic is added.
func (wt *Watcher) topic(name string) *topicWait {
	if t := wt.lastTopic.Load(); t != nil && t.name == name {
		return t
	}
	t := (*wt.topics.Load())[name]
	if t == nil {
		wt.mu.Lock()
		if t = (*wt.topics.Load())[name]; t == nil {
			t = &topicWait{name: name}
			t.parts.Store(new([]*partWait))
			m := make(map[string]*topicWait, len(*wt.topics.Load())+1)
			for k, v := range *wt.topics.Load() {
				m[k] = v
			}
			m[name] = t
			wt.topics.Store(&m)
		}
		wt.mu.Unlock()
	}
	wt.lastTopic.Store(t)
	return t
}

// part returns the counts of partition p (-1: the records not yet
// partitioned); grow adds a partition not seen yet, else part returns nil
// for it.
func (wt *Watcher) part(t *topicWait, p int32, grow bool) *partWait {
	if p < 0 {
		return &t.unpart
	}
	if ps := *t.parts.Load(); int(p) < len(ps) {
		return ps[p]
	}
	if !grow {
		return nil
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	ps := *t.parts.Load()
	if int(p) < len(ps) {
		return ps[p]
	}
	grown := make([]*partWait, p+1)
	copy(grown, ps)
	for i := len(ps); i < len(grown); i++ {
		grown[i] = new(partWait)
	}
	t.parts.Store(&grown)
	return grown[p]
}

// eachPart calls f for every partition (and topic, as partition -1) that
// had records pending; the caller holds mu.
func (wt *Watcher) eachPart(f func(tp topicPartition, pw *partWait)) {
	for name, t := range *wt.topics.Load() {
		f(topicPartition{name, -1}, &t.unpart)
		for p, pw := range *t.parts.Load() {
			f(topicPartition{name, int32(p)}, pw)
		}
	}
}

// setClock sets the clock the hooks read to now.
func (wt *Watcher) setClock(now time.Time) {
	wt.clock.Store(max(0, now.Sub(wt.epoch).Milliseconds()))
}

// at is the time of a stamp of the hooks' clock.
func (wt *Watcher) at(ms int64) time.Time {
	return wt.epoch.Add(time.Duration(ms) * time.Millisecond)
}
