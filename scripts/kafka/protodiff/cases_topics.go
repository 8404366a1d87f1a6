package main

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's cases of manual replica assignments (CreateTopics and
// CreatePartitions), of a Metadata that may auto-create a topic just
// deleted, and of the configs Kafka 4 reports or refuses on topics:
// min.insync.replicas's source and segment.bytes's 1 MiB floor
// (KIP-1030), with internal.segment.bytes for smaller segments. Node 0 is
// the only broker on both sides.

// createPartitionsReq grows topic to count partitions, with one manual
// assignment per list of replicas given.
func createPartitionsReq(topic string, count int32, validateOnly bool, assignments ...[]int32) *kmsg.CreatePartitionsRequest {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis, req.ValidateOnly = 10000, validateOnly
	ct := kmsg.NewCreatePartitionsRequestTopic()
	ct.Topic, ct.Count = topic, count
	for _, replicas := range assignments {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = replicas
		ct.Assignment = append(ct.Assignment, a)
	}
	req.Topics = append(req.Topics, ct)
	return req
}

// assignedCreateReq creates topic with the manual assignment of pairs of
// partition and replicas, partitions and replication factor as given.
func assignedCreateReq(topic string, partitions int32, rf int16, assignment ...any) *kmsg.CreateTopicsRequest {
	req := createReq([]string{topic}, partitions, rf)
	for i := 0; i+1 < len(assignment); i += 2 {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = assignment[i].(int32), assignment[i+1].([]int32)
		req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
	}
	return req
}

// sendAll sends reqs in order after setup and answers their responses.
func sendAll(setup func(s *side) error, reqs func(s *side) []kmsg.Request) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		if setup != nil {
			if err := setup(s); err != nil {
				return nil, err
			}
		}
		var out []kmsg.Response
		for _, req := range reqs(s) {
			resp, err := s.do(req)
			if err != nil {
				return nil, err
			}
			out = append(out, resp)
		}
		return out, nil
	}
}

func topicCases() []testCase {
	// grow is a CreatePartitions case on a fresh one-partition topic,
	// followed by a Metadata of the topic to show what it created.
	grow := func(name string, count int32, validateOnly bool, assignments ...[]int32) testCase {
		return testCase{"createpartitions-" + name, func(s *side) ([]kmsg.Response, error) {
			t := s.topic("cp-" + name)
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			grown, err := s.do(createPartitionsReq(t, count, validateOnly, assignments...))
			if err != nil {
				return nil, err
			}
			if rt := grown.(*kmsg.CreatePartitionsResponse).Topics; len(rt) == 1 && rt[0].ErrorCode == 0 && !validateOnly {
				if err := s.waitPartitionCount(t, count); err != nil {
					return nil, err
				}
			}
			md, err := s.do(metadataReq(t))
			if err != nil {
				return nil, err
			}
			return []kmsg.Response{grown, md}, nil
		}}
	}
	assigned := func(name string, partitions int32, rf int16, assignment ...any) testCase {
		return testCase{"createtopics-assignment-" + name, noSetup(func(s *side) kmsg.Request {
			return assignedCreateReq(s.topic("ca-"+name), partitions, rf, assignment...)
		})}
	}
	return []testCase{
		grow("assignment", 3, false, []int32{0}, []int32{0}),
		grow("assignment-validate-only", 2, true, []int32{0}),
		grow("assignment-unknown-broker", 2, false, []int32{77}),
		grow("assignment-broker-twice", 2, false, []int32{0, 0}),
		grow("assignment-unknown-and-twice", 2, false, []int32{77, 0, 0}),
		grow("assignment-empty", 2, false, []int32{}),
		grow("assignment-too-few", 3, false, []int32{0}),
		grow("assignment-too-many", 2, false, []int32{0}, []int32{0}),
		grow("assignment-rf-mismatch", 2, false, []int32{0, 77}),
		assigned("two-partitions", -1, -1, int32(0), []int32{0}, int32(1), []int32{0}),
		assigned("out-of-order", -1, -1, int32(1), []int32{0}, int32(0), []int32{0}),
		assigned("partition-twice", -1, -1, int32(0), []int32{0}, int32(0), []int32{0}),
		assigned("gap", -1, -1, int32(0), []int32{0}, int32(2), []int32{0}),
		assigned("broker-twice", -1, -1, int32(0), []int32{0, 0}),
		assigned("empty-replicas", -1, -1, int32(0), []int32{}),
		assigned("with-replication-factor", -1, 1, int32(0), []int32{0}),
		assigned("with-both", 1, 1, int32(0), []int32{0}),

		// A topic deleted, then, once the broker no longer lists it, asked
		// for by a Metadata that may create it. Kafka's brokers learn of
		// the deletion after DeleteTopics answers: asked at once, a loaded
		// Kafka still answered with the deleted topic.
		{"metadata-auto-create-after-delete", func(s *side) ([]kmsg.Response, error) {
			t := s.topic("md-deleted")
			if err := s.createTopic(t, 2); err != nil {
				return nil, err
			}
			deleted, err := s.do(deleteReq(t))
			if err != nil {
				return nil, err
			}
			if err := s.waitTopicGone(t); err != nil {
				return nil, err
			}
			md := metadataReq(t)
			md.AllowAutoTopicCreation = true
			created, err := s.do(md)
			if err != nil {
				return nil, err
			}
			return []kmsg.Response{deleted, created}, nil
		}},

		// Configs of Kafka 4: min.insync.replicas comes from the cluster's
		// dynamic defaults, segment.bytes has a 1 MiB floor. Without
		// synonyms on a topic and a broker: kafka.sh also sets
		// min.insync.replicas statically, klog up does not.
		{"describeconfigs-topic-min-insync", withTopic("dc-misr", func(_ *side, t string) kmsg.Request {
			req := describeConfigsOf(kmsg.ConfigResourceTypeTopic, t, "min.insync.replicas", "segment.bytes", "internal.segment.bytes")
			req.IncludeSynonyms = false
			return req
		})},
		{"describeconfigs-broker-min-insync", noSetup(func(*side) kmsg.Request {
			req := describeConfigsOf(kmsg.ConfigResourceTypeBroker, "0", "min.insync.replicas", "log.segment.bytes")
			req.IncludeSynonyms = false
			return req
		})},
		{"describeconfigs-cluster-min-insync", noSetup(func(*side) kmsg.Request {
			return describeConfigsOf(kmsg.ConfigResourceTypeBroker, "", "min.insync.replicas")
		})},
		{"createtopics-small-segment", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("small-seg")}, 1, 1, "segment.bytes", "4096")
		})},
		{"createtopics-segment-floor", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("floor-seg")}, 1, 1, "segment.bytes", "1048576")
		})},
		// The topic is created, and served, before its configs are
		// described: Kafka's brokers learn of a new topic after
		// CreateTopics answers, and a loaded machine showed Kafka's
		// DescribeConfigs sent at once answering UNKNOWN_TOPIC_OR_PARTITION.
		{"createtopics-internal-segment", sendAll(func(s *side) error {
			return s.createTopic(s.topic("internal-seg"), 1, "internal.segment.bytes", "4096")
		}, func(s *side) []kmsg.Request {
			return []kmsg.Request{describeConfigsOf(kmsg.ConfigResourceTypeTopic, s.topic("internal-seg"), "segment.bytes", "internal.segment.bytes")}
		})},
		{"createtopics-internal-segment-invalid", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("internal-seg-bad")}, 1, 1, "internal.segment.bytes", "x")
		})},
		{"incrementalalter-small-segment", withTopic("iac-seg", func(_ *side, t string) kmsg.Request {
			return incrementalAlterOf(kmsg.ConfigResourceTypeTopic, t, false, setOp("segment.bytes", "4096"))
		})},
		{"alterconfigs-small-segment", withTopic("ac-seg", func(_ *side, t string) kmsg.Request {
			return alterConfigsOf(kmsg.ConfigResourceTypeTopic, t, "segment.bytes", "4096")
		})},
		{"incrementalalter-broker-small-segment", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(kmsg.ConfigResourceTypeBroker, "", true, setOp("log.segment.bytes", "4096"))
		})},
	}
}

// waitTopicGone waits, for 15 s at most, until a Metadata that may not
// create the topic answers UNKNOWN_TOPIC_OR_PARTITION for it.
func (s *side) waitTopicGone(name string) error {
	return s.waitTopic(name, "still listed", func(t kmsg.MetadataResponseTopic) bool {
		return t.ErrorCode == kerr.UnknownTopicOrPartition.Code
	})
}

// waitPartitionCount waits until the broker's Metadata lists count partitions
// of topic: Kafka's brokers learn of partitions a CreatePartitions added
// after it answers, and a loaded Kafka answered a Metadata sent at once
// with the old count.
func (s *side) waitPartitionCount(name string, count int32) error {
	return s.waitTopic(name, fmt.Sprintf("not yet at %d partitions", count), func(t kmsg.MetadataResponseTopic) bool {
		return t.ErrorCode == 0 && len(t.Partitions) == int(count)
	})
}

// waitTopic asks the broker for topic's metadata until done holds of it,
// for up to 15 s; the error names what was still not so.
func (s *side) waitTopic(name, still string, done func(kmsg.MetadataResponseTopic) bool) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := s.do(metadataReq(name))
		if err != nil {
			return err
		}
		t := resp.(*kmsg.MetadataResponse).Topics[0]
		if done(t) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: topic %s %s on %s after 15s (%v, %d partitions)", errSetup, name, still, s.name, kerr.ErrorForCode(t.ErrorCode), len(t.Partitions))
		}
		time.Sleep(50 * time.Millisecond) // a poll of the condition, bounded above
	}
}
