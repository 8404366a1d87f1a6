package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/record"
)

// TestFetchFillsToMaxBytes: one fetch returns as many whole batches, of as
// many partitions, as the request's and the partitions' max bytes allow,
// capped by the broker's fetch.max.bytes: not just the first batch.
func TestFetchFillsToMaxBytes(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "many"); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		for range 5 {
			produceRaw(ctx, t, cl, "many", p, rawBatch("a", "b"))
		}
	}
	fetch := func(maxBytes, partitionMaxBytes int32) []int {
		t.Helper()
		resp, err := fetchRequest("many", 2, maxBytes, partitionMaxBytes).RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		var batches []int
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatal(kerr.ErrorForCode(p.ErrorCode))
			}
			count := 0
			for raw := p.RecordBatches; len(raw) > 0; count++ {
				b, err := record.Parse(raw)
				if err != nil {
					t.Fatalf("partition %d: %v", p.Partition, err)
				}
				raw = raw[b.Size():]
			}
			batches = append(batches, count)
		}
		return batches
	}
	if got := fetch(1<<20, 1<<20); len(got) != 2 || got[0] != 5 || got[1] != 5 {
		t.Errorf("batches per partition with room for all: %v, want [5 5]", got)
	}
	size := len(rawBatch("a", "b"))
	if got := fetch(1<<20, int32(2*size)); len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Errorf("batches per partition with room for two each: %v, want [2 2]", got)
	}
}

// fetchRequest is a Fetch v12 from offset 0 of partitions 0..partitions-1
// of topic, with the given limits.
func fetchRequest(topic string, partitions, maxBytes, partitionMaxBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.MaxBytes = maxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p
		rp.PartitionMaxBytes = partitionMaxBytes
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}
