package broker_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
