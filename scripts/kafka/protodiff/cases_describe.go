package main

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's cases of the APIs that tools and clients use to look at
// partitions: OffsetForLeaderEpoch, DescribeTopicPartitions,
// DescribeLogDirs, AlterReplicaLogDirs and ElectLeaders.

// offsetForEpochReq asks for the end offset of leader epoch on the
// partitions of topic, with the current leader epoch current, as a consumer
// (replica id -1).
func offsetForEpochReq(topic string, current, epoch int32, partitions ...int32) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	t := kmsg.NewOffsetForLeaderEpochRequestTopic()
	t.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p, current, epoch
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	return req
}

// describePartitionsReq names topics (none: every topic) with a response
// partition limit and, when cursor is not "", a cursor at its partition.
func describePartitionsReq(limit int32, cursor string, cursorPartition int32, topics ...string) *kmsg.DescribeTopicPartitionsRequest {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = limit
	for _, t := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = t
		req.Topics = append(req.Topics, rt)
	}
	if cursor != "" {
		req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: cursor, Partition: cursorPartition}
	}
	return req
}

// describeLogDirsReq names partitions of topic; topics, no partitions
// named at all, is an empty list (not null, which means every partition).
func describeLogDirsReq(topic string, partitions ...int32) *kmsg.DescribeLogDirsRequest {
	req := kmsg.NewPtrDescribeLogDirsRequest()
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{}
	if topic != "" {
		t := kmsg.NewDescribeLogDirsRequestTopic()
		t.Topic, t.Partitions = topic, partitions
		req.Topics = append(req.Topics, t)
	}
	return req
}

// alterLogDirsCase is an AlterReplicaLogDirs case: partitions of a fresh
// topic (its name from base) and of a missing one, sent to the directory
// the side's DescribeLogDirs names, or to other when it is set.
func alterLogDirsCase(base, other string, partitions ...int32) func(s *side) ([]kmsg.Response, error) {
	return one(func(s *side) (kmsg.Request, error) {
		t := s.topic(base)
		if err := s.createTopic(t, 1); err != nil {
			return nil, err
		}
		resp, err := s.do(describeLogDirsReq(""))
		if err != nil {
			return nil, err
		}
		dirs := resp.(*kmsg.DescribeLogDirsResponse).Dirs
		if len(dirs) != 1 {
			return nil, fmt.Errorf("describe log dirs: %d directories, want 1", len(dirs))
		}
		dir := dirs[0].Dir
		if other != "" {
			dir = other
		}
		req := kmsg.NewPtrAlterReplicaLogDirsRequest()
		d := kmsg.NewAlterReplicaLogDirsRequestDir()
		d.Dir = dir
		for _, name := range []string{t, s.topic(base + "-missing")} {
			rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
			rt.Topic, rt.Partitions = name, partitions
			d.Topics = append(d.Topics, rt)
		}
		req.Dirs = append(req.Dirs, d)
		return req, nil
	})
}

func electLeadersReq(electionType int8, topic string, partitions ...int32) *kmsg.ElectLeadersRequest {
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType, req.TimeoutMillis = electionType, 10000
	t := kmsg.NewElectLeadersRequestTopic()
	t.Topic, t.Partitions = topic, partitions
	req.Topics = append(req.Topics, t)
	return req
}

// withTopics is a case of one request against fresh topics of the given
// partition counts, each partition holding three records; f gets their
// names in order.
func withTopics(base string, counts []int32, f func(s *side, topics []string) kmsg.Request) func(s *side) ([]kmsg.Response, error) {
	return one(func(s *side) (kmsg.Request, error) {
		var names []string
		for i, n := range counts {
			t := s.topic(base + string(rune('a'+i)))
			if err := s.createTopic(t, n); err != nil {
				return nil, err
			}
			for p := range n {
				if err := s.produce(t, p, plainBatch(3)); err != nil {
					return nil, err
				}
			}
			names = append(names, t)
		}
		return f(s, names), nil
	})
}

func describeCases() []testCase {
	return []testCase{
		// OffsetForLeaderEpoch: the leader-epoch cache of a topic written
		// at epoch 0, and the current-leader-epoch check.
		{"offsetforleaderepoch-current-epoch", withTopic("ofle-cur", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, -1, 0, 0)
		})},
		{"offsetforleaderepoch-current-leader-epoch-matches", withTopic("ofle-match", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, 0, 0, 0)
		})},
		{"offsetforleaderepoch-epoch-newer-than-log", withTopic("ofle-newer", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, -1, 7, 0)
		})},
		{"offsetforleaderepoch-epoch-undefined", withTopic("ofle-undef", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, -1, -1, 0)
		})},
		{"offsetforleaderepoch-epoch-older-than-log", withTopic("ofle-older", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, -1, -3, 0)
		})},
		{"offsetforleaderepoch-empty-partition", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("ofle-empty")
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			return offsetForEpochReq(t, 0, 0, 0), nil
		})},
		{"offsetforleaderepoch-leader-epoch-too-high", withTopic("ofle-unk", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, 1000, 0, 0)
		})},
		{"offsetforleaderepoch-leader-epoch-negative", withTopic("ofle-neg", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, -5, 0, 0)
		})},
		{"offsetforleaderepoch-follower-replica-id", withTopic("ofle-follower", func(_ *side, t string) kmsg.Request {
			req := offsetForEpochReq(t, 0, 0, 0)
			req.ReplicaID = 0
			return req
		})},
		{"offsetforleaderepoch-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return offsetForEpochReq(s.topic("missing"), -1, 0, 0)
		})},
		{"offsetforleaderepoch-unknown-partition", withTopic("ofle-part", func(_ *side, t string) kmsg.Request {
			return offsetForEpochReq(t, -1, 0, 0, 7)
		})},

		// DescribeTopicPartitions: topics, errors and the pagination.
		{"describetopicpartitions-topic", withTopics("dtp-one", []int32{3}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(2000, "", 0, ts...)
		})},
		{"describetopicpartitions-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return describePartitionsReq(2000, "", 0, s.topic("missing"))
		})},
		{"describetopicpartitions-invalid-topic-name", noSetup(func(*side) kmsg.Request {
			return describePartitionsReq(2000, "", 0, "bad name!")
		})},
		{"describetopicpartitions-limit-within-topic", withTopics("dtp-lim", []int32{3, 3}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(2, "", 0, ts...)
		})},
		{"describetopicpartitions-limit-at-topic-end", withTopics("dtp-end", []int32{3, 3}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(3, "", 0, ts...)
		})},
		{"describetopicpartitions-limit-zero", withTopics("dtp-zero", []int32{2}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(0, "", 0, ts...)
		})},
		{"describetopicpartitions-cursor", withTopics("dtp-cur", []int32{3, 3}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(2, ts[0], 2, ts...)
		})},
		{"describetopicpartitions-cursor-past-partitions", withTopics("dtp-past", []int32{2, 1}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(10, ts[0], 5, ts...)
		})},
		{"describetopicpartitions-cursor-unknown-topic", withTopics("dtp-curunk", []int32{1}, func(s *side, ts []string) kmsg.Request {
			return describePartitionsReq(10, s.topic("dtp-curunk-missing"), 0, ts...)
		})},
		{"describetopicpartitions-cursor-negative-partition", withTopics("dtp-curneg", []int32{1}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(10, ts[0], -1, ts...)
		})},
		{"describetopicpartitions-all-topics-from-cursor", withTopics("dtp-all", []int32{2}, func(_ *side, ts []string) kmsg.Request {
			return describePartitionsReq(1, ts[0], 0)
		})},

		// DescribeLogDirs: the one log directory and its partitions.
		{"describelogdirs-partition", withTopic("dld", func(_ *side, t string) kmsg.Request {
			return describeLogDirsReq(t, 0)
		})},
		{"describelogdirs-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return describeLogDirsReq(s.topic("missing"), 0)
		})},
		{"describelogdirs-unknown-partition", withTopic("dld-part", func(_ *side, t string) kmsg.Request {
			return describeLogDirsReq(t, 7)
		})},
		{"describelogdirs-no-topics", noSetup(func(*side) kmsg.Request { return describeLogDirsReq("") })},

		// AlterReplicaLogDirs: to the one log directory, another, and
		// for a topic whose name is too long for a move's directory.
		{"alterreplicalogdirs-own-dir", alterLogDirsCase("ard", "", 0, 7)},
		{"alterreplicalogdirs-other-dir", alterLogDirsCase("ard-other", "/nonexistent/protodiff", 0)},
		{"alterreplicalogdirs-long-topic", alterLogDirsCase(strings.Repeat("l", 200), "", 0)},

		// ElectLeaders: a single node's leaders are all preferred.
		{"electleaders-preferred", withTopics("el", []int32{2}, func(_ *side, ts []string) kmsg.Request {
			return electLeadersReq(0, ts[0], 0, 1)
		})},
		{"electleaders-unclean", withTopic("el-unclean", func(_ *side, t string) kmsg.Request {
			return electLeadersReq(1, t, 0)
		})},
		{"electleaders-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return electLeadersReq(0, s.topic("missing"), 0)
		})},
		{"electleaders-unknown-partition", withTopic("el-part", func(_ *side, t string) kmsg.Request {
			return electLeadersReq(0, t, 7)
		})},
		{"electleaders-unknown-election-type", withTopic("el-type", func(_ *side, t string) kmsg.Request {
			return electLeadersReq(5, t, 0)
		})},
	}
}
