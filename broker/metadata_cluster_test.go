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

// TestMetadataOnALaggingNode: a topic created through the active
// controller is asked for at once, by name, from another node, which
// learns of the commit a little later. It answers with the topic, not
// UNKNOWN_TOPIC_OR_PARTITION: a node that does not know a topic named in
// Metadata first catches up with the active controller, so a client that
// heard of the topic from one node is not told by another that it does not
// exist (sarama's, librdkafka's and aiokafka's consumers give up on that).
func TestMetadataOnALaggingNode(t *testing.T) {
	c := startCluster(t, 3)
	ctx := testkit.Context(t)
	cl := c.client(0)
	m, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := (m.Controller + 1) % 3
	for i := range 10 {
		topic := fmt.Sprintf("lagging-%d", i)
		create := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
		create.Topics = append(create.Topics, rt)
		create.TimeoutMillis = 10000
		cresp, err := create.RequestWith(ctx, cl.Broker(int(m.Controller)))
		if err != nil || cresp.Topics[0].ErrorCode != 0 {
			t.Fatalf("create %s on the controller, node %d: %v, %+v", topic, m.Controller, err, cresp)
		}
		md := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		md.Topics = append(md.Topics, mt)
		mresp, err := md.RequestWith(ctx, cl.Broker(int(other)))
		if err != nil {
			t.Fatal(err)
		}
		if code := mresp.Topics[0].ErrorCode; code != 0 {
			t.Fatalf("Metadata for %s from node %d right after its creation on node %d: %v", topic, other, m.Controller, kerr.ErrorForCode(code))
		}
	}
}

// TestAutoCreateWhileTheClusterForms: a client reaches the first nodes of
// a new cluster before the last has registered, and its Metadata request
// auto-creates a topic the cluster's replication factor (3) needs every
// node for. The node waits for the forming cluster's last voter to
// register and answers with the topic, led and fully replicated, instead
// of an error the client would only retry after its backoff (which made
// klog up -n 3's first produce take 300 ms).
func TestAutoCreateWhileTheClusterForms(t *testing.T) {
	c := newClusterWith(t, 3, 3, func(_ int, cfg *broker.Config) {
		cfg.Configs["default.replication.factor"] = "3"
	})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { errs[i] = c.boot(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start node %d: %v", i, err)
		}
	}
	ctx := testkit.Context(t)
	cl := c.client(0)
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	topic := "early"
	rt.Topic = &topic
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	type answer struct {
		resp *kmsg.MetadataResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := req.RequestWith(ctx, cl.Broker(0))
		answered <- answer{resp, err}
	}()
	booted := make(chan error, 1)
	go func() { booted <- c.boot(2) }()
	a := <-answered
	if err := <-booted; err != nil {
		t.Fatalf("start node 2: %v", err)
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	if len(a.resp.Topics) != 1 {
		t.Fatalf("topics: %+v", a.resp.Topics)
	}
	got := a.resp.Topics[0]
	if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
		t.Fatalf("Metadata answered %v for the auto-created topic", err)
	}
	if len(got.Partitions) == 0 || got.Partitions[0].Leader < 0 || len(got.Partitions[0].Replicas) != 3 {
		t.Fatalf("partitions: %+v", got.Partitions)
	}
}
