package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestMetadataRightAfterDeleteTopics: a Metadata that may auto-create a
// topic, sent right after DeleteTopics deleted it, is answered as Kafka
// 4.4 answers it, UNKNOWN_TOPIC_OR_PARTITION with no partitions, and does
// not make the topic again; the next one creates it, as any unknown topic.
func TestMetadataRightAfterDeleteTopics(t *testing.T) {
	ctx := testkit.Context(t)
	cl := brokertest.Start(t).Client()
	createTopics(ctx, t, cl, 2, "gone")
	if resp, err := kadm.NewClient(cl).DeleteTopics(ctx, "gone"); err != nil || resp.Error() != nil {
		t.Fatalf("delete: %v %v", err, resp.Error())
	}
	ask := func(autoCreate bool) kmsg.MetadataResponseTopic {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = autoCreate
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("gone")
		req.Topics = append(req.Topics, mt)
		resp := requestNode[*kmsg.MetadataResponse](ctx, t, cl, req)
		if len(resp.Topics) != 1 {
			t.Fatalf("%d topics answered, want 1", len(resp.Topics))
		}
		return resp.Topics[0]
	}
	if got := ask(true); got.ErrorCode != kerr.UnknownTopicOrPartition.Code || len(got.Partitions) != 0 {
		t.Errorf("right after the deletion: %v with %d partitions, want UNKNOWN_TOPIC_OR_PARTITION and none", kerr.ErrorForCode(got.ErrorCode), len(got.Partitions))
	}
	if got := ask(false); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("the deleted topic was made again by that Metadata: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	if got := ask(true); got.ErrorCode != 0 || len(got.Partitions) != 1 {
		t.Errorf("asked again: %v with %d partitions, want it auto-created with num.partitions=1", kerr.ErrorForCode(got.ErrorCode), len(got.Partitions))
	}
}
