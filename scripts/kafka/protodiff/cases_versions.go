package main

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's API version cases: versions Kafka 4 lists but refuses
// (KIP-896). The versions it no longer lists are the apiversions case's.

func versionCases() []testCase {
	apiVersionsV5 := func(cluster *string, node int32) *kmsg.ApiVersionsRequest {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(5)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "protodiff", "1"
		req.ClusterID, req.NodeID = cluster, node
		return req
	}
	return []testCase{
		// ApiVersions v5 (KIP-1242): the cluster and node the client
		// believes it reached, both or neither.
		{"apiversions-v5-other-cluster", noSetup(func(*side) kmsg.Request { return apiVersionsV5(kmsg.StringPtr("no-such-cluster"), 0) })},
		{"apiversions-v5-cluster-without-node", noSetup(func(*side) kmsg.Request { return apiVersionsV5(kmsg.StringPtr("no-such-cluster"), -1) })},
		{"apiversions-v5-node-without-cluster", noSetup(func(*side) kmsg.Request { return apiVersionsV5(nil, 0) })},
		// Kafka 4 lists Produce v0-2 for old librdkafka, which refuses to
		// produce to a broker without them, but does not serve them.
		{"produce-v2-listed-not-served", withTopic("produce-v2", func(s *side, t string) kmsg.Request {
			req := produceReq(t, 0, nil, plainBatch(1))
			req.SetVersion(2)
			return req
		})},
	}
}
