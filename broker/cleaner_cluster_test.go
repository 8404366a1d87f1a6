package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// partition0 is partition 0 of topic as the cluster's metadata has it.
func partition0(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) kadm.PartitionDetail {
	t.Helper()
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return tds[topic].Partitions[0]
}

// TestClusterFollowerFetchesCleanedLog: a follower that was down while its
// leader wrote and compacted a topic catches up by fetching the cleaned
// batches, gaps and all; once it leads, a consumer from the start sees
// every key's latest value, and one at an offset inside a gap continues at
// the next offset held.
func TestClusterFollowerFetchesCleanedLog(t *testing.T) {
	ctx := context.Background()
	c := brokertest.StartCluster(t, 3, brokertest.Config("log.cleaner.backoff.ms", "50"),
		brokertest.Config("replica.lag.time.max.ms", "1000"))
	adm := kadm.NewClient(c.Client())
	ratio, policy, seg := "0.01", "compact", "2048"
	if _, err := adm.CreateTopic(ctx, 1, 2, map[string]*string{
		"cleanup.policy": &policy, "internal.segment.bytes": &seg, "min.cleanable.dirty.ratio": &ratio,
	}, "c"); err != nil {
		t.Fatal(err)
	}
	part := func() kadm.PartitionDetail { return partition0(ctx, t, adm, "c") }
	// Three nodes, two replicas: killing one leaves the quorum a majority.
	d := part()
	leader, follower := d.Leader, d.Replicas[0]
	if follower == leader {
		follower = d.Replicas[1]
	}
	c.Node(follower).Kill()
	// Leader acks: the dead follower leaves the ISR only once it lags
	// (replica.lag.time.max.ms), and then the high watermark, which bounds
	// the cleaner, catches up.
	cl := c.Node(leader).Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0))
	const keys, rounds = 20, 100
	for r := range rounds {
		for k := range keys {
			rec := &kgo.Record{Topic: "c", Key: fmt.Appendf(nil, "k%d", k), Value: fmt.Appendf(nil, "v%d-%d", k, r)}
			if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cl.Close()
	testkit.WaitFor(t, "the killed follower out of the ISR", func() (bool, string) {
		d := part()
		return !slices.Contains(d.ISR, follower), fmt.Sprintf("isr %v", d.ISR)
	})
	testkit.WaitFor(t, "the leader to clean the topic", func() (bool, string) {
		st, ok := c.Node(leader).Broker().CleanerState("c", 0)
		return ok && st.Runs > 0 && st.RecordsRemoved > keys*rounds/2, fmt.Sprintf("%+v", st)
	})
	c.Node(follower).Start()
	testkit.WaitFor(t, "the follower back in the ISR", func() (bool, string) {
		d := part()
		return slices.Contains(d.ISR, follower), fmt.Sprintf("isr %v", d.ISR)
	})
	c.Node(leader).Kill()
	testkit.WaitFor(t, "the follower to lead", func() (bool, string) {
		d := part()
		return d.Leader == follower, fmt.Sprintf("leader %d", d.Leader)
	})
	// The follower holds what the leader held when it fetched: the cleaned
	// section (one record per key) and the uncleaned tail.
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Node(follower).Addr()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"c": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	latest := map[string]string{}
	var offsets []int64
	pctx, cancel := context.WithTimeout(ctx, testkit.WaitTimeout)
	defer cancel()
	for len(offsets) == 0 || offsets[len(offsets)-1] < keys*rounds-1 {
		fs := cons.PollFetches(pctx)
		if pctx.Err() != nil {
			t.Fatalf("consumed up to %v: %v", offsets[max(len(offsets)-1, 0):], pctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if n := len(offsets); n > 0 && r.Offset <= offsets[n-1] {
				t.Fatalf("offset %d after %d", r.Offset, offsets[n-1])
			}
			offsets = append(offsets, r.Offset)
			latest[string(r.Key)] = string(r.Value)
		})
	}
	for k := range keys {
		if v := latest[fmt.Sprintf("k%d", k)]; v != fmt.Sprintf("v%d-%d", k, rounds-1) {
			t.Fatalf("k%d reads %q after failover", k, v)
		}
	}
	if len(offsets) > keys*rounds/2 {
		t.Fatalf("the follower holds %d of %d records: it did not fetch the cleaned log", len(offsets), keys*rounds)
	}
	// A consumer at an offset the cleaner removed reads on from the next.
	gap := int64(-1)
	for i, next := 0, int64(0); i < len(offsets); i, next = i+1, offsets[i]+1 {
		if offsets[i] > next {
			gap = (next + offsets[i]) / 2
			break
		}
	}
	if gap < 0 {
		t.Fatal("no gap in the cleaned log")
	}
	at, err := kgo.NewClient(kgo.SeedBrokers(c.Node(follower).Addr()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"c": {0: kgo.NewOffset().At(gap)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	var first int64 = -1
	for first < 0 {
		fs := at.PollFetches(pctx)
		if pctx.Err() != nil {
			t.Fatalf("consume from %d: %v", gap, pctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if first < 0 {
				first = r.Offset
			}
		})
	}
	if want := offsets[slices.IndexFunc(offsets, func(o int64) bool { return o > gap })]; first != want {
		t.Fatalf("a consumer at %d (removed) starts at %d, want %d", gap, first, want)
	}
}
