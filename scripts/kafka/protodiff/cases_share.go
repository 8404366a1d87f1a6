package main

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareMember is a member id both brokers take: Kafka parses a share
// request's member id as a Uuid (base64url, 22 characters).
const shareMember = "AQEBAQEBAQEBAQEBAQEBAQ"

func shareHeartbeatReq(group, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatRequest {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = group, member, epoch
	req.SubscribedTopicNames = topics
	return req
}

// shareFetchReq is a ShareFetch at epoch naming partition 0 of topicID
// (none when it is zero), with acks as ACCEPT batches of one offset each.
func shareFetchReq(group string, epoch int32, topicID [16]byte, acks ...int64) *kmsg.ShareFetchRequest {
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr(shareMember), epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = 0, 1, 1<<20, 100, 100
	if topicID != ([16]byte{}) {
		p := kmsg.NewShareFetchRequestTopicPartition()
		for _, o := range acks {
			p.AcknowledgementBatches = append(p.AcknowledgementBatches, kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{FirstOffset: o, LastOffset: o, AcknowledgeTypes: []int8{1}})
		}
		req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{p}}}
	}
	return req
}

func shareAckReq(group string, epoch int32) *kmsg.ShareAcknowledgeRequest {
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr(shareMember), epoch
	return req
}

// shareCases are share groups' answers (KIP-932) that need no records:
// the heartbeat's checks, describing, and share session epochs.
func shareCases() []testCase {
	return []testCase{
		{"sharegroupheartbeat-empty-member-id", noSetup(func(s *side) kmsg.Request {
			return shareHeartbeatReq(s.topic("sg-empty"), " ", 0, s.topic("missing"))
		})},
		{"sharegroupheartbeat-join-without-topics", noSetup(func(s *side) kmsg.Request {
			return shareHeartbeatReq(s.topic("sg-notopics"), shareMember, 0)
		})},
		{"sharegroupheartbeat-bad-epoch", noSetup(func(s *side) kmsg.Request {
			return shareHeartbeatReq(s.topic("sg-epoch"), shareMember, -2)
		})},
		{"sharegroupheartbeat-unknown-group", noSetup(func(s *side) kmsg.Request {
			return shareHeartbeatReq(s.topic("sg-none"), shareMember, 3)
		})},
		{"sharegroupheartbeat-leave-unknown-group", noSetup(func(s *side) kmsg.Request {
			return shareHeartbeatReq(s.topic("sg-leave-none"), shareMember, -1)
		})},
		{"sharegroupheartbeat-consumer-group", one(func(s *side) (kmsg.Request, error) {
			g := s.topic("sg-is-consumer")
			if _, err := s.do(firstHeartbeatReq(g, "pd-member-0000000000009", s.topic("missing"))); err != nil {
				return nil, err
			}
			return shareHeartbeatReq(g, shareMember, 0, s.topic("missing")), nil
		})},
		{"sharegroupdescribe-unknown", noSetup(func(s *side) kmsg.Request {
			return &kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{s.topic("sg-desc-none")}}
		})},
		{"sharefetch-no-session", noSetup(func(s *side) kmsg.Request {
			return shareFetchReq(s.topic("sg-fetch-none"), 4, [16]byte{})
		})},
		{"sharefetch-close-no-session", noSetup(func(s *side) kmsg.Request {
			return shareFetchReq(s.topic("sg-close-none"), -1, [16]byte{})
		})},
		{"shareacknowledge-epoch-0", noSetup(func(s *side) kmsg.Request {
			return shareAckReq(s.topic("sg-ack-0"), 0)
		})},
		{"shareacknowledge-no-session", noSetup(func(s *side) kmsg.Request {
			return shareAckReq(s.topic("sg-ack-none"), 3)
		})},
	}
}

// shareTopicCases are share answers on a topic of three records: a
// session opened with acknowledgements, and the first fetch of a member,
// which starts the share-partition at the log end (latest).
func shareTopicCases() []testCase {
	withShareTopic := func(base string, f func(s *side, topic string, id [16]byte) []kmsg.Request) func(s *side) ([]kmsg.Response, error) {
		return func(s *side) ([]kmsg.Response, error) {
			t := s.topic(base)
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			if err := s.produce(t, 0, plainBatch(3)); err != nil {
				return nil, err
			}
			md, err := s.do(metadataReq(t))
			if err != nil {
				return nil, err
			}
			return s.doAll(f(s, t, md.(*kmsg.MetadataResponse).Topics[0].TopicID)...)
		}
	}
	return []testCase{
		{"sharefetch-open-with-acks", withShareTopic("sg-open-acks", func(_ *side, t string, id [16]byte) []kmsg.Request {
			return []kmsg.Request{shareFetchReq(t, 0, id, 0)}
		})},
		{"sharefetch-open", withShareTopic("sg-open", func(_ *side, t string, id [16]byte) []kmsg.Request {
			return []kmsg.Request{shareHeartbeatReq(t, shareMember, 0, t), shareFetchReq(t, 0, id), shareAckReq(t, 1), shareAckReq(t, 1)}
		})},
	}
}
