package main

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/kwire"
)

// replicationCases are the replication answers a single node already
// gives: min.insync.replicas against acks, a replica id in Fetch, and
// min.insync.replicas as a topic config. The cluster's cases (a fenced
// leader, a shrunk ISR, a follower's fetch) join them with many nodes.
func replicationCases() []testCase {
	minISR2 := func(base string, acks int16) func(s *side) ([]kmsg.Response, error) {
		return one(func(s *side) (kmsg.Request, error) {
			t := s.topic(base)
			if err := s.createTopic(t, 1, "min.insync.replicas", "2"); err != nil {
				return nil, err
			}
			return kwire.ProduceRequest(t, 0, acks, plainBatch(2)), nil
		})
	}
	replicaFetch := func(replica int32) func(s *side, t string) kmsg.Request {
		return func(_ *side, t string) kmsg.Request {
			req := fetchReq(t, 0, -1, 0)
			req.ReplicaID = replica
			return req
		}
	}
	return []testCase{
		// One replica in sync of the two min.insync.replicas asks for.
		{"produce-acks-all-not-enough-replicas", minISR2("nisr-all", -1)},
		{"produce-acks-one-min-isr-unmet", minISR2("nisr-one", 1)},
		{"createtopics-min-isr-above-replication", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("misr-rf")}, 1, 1, "min.insync.replicas", "3")
		})},
		{"createtopics-min-isr-zero", noSetup(func(s *side) kmsg.Request {
			return createReq([]string{s.topic("misr-0")}, 1, 1, "min.insync.replicas", "0")
		})},
		{"incrementalalter-min-isr-zero", withTopic("iac-misr", func(_ *side, t string) kmsg.Request {
			return incrementalAlterReq(t, "min.insync.replicas", kmsg.StringPtr("0"))
		})},
		// A fetch naming a replica id: the node's own (0) and one that
		// is no replica of the partition (7).
		{"fetch-replica-id-own", withTopic("fetch-rid0", replicaFetch(0))},
		{"fetch-replica-id-not-a-replica", withTopic("fetch-rid7", replicaFetch(7))},
		{"metadata-replicas-isr", withTopic("md-isr", func(_ *side, t string) kmsg.Request { return metadataReq(t) })},
	}
}
