package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/coordinator"
)

// groupType says which protocol a group speaks.
type groupType int8

const (
	typeClassic  groupType = iota // JoinGroup/SyncGroup, and simple commits
	typeConsumer                  // ConsumerGroupHeartbeat (KIP-848)
	typeShare                     // ShareGroupHeartbeat (KIP-932)
)

func (t groupType) String() string {
	switch t {
	case typeConsumer:
		return "consumer"
	case typeShare:
		return "share"
	}
	return "classic"
}

// classicState is the state of a classic group.
type classicState int8

const (
	stateEmpty classicState = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

func (s classicState) String() string {
	switch s {
	case stateEmpty:
		return "Empty"
	case statePreparingRebalance:
		return "PreparingRebalance"
	case stateCompletingRebalance:
		return "CompletingRebalance"
	case stateStable:
		return "Stable"
	default:
		return "Dead"
	}
}

// offset is one committed offset.
type offset struct {
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64 // unix millis
}

// group is the state of one group, owned by its actor goroutine.
type group struct {
	c    *Coordinator
	a    *coordinator.Actor[*group]
	id   string
	part int32
	typ  groupType

	// Classic protocol.
	state           classicState
	protocolType    string
	protocol        string
	generation      int32
	leader          string
	members         map[string]*member   // by member id
	pending         map[string]time.Time // member ids handed out by MEMBER_ID_REQUIRED, until their deadline
	statics         map[string]string    // instance id -> member id
	stateTime       time.Time            // when the group entered its state
	joinDeadline    time.Time            // PreparingRebalance: when the join phase ends
	initialJoin     bool                 // joinDeadline is the initial rebalance delay
	newDuringDelay  bool                 // a member joined during the current initial delay
	initialMax      time.Time            // the initial delay never extends past this
	rebalanceReason string               // why the current or last rebalance began
	syncDeadline    time.Time            // CompletingRebalance: members that have not synced by then are removed

	// Consumer protocol.
	cg *consumerGroup
	// Share groups.
	sg *shareGroup

	offsets        map[string]map[int32]offset
	offsetSeq      map[topicPartition]uint64 // append order of each committed offset
	txnOffsets     map[int64]map[topicPartition]txnOffset
	seq            uint64 // last append order handed out
	nextRetention  time.Time
	loadedMetadata bool // replay saw a live GroupMetadataValue
}

func (c *Coordinator) newGroup(id string, part int32) *group {
	return &group{
		c:             c,
		id:            id,
		part:          part,
		members:       make(map[string]*member),
		pending:       make(map[string]time.Time),
		statics:       make(map[string]string),
		offsets:       make(map[string]map[int32]offset),
		offsetSeq:     make(map[topicPartition]uint64),
		txnOffsets:    make(map[int64]map[topicPartition]txnOffset),
		stateTime:     c.now(),
		nextRetention: c.now().Add(c.cfg.OffsetsRetentionCheckInterval),
	}
}

func (g *group) now() time.Time { return g.c.now() }

// isEmptyShell reports a replayed group that has nothing left.
func (g *group) isEmptyShell() bool {
	return !g.loadedMetadata && len(g.offsets) == 0 && len(g.txnOffsets) == 0
}

// Reapable reports that the group holds nothing worth keeping: its actor may
// exit and the group be forgotten.
func (g *group) Reapable() bool {
	if g.state == stateDead {
		return true
	}
	if len(g.txnOffsets) > 0 {
		return false
	}
	if g.typ == typeConsumer {
		// A group that had members stays, Empty, until the offsets
		// retention check deletes it, as Kafka keeps it until its
		// periodic cleanup.
		return g.cg.empty() && len(g.offsets) == 0 && g.cg.epoch == 0
	}
	if g.typ == typeShare {
		return g.sg.empty() && g.sg.epoch == 0
	}
	return g.state == stateEmpty && len(g.members) == 0 && len(g.pending) == 0 &&
		len(g.offsets) == 0 && g.generation == 0 && g.protocolType == ""
}

// rebalanced tells Config.OnRebalance of a rebalance of the group: a
// classic group that began one or whose generation advanced, a consumer
// group whose epoch advanced.
func (g *group) rebalanced(state string, generation int32, members int, reason string) {
	if g.c.cfg.OnRebalance == nil {
		return
	}
	protocol := g.typ.String()
	g.c.cfg.OnRebalance(Rebalance{
		Group: g.id, GroupProtocol: protocol, State: state, Generation: generation,
		Members: members, Protocol: g.protocol, Reason: reason,
	})
}

// setState moves a classic group to s.
func (g *group) setState(s classicState) {
	g.state = s
	g.stateTime = g.now()
}

// Deadline returns the earliest deadline of the group.
func (g *group) Deadline() (time.Time, bool) {
	var next time.Time
	add := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	add(g.nextRetention)
	add(g.joinDeadline)
	add(g.syncDeadline)
	for _, d := range g.pending {
		add(d)
	}
	for _, m := range g.members {
		if m.joinCh == nil {
			add(m.heartbeatDeadline)
		}
	}
	if g.cg != nil {
		g.cg.deadlines(add)
	}
	if g.sg != nil {
		g.sg.deadlines(add)
	}
	return next, !next.IsZero()
}

// Tick runs every deadline that is due.
func (g *group) Tick() {
	now := g.now()
	if g.state == stateDead {
		return
	}
	for id, d := range g.pending {
		if !now.Before(d) {
			delete(g.pending, id)
			g.maybeCompleteJoin()
		}
	}
	for _, m := range g.sortedMembers() {
		if m.joinCh == nil && !m.heartbeatDeadline.IsZero() && !now.Before(m.heartbeatDeadline) {
			g.c.log.Info("group member session expired", "group", g.id, "member", m.id)
			g.removeMember(m, "session timeout")
		}
	}
	if !g.syncDeadline.IsZero() && !now.Before(g.syncDeadline) {
		g.syncExpired()
	}
	if !g.joinDeadline.IsZero() && !now.Before(g.joinDeadline) {
		g.joinDue()
	}
	if g.cg != nil {
		g.cg.tick(now)
	}
	if g.sg != nil {
		g.sg.tick(now)
	}
	if !now.Before(g.nextRetention) {
		g.expireOffsets(now)
		g.nextRetention = now.Add(g.c.cfg.OffsetsRetentionCheckInterval)
	}
}

// Stop answers every waiting request: the coordinator moved.
func (g *group) Stop() {
	for _, m := range g.members {
		m.answerJoin(joinResult{code: kerr.NotCoordinator.Code})
		m.answerSync(syncResult{code: kerr.NotCoordinator.Code})
	}
}

// replayOffset applies one replayed offset record (nil value: tombstone).
func (g *group) replayOffset(topic string, part int32, v *kmsg.OffsetCommitValue) {
	if v == nil {
		g.deleteOffset(topic, part)
		return
	}
	g.setOffset(topic, part, valueOffset(v))
}

// valueOffset converts a replayed offset value.
func valueOffset(v *kmsg.OffsetCommitValue) offset {
	epoch := v.LeaderEpoch
	if v.Version < 3 {
		epoch = -1 // older values carry no leader epoch
	}
	return offset{Offset: v.Offset, LeaderEpoch: epoch, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp}
}

// setOffset stores a committed offset, the latest written to the log.
func (g *group) setOffset(topic string, part int32, o offset) {
	g.setOffsetSeq(topic, part, o, g.nextSeq())
}

// nextSeq returns the append order of the next record the group writes or
// replays: the group's records are appended one request at a time by its
// actor and replayed in log order, so this order is their log order.
func (g *group) nextSeq() uint64 {
	g.seq++
	return g.seq
}

// setOffsetSeq stores a committed offset written at append order seq.
func (g *group) setOffsetSeq(topic string, part int32, o offset, seq uint64) {
	g.offsetSeq[topicPartition{topic, part}] = seq
	ps := g.offsets[topic]
	if ps == nil {
		ps = make(map[int32]offset)
		g.offsets[topic] = ps
	}
	ps[part] = o
}

// deleteOffset deletes a committed offset and every pending transactional
// offset of the partition, as replaying its tombstone does.
func (g *group) deleteOffset(topic string, part int32) {
	tp := topicPartition{topic, part}
	delete(g.offsetSeq, tp)
	for pid, pending := range g.txnOffsets {
		delete(pending, tp)
		if len(pending) == 0 {
			delete(g.txnOffsets, pid)
		}
	}
	ps := g.offsets[topic]
	delete(ps, part)
	if len(ps) == 0 {
		delete(g.offsets, topic)
	}
}

// replayMetadata applies one replayed GroupMetadataValue (nil: tombstone).
func (g *group) replayMetadata(v *kmsg.GroupMetadataValue) {
	clear(g.members)
	clear(g.statics)
	g.protocol, g.leader, g.protocolType, g.generation = "", "", "", 0
	if v == nil {
		g.loadedMetadata = false
		return
	}
	g.loadedMetadata = true
	g.protocolType = v.ProtocolType
	g.generation = v.Generation
	if v.Protocol != nil {
		g.protocol = *v.Protocol
	}
	if v.Leader != nil {
		g.leader = *v.Leader
	}
	if v.CurrentStateTimestamp > 0 {
		g.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
	}
	for _, vm := range v.Members {
		m := &member{
			id:               vm.MemberID,
			clientID:         vm.ClientID,
			clientHost:       vm.ClientHost,
			sessionTimeout:   time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
			rebalanceTimeout: time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond,
			protocolType:     v.ProtocolType,
			protocols:        []protocol{{name: g.protocol, metadata: vm.Subscription}},
			assignment:       vm.Assignment,
		}
		if m.rebalanceTimeout <= 0 {
			m.rebalanceTimeout = m.sessionTimeout
		}
		if vm.InstanceID != nil {
			id := *vm.InstanceID
			m.instanceID = &id
			g.statics[id] = m.id
		}
		g.members[m.id] = m
	}
}

// afterLoad puts a replayed group in the state it is served from: Empty
// without members, else Stable with fresh session timers (members resume by
// heartbeating, or rejoin).
func (g *group) afterLoad(now time.Time) {
	if len(g.members) == 0 {
		g.state = stateEmpty
		return
	}
	g.state = stateStable
	for _, m := range g.members {
		m.heartbeatDeadline = now.Add(m.sessionTimeout)
	}
}

// metadataRecord encodes the group's current classic metadata.
func (g *group) metadataRecord() Record {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocol != "" || len(g.members) > 0 {
		p := g.protocol
		v.Protocol = &p
	}
	if g.leader != "" {
		l := g.leader
		v.Leader = &l
	}
	v.CurrentStateTimestamp = g.stateTime.UnixMilli()
	for _, m := range g.sortedMembers() {
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID = m.id
		vm.InstanceID = m.instanceID
		vm.ClientID = m.clientID
		vm.ClientHost = m.clientHost
		vm.RebalanceTimeoutMillis = int32(m.rebalanceTimeout / time.Millisecond)
		vm.SessionTimeoutMillis = int32(m.sessionTimeout / time.Millisecond)
		vm.Subscription = m.metadataFor(g.protocol)
		vm.Assignment = m.assignment
		v.Members = append(v.Members, vm)
	}
	return Record{Key: groupKey(g.id), Value: v.AppendTo(nil)}
}
