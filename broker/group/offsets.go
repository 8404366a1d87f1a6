package group

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (c *Coordinator) topics() map[string]TopicInfo {
	if c.cfg.Topics == nil {
		return nil
	}
	return c.cfg.Topics()
}

// commitTopic is the name of a committed topic: name, or, for a request
// version naming topics by id (byID), the name of the topic with id;
// false when no topic has it (UNKNOWN_TOPIC_ID).
func commitTopic(topics map[string]TopicInfo, byID bool, name string, id [16]byte) (string, bool) {
	if !byID {
		return name, true
	}
	t, ok := topicByID(topics, id)
	return t.Name, ok
}

// topicByID finds a topic by its id.
func topicByID(topics map[string]TopicInfo, id [16]byte) (TopicInfo, bool) {
	for _, t := range topics {
		if t.ID == id {
			return t, true
		}
	}
	return TopicInfo{}, false
}

// OffsetCommit stores a group's offsets; they are durable in
// __consumer_offsets before the answer.
func (c *Coordinator) OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, rt := range req.Topics {
		t := kmsg.OffsetCommitResponseTopic{Topic: rt.Topic, TopicID: rt.TopicID}
		for _, rp := range rt.Partitions {
			t.Partitions = append(t.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: rp.Partition})
		}
		resp.Topics = append(resp.Topics, t)
	}
	topics := c.topics()
	names, answered := answerUnknownCommitTopics(req, resp, topics)
	if !slices.Contains(answered, false) {
		return resp
	}
	setAll := func(code int16) {
		for i := range resp.Topics {
			if answered[i] {
				continue
			}
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = code
			}
		}
	}
	if req.Group == "" {
		setAll(kerr.InvalidGroupID.Code)
		return resp
	}
	_, code := c.run(ctx, req.Group, req.Generation < 0, func(g *group) {
		if g == nil {
			// A commit with a generation to a group that does not
			// exist (OffsetMetadataManager.validateOffsetCommit):
			// GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before.
			if req.Version >= 9 {
				setAll(kerr.GroupIDNotFound.Code)
			} else {
				setAll(kerr.IllegalGeneration.Code)
			}
			return
		}
		if code := g.validateCommit(req); code != 0 {
			setAll(code)
			return
		}
		oc := g.newOffsetCommits(topics)
		for i, rt := range req.Topics {
			if answered[i] {
				continue
			}
			for j, rp := range rt.Partitions {
				epoch := int32(-1)
				if req.Version >= 6 {
					epoch = rp.LeaderEpoch
				}
				oc.add(&resp.Topics[i].Partitions[j].ErrorCode, names[i], rp.Partition, rp.Offset, epoch, rp.Metadata)
			}
		}
		if err := g.append(oc.records); err != nil {
			oc.fail(appendErrorCode(err))
			return
		}
		for _, a := range oc.accepted {
			g.setOffset(a.tp.topic, a.tp.part, a.o)
		}
	})
	if code != 0 && code != errGroupMissing {
		setAll(code)
	}
	return resp
}

// answerUnknownCommitTopics answers the topics of an OffsetCommit that do
// not exist before the group is looked at, as Kafka's
// KafkaApis.handleOffsetCommitRequest answers them before it asks the
// coordinator; the group's errors go to the other topics only. It returns
// the name of each topic (v10 names topics by id) and which it answered.
func answerUnknownCommitTopics(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, topics map[string]TopicInfo) ([]string, []bool) {
	names := make([]string, len(req.Topics))
	answered := make([]bool, len(req.Topics))
	for i, rt := range req.Topics {
		names[i] = rt.Topic
		code := int16(0)
		if req.Version >= 10 {
			if t, found := topicByID(topics, rt.TopicID); found {
				names[i] = t.Name
			} else {
				code = kerr.UnknownTopicID.Code
			}
		} else if _, known := topics[rt.Topic]; topics != nil && !known {
			code = kerr.UnknownTopicOrPartition.Code
		}
		if code == 0 {
			continue
		}
		answered[i] = true
		for j := range resp.Topics[i].Partitions {
			resp.Topics[i].Partitions[j].ErrorCode = code
		}
	}
	return names, answered
}

// offsetCommits gathers the partitions of one commit, plain or
// transactional, that pass the checks every commit makes, and their
// records.
type offsetCommits struct {
	g        *group
	topics   map[string]TopicInfo
	now      int64
	accepted []acceptedOffset
	records  []Record
}

// acceptedOffset is one partition of a commit to be written; code is
// where its answer goes.
type acceptedOffset struct {
	code *int16
	tp   topicPartition
	o    offset
}

func (g *group) newOffsetCommits(topics map[string]TopicInfo) *offsetCommits {
	return &offsetCommits{g: g, topics: topics, now: g.now().UnixMilli()}
}

// add checks one partition of the commit, answering it in *code
// (UNKNOWN_TOPIC_OR_PARTITION for a partition the topic does not have,
// OFFSET_METADATA_TOO_LARGE), or accepts it. leaderEpoch is -1 from
// versions without one.
func (oc *offsetCommits) add(code *int16, topic string, part int32, off int64, leaderEpoch int32, metadata *string) {
	info, known := oc.topics[topic]
	switch {
	case oc.topics != nil && (!known || part < 0 || part >= info.Partitions):
		*code = kerr.UnknownTopicOrPartition.Code
		return
	case metadata != nil && len(*metadata) > maxMetadataBytes:
		*code = kerr.OffsetMetadataTooLarge.Code
		return
	}
	o := offset{Offset: off, LeaderEpoch: leaderEpoch, CommitTimestamp: oc.now}
	if metadata != nil {
		o.Metadata = *metadata
	}
	oc.accepted = append(oc.accepted, acceptedOffset{code, topicPartition{topic, part}, o})
	oc.records = append(oc.records, offsetRecord(oc.g.id, topic, part, o))
}

// fail answers every accepted partition with code: their write failed.
func (oc *offsetCommits) fail(code int16) {
	for _, a := range oc.accepted {
		*a.code = code
	}
}

// validateCommit checks who may commit: members of the current generation
// (or member epoch), or anyone with a negative generation while the group
// is empty.
func (g *group) validateCommit(req *kmsg.OffsetCommitRequest) int16 {
	switch g.typ {
	case typeConsumer:
		return g.cg.validateCommit(req)
	case typeShare:
		return kerr.GroupIDNotFound.Code // a share group has no committed offsets
	}
	if g.state == stateDead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if req.Generation < 0 && g.state == stateEmpty {
		return 0
	}
	if req.Generation >= 0 || req.MemberID != "" || req.InstanceID != nil {
		if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
			return code
		}
	} else if g.state != stateEmpty {
		return kerr.UnknownMemberID.Code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	if g.state == stateCompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	if m := g.members[req.MemberID]; m != nil {
		m.heartbeatDeadline = g.now().Add(m.sessionTimeout)
	}
	return 0
}

// fetchTopic is one topic of an OffsetFetch; nil partitions means all.
type fetchTopic struct {
	name       string
	id         [16]byte
	partitions []int32
}

// fetchedTopic is the answer for one topic.
type fetchedTopic struct {
	name       string
	id         [16]byte
	code       int16 // for every partition
	partitions []fetchedPartition
}

type fetchedPartition struct {
	partition int32
	o         offset
	found     bool
	code      int16 // UNSTABLE_OFFSET_COMMIT, else the topic's code
}

// answer is the partition's answer in an OffsetFetch response: offset and
// leader epoch -1 when none is committed, and the partition's code, else
// the topic's.
func (p fetchedPartition) answer(topicCode int16) (off int64, leaderEpoch int32, metadata *string, code int16) {
	off, leaderEpoch, code = -1, -1, topicCode
	if p.code != 0 {
		code = p.code
	}
	md := p.o.Metadata
	if p.found {
		off, leaderEpoch = p.o.Offset, p.o.LeaderEpoch
	}
	return off, leaderEpoch, &md, code
}

// OffsetFetch returns committed offsets, for one group (v0-7) or many (v8+).
// With RequireStable (v7+), a partition with pending transactional offsets
// of the group answers UNSTABLE_OFFSET_COMMIT (the client retries until the
// transaction ends); without it, pending offsets are simply not visible.
func (c *Coordinator) OffsetFetch(ctx context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version < 8 {
		var topics []fetchTopic
		if req.Topics != nil {
			topics = []fetchTopic{}
			for _, t := range req.Topics {
				topics = append(topics, fetchTopic{name: t.Topic, partitions: t.Partitions})
			}
		}
		res, code := c.fetchGroup(ctx, req.Group, nil, -1, topics, req.Version, req.RequireStable)
		resp.ErrorCode = code
		for _, t := range res {
			rt := kmsg.OffsetFetchResponseTopic{Topic: t.name}
			for _, p := range t.partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition = p.partition
				rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.answer(t.code)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if req.Version < 2 && code != 0 {
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					resp.Topics[i].Partitions[j].ErrorCode = code
				}
			}
		}
		return resp
	}
	for _, rg := range req.Groups {
		var topics []fetchTopic
		if rg.Topics != nil {
			topics = []fetchTopic{}
			for _, t := range rg.Topics {
				topics = append(topics, fetchTopic{name: t.Topic, id: t.TopicID, partitions: t.Partitions})
			}
		}
		res, code := c.fetchGroup(ctx, rg.Group, rg.MemberID, rg.MemberEpoch, topics, req.Version, req.RequireStable)
		og := kmsg.OffsetFetchResponseGroup{Group: rg.Group, ErrorCode: code}
		for _, t := range res {
			rt := kmsg.OffsetFetchResponseGroupTopic{Topic: t.name, TopicID: t.id}
			for _, p := range t.partitions {
				rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				rp.Partition = p.partition
				rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.answer(t.code)
				rt.Partitions = append(rt.Partitions, rp)
			}
			og.Topics = append(og.Topics, rt)
		}
		resp.Groups = append(resp.Groups, og)
	}
	return resp
}

// fetchGroup reads one group's offsets; topics nil means every topic.
func (c *Coordinator) fetchGroup(ctx context.Context, id string, memberID *string, memberEpoch int32, topics []fetchTopic, version int16, requireStable bool) ([]fetchedTopic, int16) {
	if id == "" && version >= 8 {
		return nil, kerr.InvalidGroupID.Code
	}
	var all map[string]TopicInfo
	if version >= 10 {
		all = c.topics()
	}
	var out []fetchedTopic
	var groupCode int16
	_, code := c.run(ctx, id, false, func(g *group) {
		if g != nil && g.typ == typeConsumer && memberID != nil {
			if code := g.cg.validateFetch(*memberID, memberEpoch); code != 0 {
				groupCode = code
				return
			}
		}
		var offsets map[string]map[int32]offset
		if g != nil {
			offsets = g.offsets
		}
		// stable withholds the offset of a partition with a pending
		// transactional commit when the client asked for stable offsets.
		stable := func(fp fetchedPartition, topic string) fetchedPartition {
			if requireStable && g != nil && g.hasPending(topic, fp.partition) {
				fp.o, fp.found, fp.code = offset{}, false, kerr.UnstableOffsetCommit.Code
			}
			return fp
		}
		if topics == nil {
			names := make([]string, 0, len(offsets))
			for name := range offsets {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				ft := fetchedTopic{name: name}
				if version >= 10 {
					ft.id = all[name].ID
				}
				parts := make([]int32, 0, len(offsets[name]))
				for p := range offsets[name] {
					parts = append(parts, p)
				}
				sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
				for _, p := range parts {
					ft.partitions = append(ft.partitions, stable(fetchedPartition{partition: p, o: offsets[name][p], found: true}, name))
				}
				out = append(out, ft)
			}
			return
		}
		for _, t := range topics {
			ft := fetchedTopic{name: t.name, id: t.id}
			name := t.name
			if version >= 10 {
				info, ok := topicByID(all, t.id)
				if !ok {
					ft.code = kerr.UnknownTopicID.Code
				}
				name = info.Name
			}
			for _, p := range t.partitions {
				o, ok := offsets[name][p]
				fp := fetchedPartition{partition: p, o: o, found: ok && ft.code == 0}
				if ft.code == 0 {
					fp = stable(fp, name)
				}
				ft.partitions = append(ft.partitions, fp)
			}
			out = append(out, ft)
		}
	})
	if code != 0 && code != errGroupMissing {
		return nil, code
	}
	return out, groupCode
}

// OffsetDelete deletes a group's offsets for topics it is not subscribed to.
func (c *Coordinator) OffsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	topics := c.topics()
	_, code := c.run(ctx, req.Group, false, func(g *group) {
		if g == nil || g.state == stateDead {
			resp.ErrorCode = kerr.GroupIDNotFound.Code
			return
		}
		subscribed, code := g.subscribedTopics()
		if code != 0 {
			resp.ErrorCode = code
			return
		}
		type del struct {
			topic string
			part  int32
		}
		var dels []del
		var records []Record
		for _, rt := range req.Topics {
			t := kmsg.OffsetDeleteResponseTopic{Topic: rt.Topic}
			for _, rp := range rt.Partitions {
				p := kmsg.OffsetDeleteResponseTopicPartition{Partition: rp.Partition}
				info, known := topics[rt.Topic]
				if topics != nil && (!known || rp.Partition < 0 || rp.Partition >= info.Partitions) {
					// Kafka's KafkaApis answers a partition that does
					// not exist before the coordinator sees it.
					p.ErrorCode = kerr.UnknownTopicOrPartition.Code
				} else if subscribed[rt.Topic] {
					p.ErrorCode = kerr.GroupSubscribedToTopic.Code
				} else if _, ok := g.offsets[rt.Topic][rp.Partition]; ok || g.hasPending(rt.Topic, rp.Partition) {
					dels = append(dels, del{rt.Topic, rp.Partition})
					records = append(records, offsetTombstone(g.id, rt.Topic, rp.Partition))
				}
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		if err := g.append(records); err != nil {
			resp.ErrorCode = appendErrorCode(err)
			resp.Topics = nil
			return
		}
		for _, d := range dels {
			g.deleteOffset(d.topic, d.part)
		}
	})
	if code != 0 && code != errGroupMissing {
		resp.ErrorCode = code
	}
	return resp
}

// subscribedTopics returns the topics the group's members subscribe to; a
// non-empty classic group that does not use the consumer protocol cannot
// say, and answers NON_EMPTY_GROUP.
func (g *group) subscribedTopics() (map[string]bool, int16) {
	out := make(map[string]bool)
	if g.typ == typeConsumer {
		g.cg.subscribed(out)
		return out, 0
	}
	if g.state == stateEmpty {
		return out, 0
	}
	if g.protocolType != "consumer" {
		return nil, kerr.NonEmptyGroup.Code
	}
	for _, m := range g.members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil, kerr.NonEmptyGroup.Code
		}
		for _, t := range md.Topics {
			out[t] = true
		}
	}
	return out, 0
}

// expireOffsets deletes offsets past offsets.retention: every offset of an
// empty group (counted from when it became empty, or from the commit for
// groups that never had members), and offsets of topics a non-empty group
// no longer subscribes to (counted from the commit). An empty group left
// without offsets is deleted.
func (g *group) expireOffsets(now time.Time) {
	retention := g.c.cfg.OffsetsRetention
	empty := g.typ == typeClassic && g.state == stateEmpty || g.typ == typeConsumer && g.cg.empty()
	var subscribed map[string]bool
	if !empty {
		var code int16
		if subscribed, code = g.subscribedTopics(); code != 0 {
			return // cannot tell which topics are unused
		}
		if g.typ == typeClassic && g.state != stateStable {
			return
		}
	}
	type key struct {
		topic string
		part  int32
	}
	var expired []key
	var records []Record
	for topic, parts := range g.offsets {
		if subscribed[topic] {
			continue
		}
		for p, o := range parts {
			base := time.UnixMilli(o.CommitTimestamp)
			if empty && g.typ == typeClassic && g.protocolType != "" {
				base = g.stateTime
			}
			if !now.Before(base.Add(retention)) {
				expired = append(expired, key{topic, p})
				records = append(records, offsetTombstone(g.id, topic, p))
			}
		}
	}
	dead := empty && len(expired) == g.offsetCount() && len(g.txnOffsets) == 0
	if dead {
		records = append(records, groupTombstone(g.id))
	}
	if len(records) == 0 {
		return
	}
	if err := g.append(records); err != nil {
		g.c.log.Warn("expire offsets", "group", g.id, "err", err)
		return
	}
	for _, k := range expired {
		g.deleteOffset(k.topic, k.part)
	}
	if len(expired) > 0 {
		g.c.log.Info("expired offsets", "group", g.id, "count", len(expired))
	}
	if dead {
		g.state = stateDead
	}
}

func (g *group) offsetCount() int {
	var n int
	for _, ps := range g.offsets {
		n += len(ps)
	}
	return n
}
