package seed_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/seed"
)

// TestApply: seed.Apply creates the seed's topics with their configs and
// produces their records to the partitions asked for; applied again it
// leaves them, records and all; a topic of another shape is seed.ErrConflict.
func TestApply(t *testing.T) {
	n := brokertest.Start(t)
	cl := n.Client(seed.ProducerOpts()...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := seed.ParseFile("testdata/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := seed.Apply(ctx, cl, s)
	if err != nil || len(res.Created) != 2 || res.Records != 4 {
		t.Fatalf("seed.Apply: %+v, %v", res, err)
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

	res, err = seed.Apply(ctx, cl, s)
	if err != nil || len(res.Existing) != 2 || res.Records != 0 {
		t.Fatalf("seed.Apply again: %+v, %v", res, err)
	}
	s.Topics[1].Configs["cleanup.policy"] = "delete"
	if _, err := seed.Apply(ctx, cl, s); !errors.Is(err, seed.ErrConflict) {
		t.Fatalf("seed.Apply with another cleanup.policy: %v, want seed.ErrConflict", err)
	}
	if _, err := seed.Apply(ctx, cl, seed.Spec{Topics: []seed.Topic{{Name: "orders", Partitions: 4}}}); !errors.Is(err, seed.ErrConflict) {
		t.Fatalf("seed.Apply with 4 partitions: %v, want seed.ErrConflict", err)
	}
}

// TestWaitReady: seed.WaitReady returns on a node that serves, and leaves no
// probe topic behind.
func TestWaitReady(t *testing.T) {
	n := brokertest.Start(t)
	cl := n.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := seed.WaitReady(ctx, cl, 1); err != nil {
		t.Fatal(err)
	}
	td, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if td.Has(seed.ProbeTopic) {
		t.Errorf("%s is left behind", seed.ProbeTopic)
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
