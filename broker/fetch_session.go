package broker

// Incremental fetch sessions (KIP-227).
//
// A consumer or follower fetching many partitions sends, in a session,
// only the partitions whose fetch position changed, and gets back only
// the partitions with something new: records, a new high watermark or log
// start offset, an error, a preferred read replica or a diverging epoch.
// The node keeps each session's partitions and what it last answered for
// them. The rules are Kafka's FetchManager:
//
//   - Session id 0 and epoch -1: a full fetch, no session (klog's own
//     followers fetch so).
//   - Epoch 0: a full fetch that asks for a session. The node closes the
//     session the request names, if any, and creates one when a slot is
//     free or can be taken (below); the response carries its id, or 0
//     when none was created and the client keeps sending full fetches.
//   - Epoch -1 with a session id: the session is closed and the fetch
//     answered in full without one.
//   - Any other epoch n (below -1 too): an incremental fetch of session
//     id at epoch n.
//     FETCH_SESSION_ID_NOT_FOUND when the node holds no such session,
//     INVALID_FETCH_SESSION_EPOCH when its epoch is another (a duplicate
//     or lost request), FETCH_SESSION_TOPIC_ID_ERROR when the request's
//     version names topics otherwise than the session was created with
//     (ids from v13). Otherwise the request's partitions are added to or
//     updated in the session, its forgotten topics removed, and every
//     partition of the session is read; a session left with no partition
//     is closed and the fetch answered sessionless. Partitions that return
//     records move to the end of the session, so that in a response
//     bounded by max bytes every partition gets its turn.
//
// Versions before 7 have no session fields and always fetch in full.
//
// Slots. max.incremental.fetch.session.cache.slots bounds the sessions a
// node holds (0 creates none). When all are taken, a new session takes
// the slot of the least recently used session if that one is idle for
// longer than fetchSessionEvictAfter; otherwise that of the smallest
// session that may be evicted: a consumer's session is evictable by a
// follower's at any time, and by anyone's once it is older than
// fetchSessionEvictAfter, and only by a session with more partitions (or
// a follower's session over a consumer's of any size). klog only: a
// session holds at most klog.max.partitions partitions and all sessions
// together at most maxSessionPartitions, so that no client can make the
// node cache more than it could serve; a full fetch over those bounds is
// answered without a session, and an incremental one that would pass them
// closes its session with FETCH_SESSION_ID_NOT_FOUND, after which the
// client starts over with a full fetch.

import (
	"container/list"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchSessionEvictAfter is how long a session must be idle before any
// new session may take its slot, and how old before one with more
// partitions may (Kafka's min.incremental.fetch.session.eviction.ms).
const fetchSessionEvictAfter = 2 * time.Minute

// maxSessionPartitions bounds the partitions all fetch sessions of a node
// hold together (about 150 bytes each).
const maxSessionPartitions = 200_000

// fetchSessionKey names a partition of a session: by topic id in the
// sessions of v13+ requests, by name before.
type fetchSessionKey struct {
	id        [16]byte
	topic     string
	partition int32
}

// sessionPartition is a partition of a session: the fetch position last
// asked for, and what the last response said of it.
type sessionPartition struct {
	key                fetchSessionKey
	fetchOffset        int64
	maxBytes           int32
	logStartOffset     int64 // the follower's, -1 for consumers
	currentLeaderEpoch int32
	lastFetchedEpoch   int32
	// highWatermark and localLogStartOffset were last answered; -1 (or an
	// error answered) makes the next response carry the partition.
	highWatermark       int64
	localLogStartOffset int64
	elem                *list.Element // in fetchSession.order
}

// fetchSession is a session's state. Its partitions form a list, order,
// in the order they are read; byKey finds them.
type fetchSession struct {
	id         int32
	privileged bool // a follower's
	topicIDs   bool // created by a v13+ request
	created    time.Time

	// Guarded by the cache's mutex.
	epoch    int32
	lastUsed time.Time
	byKey    map[fetchSessionKey]*sessionPartition
	order    list.List // of *sessionPartition
}

func (s *fetchSession) pushBack(p *sessionPartition) { p.elem = s.order.PushBack(p) }

func (s *fetchSession) unlink(p *sessionPartition) { s.order.Remove(p.elem) }

// evictable reports whether a new session (a follower's when privileged)
// may take s's slot when s is not idle: Kafka's evictableByPrivileged and
// evictableByAll, judged at the session's last use.
func (s *fetchSession) evictable(privileged bool) bool {
	old := s.lastUsed.Sub(s.created) > fetchSessionEvictAfter
	if privileged {
		return !s.privileged || old
	}
	return old
}

// fetchSessions is a node's fetch session cache.
type fetchSessions struct {
	mu         sync.Mutex
	byID       map[int32]*fetchSession
	partitions int // held by all sessions
	evictions  int64
}

func newFetchSessions() *fetchSessions {
	return &fetchSessions{byID: make(map[int32]*fetchSession)}
}

// FetchSessionStats is what a node's fetch session cache holds.
type FetchSessionStats struct {
	Sessions   int   // sessions held
	Partitions int   // partitions of all sessions
	Evictions  int64 // sessions whose slot a new session took
}

// FetchSessionStats reports the node's incremental fetch sessions.
func (n *Node) FetchSessionStats() FetchSessionStats {
	c := n.fetchSessions
	c.mu.Lock()
	defer c.mu.Unlock()
	return FetchSessionStats{Sessions: len(c.byID), Partitions: c.partitions, Evictions: c.evictions}
}

func (c *fetchSessions) removeLocked(s *fetchSession) {
	if c.byID[s.id] == s {
		delete(c.byID, s.id)
		c.partitions -= len(s.byKey)
	}
}

// tryEvictLocked frees a slot for a new session of size partitions, as
// Kafka's FetchSessionCache.tryEvict, and reports whether it did.
func (c *fetchSessions) tryEvictLocked(privileged bool, size int, now time.Time) bool {
	var lru, victim *fetchSession
	for _, s := range c.byID {
		if lru == nil || s.lastUsed.Before(lru.lastUsed) || s.lastUsed.Equal(lru.lastUsed) && s.id < lru.id {
			lru = s
		}
		if !s.evictable(privileged) {
			continue
		}
		if victim == nil || evictOrder(s, victim) {
			victim = s
		}
	}
	switch {
	case lru == nil:
		return false
	case now.Sub(lru.lastUsed) > fetchSessionEvictAfter:
		victim = lru
	case victim == nil:
		return false
	case !privileged && victim.privileged, privileged == victim.privileged && size <= len(victim.byKey):
		// The newcomer must outrank the victim: a follower's over a
		// consumer's, or more partitions at the same rank.
		return false
	}
	c.removeLocked(victim)
	c.evictions++
	return true
}

// evictOrder reports whether a goes before b among eviction candidates:
// consumers' before followers', then fewer partitions, then lower id.
func evictOrder(a, b *fetchSession) bool {
	if a.privileged != b.privileged {
		return !a.privileged
	}
	if len(a.byKey) != len(b.byKey) {
		return len(a.byKey) < len(b.byKey)
	}
	return a.id < b.id
}

// newIDLocked picks an unused session id, never 0.
func (c *fetchSessions) newIDLocked() int32 {
	for {
		id := rand.Int32N(math.MaxInt32-1) + 1
		if _, taken := c.byID[id]; !taken {
			return id
		}
	}
}

// nextFetchEpoch is the epoch after e: epochs run 1, 2, ... MaxInt32 and
// wrap to 1; a negative epoch stays what it is.
func nextFetchEpoch(e int32) int32 {
	switch {
	case e < 0:
		return e
	case e == math.MaxInt32:
		return 1
	default:
		return e + 1
	}
}

// fetchContext is how one fetch request is answered with respect to
// sessions.
type fetchContext struct {
	// req is what is read: the request itself, or for an incremental
	// fetch the request with every partition of the session.
	req *kmsg.FetchRequest
	// errCode is a session error to answer with, and no partitions.
	errCode int16
	// create asks for a new session from the full response.
	create bool
	// session is the incremental fetch's session, at epoch epoch.
	session *fetchSession
	epoch   int32
}

// newFetchContext decides how req is answered: sessionless, as a full
// fetch that may create a session, or incrementally in a session.
func (n *Node) newFetchContext(req *kmsg.FetchRequest) *fetchContext {
	if req.Version < 7 {
		return &fetchContext{req: req}
	}
	c := n.fetchSessions
	now := n.clock.Now()
	if req.SessionEpoch == 0 || req.SessionEpoch == -1 {
		// A full fetch closes the session it names. Any other epoch,
		// negative ones too, is incremental (Kafka's isFull).
		if req.SessionID != 0 {
			c.mu.Lock()
			if s, ok := c.byID[req.SessionID]; ok {
				c.removeLocked(s)
			}
			c.mu.Unlock()
		}
		return &fetchContext{req: req, create: req.SessionEpoch == 0}
	}
	topicIDs := req.Version >= 13
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byID[req.SessionID]
	switch {
	case !ok:
		return &fetchContext{req: req, errCode: kerr.FetchSessionIDNotFound.Code}
	case s.epoch != req.SessionEpoch:
		return &fetchContext{req: req, errCode: kerr.InvalidFetchSessionEpoch.Code}
	case s.topicIDs != topicIDs:
		return &fetchContext{req: req, errCode: kerr.FetchSessionTopicIDError.Code}
	}
	before := len(s.byKey)
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			k := sessionKey(topicIDs, rt.TopicID, rt.Topic, rp.Partition)
			sp := s.byKey[k]
			if sp == nil {
				sp = &sessionPartition{key: k, highWatermark: -1, localLogStartOffset: -1}
				s.byKey[k] = sp
				s.pushBack(sp)
			}
			sp.fetchOffset, sp.maxBytes, sp.logStartOffset = rp.FetchOffset, rp.PartitionMaxBytes, rp.LogStartOffset
			sp.currentLeaderEpoch, sp.lastFetchedEpoch = rp.CurrentLeaderEpoch, rp.LastFetchedEpoch
		}
	}
	for _, ft := range req.ForgottenTopics {
		for _, p := range ft.Partitions {
			k := sessionKey(topicIDs, ft.TopicID, ft.Topic, p)
			if sp := s.byKey[k]; sp != nil {
				s.unlink(sp)
				delete(s.byKey, k)
			}
		}
	}
	c.partitions += len(s.byKey) - before
	if len(s.byKey) > int(n.settings().MaxPartitions) || c.partitions > maxSessionPartitions {
		c.removeLocked(s)
		return &fetchContext{req: req, errCode: kerr.FetchSessionIDNotFound.Code}
	}
	if len(s.byKey) == 0 {
		c.removeLocked(s)
		return &fetchContext{req: req}
	}
	s.lastUsed = now
	s.epoch = nextFetchEpoch(s.epoch)
	return &fetchContext{req: s.request(req), session: s, epoch: s.epoch}
}

func sessionKey(topicIDs bool, id [16]byte, topic string, partition int32) fetchSessionKey {
	if topicIDs {
		return fetchSessionKey{id: id, partition: partition}
	}
	return fetchSessionKey{topic: topic, partition: partition}
}

// request is req with every partition of the session, in the session's
// order, a topic entry for each run of partitions of one topic.
func (s *fetchSession) request(req *kmsg.FetchRequest) *kmsg.FetchRequest {
	full := *req
	full.Topics = nil
	full.ForgottenTopics = nil
	for e := s.order.Front(); e != nil; e = e.Next() {
		sp := e.Value.(*sessionPartition)
		if len(full.Topics) == 0 || full.Topics[len(full.Topics)-1].TopicID != sp.key.id || full.Topics[len(full.Topics)-1].Topic != sp.key.topic {
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = sp.key.topic, sp.key.id
			full.Topics = append(full.Topics, t)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = sp.key.partition
		p.FetchOffset, p.PartitionMaxBytes, p.LogStartOffset = sp.fetchOffset, sp.maxBytes, sp.logStartOffset
		p.CurrentLeaderEpoch, p.LastFetchedEpoch = sp.currentLeaderEpoch, sp.lastFetchedEpoch
		t := &full.Topics[len(full.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return &full
}

// respond finishes resp, filled from fc.req, for the client: a session
// error, the full response with the new session's id, or the partitions
// of the session that have something new.
func (n *Node) respond(fc *fetchContext, resp *kmsg.FetchResponse, follower bool) {
	switch {
	case fc.errCode != 0:
		resp.ErrorCode, resp.SessionID, resp.Topics = fc.errCode, 0, nil
	case fc.create:
		resp.SessionID = n.createFetchSession(fc.req, resp, follower)
	case fc.session != nil:
		n.fetchSessions.respondIncremental(fc, resp)
	}
}

// createFetchSession makes a session of the partitions of a full fetch and
// what resp answered for them, when a slot is free or can be taken, and
// returns its id, or 0.
func (n *Node) createFetchSession(req *kmsg.FetchRequest, resp *kmsg.FetchResponse, follower bool) int32 {
	slots := int(n.settings().MaxIncrementalFetchSessions)
	size := 0
	for ti := range req.Topics {
		size += len(req.Topics[ti].Partitions)
	}
	c := n.fetchSessions
	c.mu.Lock()
	defer c.mu.Unlock()
	if slots <= 0 || size > int(n.settings().MaxPartitions) || c.partitions+size > maxSessionPartitions {
		return 0
	}
	now := n.clock.Now()
	if len(c.byID) >= slots && !c.tryEvictLocked(follower, size, now) {
		return 0
	}
	topicIDs := req.Version >= 13
	s := &fetchSession{
		id: c.newIDLocked(), privileged: follower, topicIDs: topicIDs, created: now,
		epoch: nextFetchEpoch(0), lastUsed: now, byKey: make(map[fetchSessionKey]*sessionPartition, size),
	}
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		var answered []kmsg.FetchResponseTopicPartition
		if ti < len(resp.Topics) {
			answered = resp.Topics[ti].Partitions
		}
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			k := sessionKey(topicIDs, rt.TopicID, rt.Topic, rp.Partition)
			sp := &sessionPartition{
				key: k, fetchOffset: rp.FetchOffset, maxBytes: rp.PartitionMaxBytes, logStartOffset: rp.LogStartOffset,
				currentLeaderEpoch: rp.CurrentLeaderEpoch, lastFetchedEpoch: rp.LastFetchedEpoch,
				highWatermark: -1, localLogStartOffset: -1,
			}
			if pi < len(answered) {
				sp.highWatermark, sp.localLogStartOffset = answered[pi].HighWatermark, answered[pi].LogStartOffset
				if answered[pi].ErrorCode != 0 {
					sp.highWatermark = -1
				}
			}
			if old := s.byKey[k]; old != nil {
				// Named twice: the last entry counts, in its place.
				s.unlink(old)
			}
			s.byKey[k] = sp
			s.pushBack(sp)
		}
	}
	c.byID[s.id] = s
	c.partitions += len(s.byKey)
	return s.id
}

// respondIncremental keeps in resp only the partitions of the session
// with something new for the client, records what it tells the client of
// them, and moves those with records to the end of the session.
func (c *fetchSessions) respondIncremental(fc *fetchContext, resp *kmsg.FetchResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := fc.session
	if c.byID[s.id] != s || s.epoch != fc.epoch {
		// Another request of the session came in meanwhile, or the
		// session was closed or evicted.
		resp.ErrorCode, resp.SessionID, resp.Topics = kerr.InvalidFetchSessionEpoch.Code, s.id, nil
		return
	}
	resp.SessionID = s.id
	topics := resp.Topics[:0]
	var moved []*sessionPartition
	for ti := range resp.Topics {
		t := resp.Topics[ti]
		parts := t.Partitions[:0]
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			sp := s.byKey[sessionKey(s.topicIDs, t.TopicID, t.Topic, p.Partition)]
			if sp == nil {
				continue
			}
			if sp.mustRespond(p) {
				parts = append(parts, *p)
				if len(p.RecordBatches) > 0 {
					moved = append(moved, sp)
				}
			}
		}
		if len(parts) > 0 {
			t.Partitions = parts
			topics = append(topics, t)
		}
	}
	resp.Topics = topics
	for _, sp := range moved {
		s.order.MoveToBack(sp.elem)
	}
}

// mustRespond reports whether an incremental response carries p, and
// records what it tells the client: Kafka's
// CachedPartition.maybeUpdateResponseData.
func (sp *sessionPartition) mustRespond(p *kmsg.FetchResponseTopicPartition) bool {
	must := len(p.RecordBatches) > 0 || p.PreferredReadReplica >= 0 || p.DivergingEpoch.EndOffset >= 0
	if sp.highWatermark != p.HighWatermark {
		must, sp.highWatermark = true, p.HighWatermark
	}
	if sp.localLogStartOffset != p.LogStartOffset {
		must, sp.localLogStartOffset = true, p.LogStartOffset
	}
	if p.ErrorCode != 0 {
		must, sp.highWatermark = true, -1
	}
	return must
}
