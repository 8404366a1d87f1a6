package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// startQuorum starts n nodes that form one metadata quorum through node.id
// and controller.quorum.voters, as `klog up -n` passes them, with short
// broker sessions so that fencing is quick to see.
func startQuorum(t *testing.T, n int) []*broker.Node {
	t.Helper()
	return newQuorum(t, n, nil).nodes
}

// startQuorumOf is startQuorum with the first voterCount nodes voters and
// the others broker-only nodes.
func startQuorumOf(t *testing.T, n, voterCount int) []*broker.Node {
	t.Helper()
	return startClusterWith(t, n, voterCount, shortSessions(nil)).nodes
}

// newQuorum starts n voters as startQuorum does; configure, if set, then
// changes each node's config.
func newQuorum(t *testing.T, n int, configure func(i int, cfg *broker.Config)) *cluster {
	t.Helper()
	return startClusterWith(t, n, n, shortSessions(configure))
}

// shortSessions sets short broker sessions, so fencing is quick to see,
// then calls configure.
func shortSessions(configure func(i int, cfg *broker.Config)) func(i int, cfg *broker.Config) {
	return func(i int, cfg *broker.Config) {
		cfg.Configs["broker.heartbeat.interval.ms"] = "50"
		cfg.Configs["broker.session.timeout.ms"] = "500"
		if configure != nil {
			configure(i, cfg)
		}
	}
}

// TestQuorumNodes: every node of a quorum gets ready and serves every admin
// API, a CreateTopics sent to each node (not the controller) is forwarded,
// and all nodes then answer Metadata alike.
func TestQuorumNodes(t *testing.T) {
	nodes := startQuorum(t, 3)
	ctx := testkit.Context(t)
	cl := clusterClient(t, nodes)
	for i := range nodes {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = fmt.Sprintf("on-node-%d", i), 3, 3
		req.Topics = append(req.Topics, rt)
		req.TimeoutMillis = 10000
		resp, err := req.RequestWith(ctx, cl.Broker(i))
		if err != nil {
			t.Fatalf("CreateTopics on node %d: %v", i, err)
		}
		if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
			t.Errorf("CreateTopics on node %d: %v", i, err)
		}
	}
	testkit.WaitFor(t, "the same Metadata from every node", func() (bool, string) {
		var seen []string
		var first string
		same := true
		for i := range nodes {
			req := kmsg.NewPtrMetadataRequest()
			resp, err := req.RequestWith(ctx, cl.Broker(i))
			if err != nil {
				return false, err.Error()
			}
			view := fmt.Sprintf("controller %d, %d brokers, %d topics", resp.ControllerID, len(resp.Brokers), len(resp.Topics))
			seen = append(seen, fmt.Sprintf("node %d: %s", i, view))
			if len(resp.Brokers) != 3 || len(resp.Topics) < 3 || (first != "" && view != first) {
				same = false
			}
			if first == "" {
				first = view
			}
		}
		return same, strings.Join(seen, "; ")
	})

	// A node cut off from the quorum stops heartbeating and is fenced:
	// the others' Metadata no longer lists it.
	nodes[2].Isolate()
	testkit.WaitFor(t, "node 2 left out of Metadata", func() (bool, string) {
		for i := range 2 {
			resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl.Broker(i))
			if err != nil {
				return false, err.Error()
			}
			if len(resp.Brokers) != 2 {
				return false, fmt.Sprintf("node %d lists %d brokers", i, len(resp.Brokers))
			}
		}
		return true, ""
	})
	nodes[2].Heal()
	testkit.WaitFor(t, "node 2 back in Metadata", func() (bool, string) {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl.Broker(0))
		if err != nil {
			return false, err.Error()
		}
		return len(resp.Brokers) == 3, fmt.Sprintf("%d brokers", len(resp.Brokers))
	})
}

// TestClusterBrokerOnlyNode: a node outside controller.quorum.voters, as
// `klog up -n 4` starts the fourth, gets ready, is listed by every node
// and forwards admin requests.
func TestClusterBrokerOnlyNode(t *testing.T) {
	nodes := startQuorumOf(t, 4, 3)
	ctx := testkit.Context(t)
	cl := clusterClient(t, nodes)
	knownBroker(ctx, t, cl, len(nodes), 3)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "on-broker", 4, 4
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 10000
	resp, err := req.RequestWith(ctx, cl.Broker(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("CreateTopics on the broker-only node: %v", err)
	}
	testkit.WaitFor(t, "4 brokers and the topic in every node's Metadata", func() (bool, string) {
		for i := range nodes {
			resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl.Broker(i))
			if err != nil {
				return false, err.Error()
			}
			if len(resp.Brokers) != 4 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 4 {
				return false, fmt.Sprintf("node %d: %d brokers, %d topics", i, len(resp.Brokers), len(resp.Topics))
			}
		}
		return true, ""
	})
}

// clusterClient is a client seeded with every node, closed when the test
// ends.
func clusterClient(t *testing.T, nodes []*broker.Node) *kgo.Client {
	t.Helper()
	var seeds []string
	for _, n := range nodes {
		seeds = append(seeds, n.Advertised())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// knownBroker waits until the Metadata of every one of the nodes lists
// broker id, and then cl's, so that requests to cl.Broker(id) reach it: a
// node just started may be missing from the metadata the client first
// loaded, and a later refresh answered by a node that has not applied its
// registration yet would drop it again (kgo then fails a request in
// flight to it as "the broker connection has died").
func knownBroker(ctx context.Context, t *testing.T, cl *kgo.Client, nodes, id int) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("every node and the client knowing broker %d", id), func() (bool, string) {
		for i := range nodes {
			resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl.Broker(i))
			if err != nil {
				return false, fmt.Sprintf("node %d: %v", i, err)
			}
			if !slices.ContainsFunc(resp.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == int32(id) }) {
				return false, fmt.Sprintf("node %d does not list broker %d yet", i, id)
			}
		}
		cl.ForceMetadataRefresh()
		_, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl.Broker(id))
		return err == nil, fmt.Sprint(err)
	})
}

// TestDescribeQuorum: the wire answer on a single node and on a broker-only
// node of a cluster, and Kafka's error for another topic.
func TestDescribeQuorum(t *testing.T) {
	ctx := testkit.Context(t)
	describe := func(r kmsg.Requestor, topic string, partition int32) *kmsg.DescribeQuorumResponse {
		t.Helper()
		req := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic, rt.Partitions = topic, []kmsg.DescribeQuorumRequestTopicPartition{{Partition: partition}}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	single := brokertest.Start(t)
	resp := describe(single.Client(), "__cluster_metadata", 0)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.CurrentVoters) != 1 || p.LeaderID != p.CurrentVoters[0].ReplicaID || len(p.Observers) != 0 || p.HighWatermark < 1 || len(resp.Nodes) != 1 {
		t.Errorf("single node: %+v nodes %+v", p, resp.Nodes)
	}
	for _, tc := range []struct {
		topic     string
		partition int32
	}{{"other", 0}, {"__cluster_metadata", 1}} {
		resp := describe(single.Client(), tc.topic, tc.partition)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("%s-%d: error %d", tc.topic, tc.partition, code)
		}
	}

	nodes := startQuorumOf(t, 4, 3)
	cl := clusterClient(t, nodes)
	knownBroker(ctx, t, cl, len(nodes), 3)
	testkit.WaitFor(t, "3 voters with endpoints and 1 observer, from the broker-only node", func() (bool, string) {
		resp := describe(cl.Broker(3), "__cluster_metadata", 0)
		p := resp.Topics[0].Partitions[0]
		ok := p.ErrorCode == 0 && len(p.CurrentVoters) == 3 && len(p.Observers) == 1 && p.Observers[0].ReplicaID == 3 &&
			len(resp.Nodes) == 3 && len(resp.Nodes[0].Listeners) == 1 && resp.Nodes[0].Listeners[0].Name == "CONTROLLER"
		return ok, fmt.Sprintf("%+v nodes %+v", p, resp.Nodes)
	})
}
