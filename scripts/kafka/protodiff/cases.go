package main

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/store/log/record"
)

// one wraps a case that sends a single request after its setup.
func one(f func(s *side) (kmsg.Request, error)) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		req, err := f(s)
		if err != nil {
			return nil, err
		}
		resp, err := s.do(req)
		if err != nil {
			return nil, err
		}
		return []kmsg.Response{resp}, nil
	}
}

// noSetup is a case of one request needing no state.
func noSetup(f func(s *side) kmsg.Request) func(s *side) ([]kmsg.Response, error) {
	return one(func(s *side) (kmsg.Request, error) { return f(s), nil })
}

// findCoordinatorReq asks for the coordinator of key, of key type typ.
func findCoordinatorReq(typ int8, key string) *kmsg.FindCoordinatorRequest {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = typ
	req.CoordinatorKeys = []string{key}
	return req
}

// withTopic is a case of one request against a fresh one-partition topic
// holding three records.
func withTopic(base string, f func(s *side, topic string) kmsg.Request) func(s *side) ([]kmsg.Response, error) {
	return one(func(s *side) (kmsg.Request, error) {
		t := s.topic(base)
		if err := s.createTopic(t, 1); err != nil {
			return nil, err
		}
		if err := s.produce(t, 0, plainBatch(3)); err != nil {
			return nil, err
		}
		return f(s, t), nil
	})
}

func metadataReq(topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, mt)
	}
	return req
}

// fetchReq fetches partitions of a topic at v12, the last version naming
// topics.
func fetchReq(topic string, offset int64, epoch int32, partitions ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 100, 1, 1<<20
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topic
	for _, p := range partitions {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.CurrentLeaderEpoch, fp.PartitionMaxBytes = p, offset, epoch, 1<<20
		fp.LogStartOffset = -1
		t.Partitions = append(t.Partitions, fp)
	}
	req.Topics = append(req.Topics, t)
	return req
}

func listOffsetsReq(topic string, ts int64, epoch int32, partitions ...int32) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = topic
	for _, p := range partitions {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = p, ts, epoch
		t.Partitions = append(t.Partitions, lp)
	}
	req.Topics = append(req.Topics, t)
	return req
}

// createReq is a CreateTopics of the named topics (one partition, RF 1)
// with the config pairs on each.
func createReq(names []string, partitions int32, rf int16, configs ...string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	for _, n := range names {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = n, partitions, rf
		for i := 0; i+1 < len(configs); i += 2 {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
			t.Configs = append(t.Configs, c)
		}
		req.Topics = append(req.Topics, t)
	}
	return req
}

func deleteReq(names ...string) *kmsg.DeleteTopicsRequest {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 10000
	for _, n := range names {
		req.TopicNames = append(req.TopicNames, n)
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, t)
	}
	return req
}

func describeConfigsReq(topics ...string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, t := range topics {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, t
		r.ConfigNames = []string{"cleanup.policy", "retention.ms"}
		req.Resources = append(req.Resources, r)
	}
	return req
}

func incrementalAlterReq(topic, name string, value *string) *kmsg.IncrementalAlterConfigsRequest {
	return incrementalAlterOf(kmsg.ConfigResourceTypeTopic, topic, false, alterOp{kmsg.IncrementalAlterConfigOpSet, name, value})
}

func offsetCommitReq(group, member string, generation int32, topic string, partition int32) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.SetVersion(9) // v10 names topics by id
	req.Group, req.MemberID, req.Generation = group, member, generation
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = topic
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset, p.LeaderEpoch = partition, 1, -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// firstHeartbeatReq is a KIP-848 member's first heartbeat, subscribing to
// topic with an empty (not null: Kafka refuses that) owned list.
func firstHeartbeatReq(group, member, topic string) *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, member, 0
	req.RebalanceTimeoutMillis = 30000
	req.SubscribedTopicNames = []string{topic}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	return req
}

func leaveReq(group, member string) *kmsg.LeaveGroupRequest {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = member
	req.Members = append(req.Members, lm)
	return req
}

func heartbeatReq(group, member string, generation int32) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = group, member, generation
	return req
}

// idempotent is a case of an idempotent producer's batches to a fresh
// topic: each batch (its base sequence and record count) is sent in turn
// and every response compared.
func idempotent(base string, epochDelta int16, batches ...[2]int32) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		t := s.topic(base)
		if err := s.createTopic(t, 1); err != nil {
			return nil, err
		}
		pid, epoch, err := s.initProducer(nil)
		if err != nil {
			return nil, err
		}
		var out []kmsg.Response
		for _, b := range batches {
			resp, err := s.do(produceReq(t, 0, nil, batch(int(b[1]), time.Now().UnixMilli(), pid, epoch+epochDelta, b[0], false)))
			if err != nil {
				return nil, err
			}
			out = append(out, resp)
		}
		return out, nil
	}
}

// corpus is every case, in the order they run; with destructive, also
// the cases that delete internal topics, last.
func corpus(destructive bool) []testCase {
	cases := append(append(append(append(append(basicCases(), txnCases()...), versionCases()...), describeCases()...), replicationCases()...), configCases()...)
	cases = append(append(append(append(append(cases, deleteRecordsCases()...), fencedCases()...), topicCases()...), tokenCases()...), shareCases()...)
	cases = append(append(append(append(cases, shareTopicCases()...), configResourceCases()...), clientMetricsCases()...), unregisterBrokerCases()...)
	cases = append(cases, featureCases()...)
	if destructive {
		cases = append(cases, testCase{"deletetopics-consumer-offsets", noSetup(func(*side) kmsg.Request {
			return deleteReq("__consumer_offsets")
		})})
	}
	return cases
}

// basicCases are the topic, config, offset and produce cases.
func basicCases() []testCase {
	now := func() int64 { return time.Now().UnixMilli() }
	return []testCase{
		{"apiversions", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClientSoftwareName, req.ClientSoftwareVersion = "protodiff", "1.0"
			return req
		})},
		{"apiversions-empty-software-name", noSetup(func(*side) kmsg.Request { return kmsg.NewPtrApiVersionsRequest() })},

		// Unknown topics and partitions.
		{"metadata-unknown-topic", noSetup(func(s *side) kmsg.Request {
			req := metadataReq(s.topic("missing"))
			req.AllowAutoTopicCreation = false
			return req
		})},
		{"metadata-unknown-topic-id", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			mt := kmsg.NewMetadataRequestTopic()
			mt.TopicID = [16]byte{0x5a, 15: 0xa5}
			req.Topics = append(req.Topics, mt)
			return req
		})},
		{"fetch-session-id", withTopic("fetch-sess", func(_ *side, t string) kmsg.Request {
			req := fetchReq(t, 0, -1, 0)
			req.SessionID, req.SessionEpoch = 5, 1
			return req
		})},
		{"createtopics-null-config-value", noSetup(func(s *side) kmsg.Request {
			req := createReq([]string{s.topic("nullcfg")}, 1, 1)
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name = "retention.ms"
			req.Topics[0].Configs = append(req.Topics[0].Configs, c)
			return req
		})},
		{"metadata-invalid-topic-name", noSetup(func(*side) kmsg.Request { return metadataReq("bad name!") })},
		{"produce-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return produceReq(s.topic("missing"), 0, nil, plainBatch(1))
		})},
		{"produce-unknown-partition", withTopic("produce-part", func(_ *side, t string) kmsg.Request {
			return produceReq(t, 7, nil, plainBatch(1))
		})},
		{"fetch-unknown-topic", noSetup(func(s *side) kmsg.Request { return fetchReq(s.topic("missing"), 0, -1, 0) })},
		{"fetch-unknown-partition", withTopic("fetch-part", func(_ *side, t string) kmsg.Request { return fetchReq(t, 0, -1, 7) })},
		{"listoffsets-unknown-topic", noSetup(func(s *side) kmsg.Request { return listOffsetsReq(s.topic("missing"), -1, -1, 0) })},
		{"listoffsets-unknown-partition", withTopic("lo-part", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -1, -1, 7) })},
		{"describeconfigs-unknown-topic", noSetup(func(s *side) kmsg.Request { return describeConfigsReq(s.topic("missing")) })},
		{"describeconfigs-repeated", withTopic("dc-rep", func(_ *side, t string) kmsg.Request { return describeConfigsReq(t, t) })},
		{"describeconfigs-unknown-broker", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "77"
			req.Resources = append(req.Resources, rr)
			return req
		})},
		{"createtopics-assignment-unknown-broker", noSetup(func(s *side) kmsg.Request {
			req := createReq([]string{s.topic("assign-77")}, -1, -1)
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = 0, []int32{77}
			req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
			return req
		})},
		{"createtopics-assignment-with-count", noSetup(func(s *side) kmsg.Request {
			req := createReq([]string{s.topic("assign-count")}, 1, -1)
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = 0, []int32{0}
			req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
			return req
		})},
		{"createtopics-negative-partitions", noSetup(func(s *side) kmsg.Request { return createReq([]string{s.topic("neg-parts")}, -5, 1) })},
		{"createtopics-zero-replication", noSetup(func(s *side) kmsg.Request { return createReq([]string{s.topic("rf0")}, 1, 0) })},
		{"incrementalalter-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return incrementalAlterReq(s.topic("missing"), "retention.ms", kmsg.StringPtr("1000"))
		})},
		{"deletetopics-unknown", noSetup(func(s *side) kmsg.Request { return deleteReq(s.topic("missing")) })},
		{"deletetopics-unknown-id", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.TimeoutMillis = 10000
			dt := kmsg.NewDeleteTopicsRequestTopic()
			dt.TopicID = [16]byte{0x5a, 15: 0xa5}
			req.Topics = append(req.Topics, dt)
			return req
		})},
		{"alterconfigs-unknown-topic", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrAlterConfigsRequest()
			rr := kmsg.NewAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, s.topic("missing")
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "retention.ms", kmsg.StringPtr("1000")
			rr.Configs = append(rr.Configs, c)
			req.Resources = append(req.Resources, rr)
			return req
		})},
		{"incrementalalter-null-value", withTopic("iac-null", func(_ *side, t string) kmsg.Request {
			return incrementalAlterReq(t, "retention.ms", nil)
		})},
		{"createpartitions-unknown-topic", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.TimeoutMillis = 10000
			ct := kmsg.NewCreatePartitionsRequestTopic()
			ct.Topic, ct.Count = s.topic("missing"), 2
			req.Topics = append(req.Topics, ct)
			return req
		})},
		{"findcoordinator-empty-transactional-id", noSetup(func(*side) kmsg.Request { return findCoordinatorReq(1, "") })},
		{"findcoordinator-empty-group", noSetup(func(*side) kmsg.Request { return findCoordinatorReq(0, "") })},
		{"findcoordinator-group", noSetup(func(s *side) kmsg.Request { return findCoordinatorReq(0, s.topic("g-fc")) })},
		{"findcoordinator-unknown-type", noSetup(func(*side) kmsg.Request { return findCoordinatorReq(7, "x") })},

		// Invalid topic names and configs in CreateTopics.
		{"createtopics-empty-name", noSetup(func(*side) kmsg.Request { return createReq([]string{""}, 1, 1) })},
		{"createtopics-name-too-long", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{strings.Repeat("x", 250) + s.suffix}, 1, 1)
		})},
		{"createtopics-name-bad-chars", noSetup(func(s *side) kmsg.Request { return createReq([]string{"a/b" + s.suffix}, 1, 1) })},
		{"createtopics-name-dot", noSetup(func(*side) kmsg.Request { return createReq([]string{"."}, 1, 1) })},
		{"createtopics-name-dotdot", noSetup(func(*side) kmsg.Request { return createReq([]string{".."}, 1, 1) })},
		{"createtopics-cluster-metadata", noSetup(func(*side) kmsg.Request { return createReq([]string{"__cluster_metadata"}, 1, 1) })},
		{"createtopics-consumer-offsets", noSetup(func(*side) kmsg.Request { return createReq([]string{"__consumer_offsets"}, 1, 1) })},
		{"createtopics-transaction-state", noSetup(func(*side) kmsg.Request { return createReq([]string{"__transaction_state"}, 1, 1) })},
		{"createtopics-duplicate", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("dup"), s.topic("dup")}, 1, 1)
		})},
		{"createtopics-exists", withTopic("exists", func(_ *side, t string) kmsg.Request { return createReq([]string{t}, 1, 1) })},
		{"createtopics-zero-partitions", noSetup(func(s *side) kmsg.Request { return createReq([]string{s.topic("zero")}, 0, 1) })},
		{"createtopics-replication-too-high", noSetup(func(s *side) kmsg.Request { return createReq([]string{s.topic("rf")}, 1, 4) })},
		{"createtopics-invalid-config-value", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("badval")}, 1, 1, "retention.ms", "notanumber")
		})},
		{"createtopics-unknown-config", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("unkcfg")}, 1, 1, "no.such.config", "1")
		})},
		{"createtopics-invalid-cleanup-policy", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("badpol")}, 1, 1, "cleanup.policy", "sometimes")
		})},
		{"createtopics-validate-only", noSetup(func(s *side) kmsg.Request {
			req := createReq([]string{s.topic("vonly")}, 3, 1)
			req.ValidateOnly = true
			return req
		})},
		{"incrementalalter-invalid-value", withTopic("iac-bad", func(_ *side, t string) kmsg.Request {
			return incrementalAlterReq(t, "retention.ms", kmsg.StringPtr("-7x"))
		})},
		{"incrementalalter-unknown-config", withTopic("iac-unk", func(_ *side, t string) kmsg.Request {
			return incrementalAlterReq(t, "no.such.config", kmsg.StringPtr("1"))
		})},
		{"deletetopics-duplicate", withTopic("del-dup", func(_ *side, t string) kmsg.Request { return deleteReq(t, t) })},
		{"deletetopics-cluster-metadata", noSetup(func(*side) kmsg.Request { return deleteReq("__cluster_metadata") })},
		{"createpartitions-fewer", withTopic("cp-fewer", func(_ *side, t string) kmsg.Request {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.TimeoutMillis = 10000
			ct := kmsg.NewCreatePartitionsRequestTopic()
			ct.Topic, ct.Count = t, 1
			req.Topics = append(req.Topics, ct)
			return req
		})},

		// Offsets: out of range, negative, the special timestamps,
		// duplicates and leader epochs.
		{"fetch-offset-past-end", withTopic("fetch-past", func(_ *side, t string) kmsg.Request { return fetchReq(t, 100, -1, 0) })},
		{"fetch-negative-offset", withTopic("fetch-neg", func(_ *side, t string) kmsg.Request { return fetchReq(t, -5, -1, 0) })},
		{"fetch-leader-epoch-stale", withTopic("fetch-stale", func(_ *side, t string) kmsg.Request { return fetchReq(t, 0, -5, 0) })},
		{"fetch-negative-partition", withTopic("fetch-negpart", func(_ *side, t string) kmsg.Request { return fetchReq(t, 0, -1, -1) })},
		{"fetch-unknown-topic-id", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(13)
			req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 100, 1, 1<<20
			ft := kmsg.NewFetchRequestTopic()
			ft.TopicID = [16]byte{0x5a, 15: 0xa5}
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 1<<20, -1
			ft.Partitions = append(ft.Partitions, fp)
			req.Topics = append(req.Topics, ft)
			return req
		})},
		{"listoffsets-leader-epoch-stale", withTopic("lo-stale", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -1, -5, 0) })},
		{"listoffsets-negative-partition", withTopic("lo-negpart", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -1, -1, -1) })},
		{"fetch-at-end", withTopic("fetch-end", func(_ *side, t string) kmsg.Request { return fetchReq(t, 3, -1, 0) })},
		{"fetch-from-start", withTopic("fetch-start", func(_ *side, t string) kmsg.Request { return fetchReq(t, 0, -1, 0) })},
		{"fetch-leader-epoch-too-high", withTopic("fetch-epoch", func(_ *side, t string) kmsg.Request { return fetchReq(t, 0, 1000, 0) })},
		{"listoffsets-latest", withTopic("lo-latest", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -1, -1, 0) })},
		{"listoffsets-earliest", withTopic("lo-earliest", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -2, -1, 0) })},
		{"listoffsets-max-timestamp", withTopic("lo-maxts", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -3, -1, 0) })},
		{"listoffsets-earliest-local", withTopic("lo-local", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -4, -1, 0) })},
		{"listoffsets-latest-tiered", withTopic("lo-tiered", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -5, -1, 0) })},
		{"listoffsets-timestamp-unknown-negative", withTopic("lo-neg", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -7, -1, 0) })},
		{"listoffsets-future-timestamp", withTopic("lo-future", func(_ *side, t string) kmsg.Request {
			return listOffsetsReq(t, now()+3600_000, -1, 0)
		})},
		{"listoffsets-duplicate-partition", withTopic("lo-dup", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -1, -1, 0, 0) })},
		{"listoffsets-leader-epoch-too-high", withTopic("lo-epoch", func(_ *side, t string) kmsg.Request { return listOffsetsReq(t, -1, 1000, 0) })},

		// Produce edge cases.
		{"produce-oversized-batch", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("big")
			if err := s.createTopic(t, 1, "max.message.bytes", "1000"); err != nil {
				return nil, err
			}
			return produceReq(t, 0, nil, batch(200, now(), -1, -1, -1, false)), nil
		})},
		{"produce-two-batches", withTopic("two-batches", func(_ *side, t string) kmsg.Request {
			return produceReq(t, 0, nil, append(plainBatch(1), plainBatch(1)...))
		})},
		{"produce-truncated-batch", withTopic("truncated", func(_ *side, t string) kmsg.Request {
			b := plainBatch(2)
			return produceReq(t, 0, nil, b[:len(b)-3])
		})},
		{"produce-short-garbage", withTopic("short-garbage", func(_ *side, t string) kmsg.Request {
			return produceReq(t, 0, nil, []byte{1, 2, 3, 4, 5})
		})},
		{"produce-bad-crc", withTopic("bad-crc", func(_ *side, t string) kmsg.Request {
			b := plainBatch(1)
			b[len(b)-1] ^= 0xff
			return produceReq(t, 0, nil, b)
		})},
		{"produce-magic-1", withTopic("magic-1", func(_ *side, t string) kmsg.Request {
			b := plainBatch(1)
			record.Batch(b).SetMagic(1)
			return produceReq(t, 0, nil, b)
		})},
		{"produce-trailing-bytes", withTopic("trailing", func(_ *side, t string) kmsg.Request {
			return produceReq(t, 0, nil, append(plainBatch(1), 1, 2, 3))
		})},
		{"produce-no-records", withTopic("no-records", func(_ *side, t string) kmsg.Request {
			return produceReq(t, 0, nil, []byte{})
		})},
		{"produce-consumer-offsets", noSetup(func(*side) kmsg.Request {
			return produceReq("__consumer_offsets", 0, nil, plainBatch(1))
		})},
		{"produce-compacted-null-key", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("compact-nokey")
			if err := s.createTopic(t, 1, "cleanup.policy", "compact"); err != nil {
				return nil, err
			}
			return produceReq(t, 0, nil, plainBatch(2)), nil
		})},
		{"produce-timestamp-two-hours-ahead", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("future")
			if err := s.createTopic(t, 1, "message.timestamp.after.max.ms", "3600000"); err != nil {
				return nil, err
			}
			return produceReq(t, 0, nil, batch(1, now()+2*3600_000, -1, -1, -1, false)), nil
		})},
		{"produce-acks-invalid", withTopic("acks", func(_ *side, t string) kmsg.Request {
			req := produceReq(t, 0, nil, plainBatch(1))
			req.Acks = 2
			return req
		})},
		{"idempotent-in-order", idempotent("idem-ok", 0, [2]int32{0, 2}, [2]int32{2, 1})},
		{"idempotent-duplicate-sequence", idempotent("idem-dup", 0, [2]int32{0, 2}, [2]int32{0, 2})},
		{"idempotent-out-of-order-sequence", idempotent("idem-ooo", 0, [2]int32{0, 2}, [2]int32{5, 1})},
		{"idempotent-first-sequence-not-zero", idempotent("idem-first", 0, [2]int32{3, 1})},
		{"idempotent-epoch-ahead", idempotent("idem-epoch", 3, [2]int32{0, 1})},
		{"transactional-batch-without-txn-id", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("txn-noid")
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			pid, epoch, err := s.initProducer(nil)
			if err != nil {
				return nil, err
			}
			return produceReq(t, 0, nil, batch(1, now(), pid, epoch, 0, true)), nil
		})},
	}
}
