package broker_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/internal/testkit"
)

// TestInternalTopicWaitsForTheCluster: on three voters with Kafka's
// default offsets.topic.replication.factor of 3, a FindCoordinator that
// reaches a node before the third has registered creates no
// __consumer_offsets with two replicas: it answers COORDINATOR_NOT_AVAILABLE
// (retriable) until the third node is up, and the topic then has three
// replicas on every partition, with the broker's min.insync.replicas, as
// Kafka's does. __transaction_state likewise, with
// transaction.state.log.min.isr.
func TestInternalTopicWaitsForTheCluster(t *testing.T) {
	c := newClusterWith(t, 3, 3, func(_ int, cfg *broker.Config) {
		// Kafka's defaults for the internal topics: three replicas.
		delete(cfg.Configs, "offsets.topic.replication.factor")
		delete(cfg.Configs, "transaction.state.log.replication.factor")
		delete(cfg.Configs, "transaction.state.log.min.isr")
		cfg.Configs["min.insync.replicas"] = "2"
	})
	// Two of the three voters are a majority: they start, the third not.
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { c.start(i) })
	}
	wg.Wait()
	ctx := testkit.Context(t)
	cl := c.client(0)
	find := func(keyType int8, key string) (kmsg.FindCoordinatorResponseCoordinator, error) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = keyType
		req.CoordinatorKeys = []string{key}
		resp, err := req.RequestWith(ctx, cl.Broker(0))
		if err != nil {
			return kmsg.FindCoordinatorResponseCoordinator{}, err
		}
		return resp.Coordinators[0], nil
	}
	for _, keyType := range []int8{0, 1} {
		co, err := find(keyType, "early")
		if err != nil {
			t.Fatal(err)
		}
		if co.ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("FindCoordinator type %d with 2 of 3 nodes registered: %v (%+v), want COORDINATOR_NOT_AVAILABLE", keyType, kerr.ErrorForCode(co.ErrorCode), co)
		}
	}
	adm := kadm.NewClient(cl)
	if td, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets", "__transaction_state"); err != nil {
		t.Fatal(err)
	} else if td.Has("__consumer_offsets") || td.Has("__transaction_state") {
		t.Fatalf("internal topics created with 2 of 3 nodes registered: %v", td)
	}

	c.start(2)
	for _, keyType := range []int8{0, 1} {
		testkit.WaitFor(t, fmt.Sprintf("a coordinator of type %d once all three nodes are up", keyType), func() (bool, string) {
			co, err := find(keyType, "later")
			if err != nil {
				return false, err.Error()
			}
			return co.ErrorCode == 0, fmt.Sprint(kerr.ErrorForCode(co.ErrorCode))
		})
	}
	// Metadata may be answered by the node that started last: wait until
	// it has applied the topics too.
	var td kadm.TopicDetails
	testkit.WaitFor(t, "both internal topics in Metadata", func() (bool, string) {
		var err error
		td, err = adm.ListTopicsWithInternal(ctx, "__consumer_offsets", "__transaction_state")
		if err != nil {
			return false, err.Error()
		}
		for _, topic := range []string{"__consumer_offsets", "__transaction_state"} {
			if d := td[topic]; d.Err != nil || len(d.Partitions) != clusterInternalPartitions {
				return false, fmt.Sprintf("%s: %v, %d partitions", topic, d.Err, len(d.Partitions))
			}
		}
		return true, ""
	})
	for _, topic := range []string{"__consumer_offsets", "__transaction_state"} {
		for _, p := range td[topic].Partitions.Sorted() {
			if len(p.Replicas) != 3 || len(p.ISR) != 3 {
				t.Errorf("%s-%d: replicas %v, isr %v; want three", topic, p.Partition, p.Replicas, p.ISR)
			}
		}
	}
	configs, err := adm.DescribeTopicConfigs(ctx, "__consumer_offsets", "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range configs {
		for _, cfg := range rc.Configs {
			if cfg.Key == "min.insync.replicas" && cfg.MaybeValue() != "2" {
				t.Errorf("%s min.insync.replicas = %s, want 2", rc.Name, cfg.MaybeValue())
			}
		}
	}
}
