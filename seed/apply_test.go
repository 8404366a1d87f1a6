package seed

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
)

// TestApply: Apply creates the seed's topics with their configs and
// produces their records to the partitions asked for; applied again it
// leaves them, records and all; a topic of another shape is ErrConflict.
func TestApply(t *testing.T) {
	n := brokertest.Start(t)
	cl := n.Client(ProducerOpts()...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := ParseFile("testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Apply(ctx, cl, s)
	if err != nil || len(res.Created) != 2 || res.Records != 4 {
		t.Fatalf("Apply: %+v, %v", res, err)
	}
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, "orders", "customers")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("orders", 2); o.Offset != 1 {
		t.Errorf("orders/2 ends at %d, want 1 (the record that names partition 2)", o.Offset)
	}
	if o, _ := ends.Lookup("customers", 0); o.Offset != 2 {
		t.Errorf("customers/0 ends at %d, want 2", o.Offset)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "customers")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rcs[0].Configs, rcs[0].Err; err != nil || !hasConfig(c, "cleanup.policy", "compact") {
		t.Errorf("customers configs: %+v, %v", c, err)
	}

	res, err = Apply(ctx, cl, s)
	if err != nil || len(res.Existing) != 2 || res.Records != 0 {
		t.Fatalf("Apply again: %+v, %v", res, err)
	}
	s.Topics[1].Configs["cleanup.policy"] = "delete"
	if _, err := Apply(ctx, cl, s); !errors.Is(err, ErrConflict) {
		t.Fatalf("Apply with another cleanup.policy: %v, want ErrConflict", err)
	}
	if _, err := Apply(ctx, cl, Spec{Topics: []Topic{{Name: "orders", Partitions: 4}}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("Apply with 4 partitions: %v, want ErrConflict", err)
	}
}

// TestWaitReady: WaitReady returns on a node that serves, and leaves no
// probe topic behind.
func TestWaitReady(t *testing.T) {
	n := brokertest.Start(t)
	cl := n.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := WaitReady(ctx, cl, 1); err != nil {
		t.Fatal(err)
	}
	td, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if td.Has(ProbeTopic) {
		t.Errorf("%s is left behind", ProbeTopic)
	}
}

func hasConfig(cs []kadm.Config, key, value string) bool {
	for _, c := range cs {
		if c.Key == key && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}
