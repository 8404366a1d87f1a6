package main

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's DeleteRecords cases (key 21), on one node: each partition's
// error code and low watermark. A follower's NOT_LEADER_OR_FOLLOWER and the
// wait for followers are cluster cases (cases_cluster.go).

// deleteRecordsReq asks to delete the records of topic's partitions before
// offsets, one partition per pair of arguments.
func deleteRecordsReq(topic string, partitionOffsets ...int64) *kmsg.DeleteRecordsRequest {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 10000
	t := kmsg.NewDeleteRecordsRequestTopic()
	t.Topic = topic
	for i := 0; i+1 < len(partitionOffsets); i += 2 {
		p := kmsg.NewDeleteRecordsRequestTopicPartition()
		p.Partition, p.Offset = int32(partitionOffsets[i]), partitionOffsets[i+1]
		t.Partitions = append(t.Partitions, p)
	}
	req.Topics = append(req.Topics, t)
	return req
}

func deleteRecordsCases() []testCase {
	// withTopic's topic holds three records: its high watermark is 3.
	at := func(name string, partitionOffsets ...int64) testCase {
		return testCase{"deleterecords-" + name, withTopic("dr-"+name, func(_ *side, t string) kmsg.Request {
			return deleteRecordsReq(t, partitionOffsets...)
		})}
	}
	return []testCase{
		{"deleterecords-unknown-topic", noSetup(func(s *side) kmsg.Request { return deleteRecordsReq(s.topic("missing"), 0, 0) })},
		at("unknown-partition", 7, 0),
		at("offset", 0, 1),
		at("high-watermark", 0, -1),
		at("at-high-watermark", 0, 3),
		at("above-high-watermark", 0, 4),
		at("negative", 0, -2),
		at("repeated", 0, 2, 0, 1),
		{"deleterecords-compacted", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("dr-compact")
			if err := s.createTopic(t, 1, "cleanup.policy", "compact"); err != nil {
				return nil, err
			}
			return deleteRecordsReq(t, 0, 0), nil
		})},
		{"deleterecords-compact-delete", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("dr-compact-delete")
			if err := s.createTopic(t, 1, "cleanup.policy", "compact,delete"); err != nil {
				return nil, err
			}
			return deleteRecordsReq(t, 0, 0), nil
		})},
		{"deleterecords-consumer-offsets", noSetup(func(*side) kmsg.Request { return deleteRecordsReq("__consumer_offsets", 0, 0) })},
		// v1, not flexible (kwire takes version 0 for "the highest").
		{"deleterecords-v1", withTopic("dr-v1", func(_ *side, t string) kmsg.Request {
			req := deleteRecordsReq(t, 0, 2)
			req.SetVersion(1)
			return req
		})},
	}
}
