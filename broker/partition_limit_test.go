package broker_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestPartitionLimit: CreateTopics and CreatePartitions that would put more
// than klog.max.partitions partition replicas on the node are refused with
// POLICY_VIOLATION and a message naming the limit, and create nothing; a
// creation that fills the node exactly succeeds. A partition count past
// what any topic may have is refused before anything is placed.
func TestPartitionLimit(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("klog.max.partitions", "10"))
	cl := n.Client()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 6, 1, nil, "a"); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error, msg string) {
		t.Helper()
		if !errors.Is(err, kerr.PolicyViolation) || !strings.Contains(msg, "klog.max.partitions=10") {
			t.Errorf("%s: %v %q, want POLICY_VIOLATION naming klog.max.partitions", what, err, msg)
		}
	}
	created, err := adm.CreateTopic(ctx, 5, 1, nil, "b")
	refused("create 5 more", err, created.ErrMessage)
	if code, _, _ := topicMetadata(ctx, t, cl, "b"); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("refused topic b: %v, want it absent", kerr.ErrorForCode(code))
	}
	resp, err := adm.UpdatePartitions(ctx, 11, "a")
	if err != nil {
		t.Fatal(err)
	}
	refused("grow a to 11", resp["a"].Err, resp["a"].ErrMessage)
	if _, _, parts := topicMetadata(ctx, t, cl, "a"); parts != 6 {
		t.Errorf("a has %d partitions after a refused growth, want 6", parts)
	}
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "c"); err != nil {
		t.Errorf("create the last 4: %v", err)
	}
	created, err = adm.CreateTopic(ctx, 1, 1, nil, "d")
	refused("create one past the limit", err, created.ErrMessage)

	created, err = adm.CreateTopic(ctx, 1_000_000, 1, nil, "huge")
	if !errors.Is(err, kerr.InvalidPartitions) {
		t.Errorf("create 1,000,000 partitions: %v %q", err, created.ErrMessage)
	}
	if code, _, _ := topicMetadata(ctx, t, cl, "huge"); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("refused topic huge: %v, want it absent", kerr.ErrorForCode(code))
	}
}
