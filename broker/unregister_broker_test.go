package broker_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

// unregisterBroker sends UnregisterBroker for id through cl and returns
// its answer as "ERROR_NAME: message", "" when it passed.
func unregisterBroker(t *testing.T, cl *kgo.Client, id int32) string {
	t.Helper()
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	resp, err := req.RequestWith(testkit.Context(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode == 0 {
		return ""
	}
	s := kerr.ErrorForCode(resp.ErrorCode).(*kerr.Error).Message
	if resp.ErrorMessage != nil {
		s += ": " + *resp.ErrorMessage
	}
	return s
}

// registered reports whether node id's image of the cluster holds the
// registration of broker of.
func registered(n *brokertest.Node, of int32) bool {
	return slices.ContainsFunc(n.Broker().ClusterState().Brokers, func(b metadata.Broker) bool { return b.ID == of })
}

// TestUnregisterBroker checks Kafka 4.4's UnregisterBroker in a cluster:
// a live broker's registration goes, its leaderships and ISR places with
// it while its replicas stay (offline), it stays unregistered while it
// runs and registers again when it restarts; an unknown broker is
// BROKER_ID_NOT_REGISTERED.
func TestUnregisterBroker(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.Topic("t", 3, 3))
	ctx := testkit.Context(t)
	cl := c.Node(0).Client()
	const victim = 2

	if got := unregisterBroker(t, cl, 7); got != "BROKER_ID_NOT_REGISTERED: Broker ID 7 is not currently registered" {
		t.Fatalf("unregister broker 7: %q", got)
	}
	if got := unregisterBroker(t, cl, victim); got != "" {
		t.Fatalf("unregister broker %d: %q", victim, got)
	}

	// Answered once the leaderships and ISRs moved.
	meta := kmsg.NewPtrMetadataRequest()
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t")}}
	resp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range resp.Brokers {
		if b.NodeID == victim {
			t.Errorf("Metadata still lists broker %d", victim)
		}
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.Leader == victim || slices.Contains(p.ISR, victim) || !slices.Contains(p.Replicas, victim) ||
			!slices.Equal(p.OfflineReplicas, []int32{victim}) {
			t.Errorf("t-%d: leader %d, replicas %v, isr %v, offline %v", p.Partition, p.Leader, p.Replicas, p.ISR, p.OfflineReplicas)
		}
	}
	if got := listConfigResources(t, c, cl, 1, 4); !slices.Equal(got, []string{"", "4:0", "4:1"}) {
		t.Errorf("ListConfigResources of brokers after the unregistration: %v", got)
	}

	// The victim runs on unregistered: a later change reaches its image,
	// its registration does not come back.
	if got := unregisterBroker(t, cl, victim); got != fmt.Sprintf("BROKER_ID_NOT_REGISTERED: Broker ID %d is not currently registered", victim) {
		t.Fatalf("unregister broker %d again: %q", victim, got)
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "after", 1, 2
	create.Topics = append(create.Topics, ct)
	if cresp, err := create.RequestWith(ctx, cl); err != nil || cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic after: %v %+v", err, cresp)
	}
	vc := c.Node(victim).Client()
	testkit.WaitFor(t, "the victim's image to hold topic after", func() (bool, string) {
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("after")}}
		resp, err := vc.SeedBrokers()[0].Request(ctx, req)
		if err != nil {
			return false, err.Error()
		}
		return resp.(*kmsg.MetadataResponse).Topics[0].ErrorCode == 0, "topic after unknown"
	})
	for _, n := range c.Nodes() {
		if registered(n, victim) {
			t.Fatalf("node %d's image holds broker %d's registration again", n.ID(), victim)
		}
	}

	// Its next run registers.
	c.Node(victim).Restart()
	testkit.WaitFor(t, "broker 2 registered again", func() (bool, string) {
		resp, err := meta.RequestWith(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		return len(resp.Brokers) == 3, fmt.Sprintf("%d brokers", len(resp.Brokers))
	})
}

// TestUnregisterBrokerAuthorization checks that unregistering needs ALTER
// on the cluster, as in Kafka.
func TestUnregisterBrokerAuthorization(t *testing.T) {
	c, _ := aliceCluster(t)
	if got := unregisterBroker(t, as(c, "alice"), 0); got != "CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed." {
		t.Fatalf("alice unregisters broker 0: %q", got)
	}
	if !registered(c.Nodes()[0], 0) {
		t.Fatal("broker 0 unregistered by a refused request")
	}
}
