package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/internal/testkit"
)

// rackOf is the broker.rack the rack tests give node i.
func rackOf(i int32) string { return fmt.Sprintf("r%d", i+1) }

// batchesByNode counts, through a kgo hook, the record batches a client
// read from each broker.
type batchesByNode struct {
	mu sync.Mutex
	n  map[int32]int
}

func (b *batchesByNode) OnFetchBatchRead(meta kgo.BrokerMetadata, _ string, _ int32, _ kgo.FetchBatchMetrics) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == nil {
		b.n = map[int32]int{}
	}
	b.n[meta.NodeID]++
}

func (b *batchesByNode) counts() map[int32]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[int32]int{}
	for k, v := range b.n {
		out[k] = v
	}
	return out
}

// consumeN polls cl until it has n records.
func consumeN(t *testing.T, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var got []*kgo.Record
	testkit.WaitFor(t, fmt.Sprintf("%d records consumed", n), func() (bool, string) {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		fs := cl.PollFetches(pctx)
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded {
				t.Fatalf("consume: %v", e.Err)
			}
		}
		got = append(got, fs.Records()...)
		return len(got) >= n, fmt.Sprintf("%d records", len(got))
	})
	return got
}

// Follower fetching (KIP-392) on three nodes in racks r1, r2, r3 with
// replica.selector.class set to Kafka's RackAwareReplicaSelector:
// Metadata and DescribeCluster list each node's broker.rack; the leader sends a consumer
// naming a follower's rack to that follower (PreferredReadReplica, no
// records) and serves one in its own rack, in no known rack or on Fetch
// v10 (no client metadata) itself; the follower serves consumers of v11+
// up to its own high watermark, checking their leader epoch against the
// one it knows and their offset against its log end, and refuses v10
// NOT_LEADER_OR_FOLLOWER (a stale epoch is TestLeaderHints'). A kgo consumer with kgo.Rack of a follower's
// rack reads every batch from that follower.
func TestFollowerFetching(t *testing.T) {
	q := newQuorum(t, 3, func(i int, cfg *broker.Config) {
		cfg.Configs["broker.rack"] = rackOf(int32(i))
		cfg.Configs["replica.selector.class"] = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
	})
	ctx := testkit.Context(t)
	const topic = "racks"
	mt := replicatedTopic(t, ctx, q.nodes, topic)
	p := mt.Partitions[0]
	leader := p.Leader
	follower := (leader + 1) % 3

	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, nodeClient(t, q.nodes[follower]))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, nodeClient(t, q.nodes[follower]))
	if err != nil {
		t.Fatal(err)
	}
	racks := map[string]map[int32]*string{"Metadata": {}, "DescribeCluster": {}}
	for _, b := range meta.Brokers {
		racks["Metadata"][b.NodeID] = b.Rack
	}
	for _, b := range dc.Brokers {
		racks["DescribeCluster"][b.NodeID] = b.Rack
	}
	for api, byID := range racks {
		for id, rack := range byID {
			if rack == nil || *rack != rackOf(id) {
				t.Errorf("%s lists broker %d in rack %v, want %s", api, id, rack, rackOf(id))
			}
		}
	}
	if len(meta.Brokers) != 3 || len(dc.Brokers) != 3 {
		t.Errorf("Metadata lists %d brokers, DescribeCluster %d; want 3", len(meta.Brokers), len(dc.Brokers))
	}

	r := dialRaw(t, q.nodes[leader].Advertised())
	for range 3 {
		// acks=-1: every follower in the ISR has fetched past the batch.
		if got := produceTo(t, r, mt, -1, 10000, rawBatch("a", "b")); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}

	// kgo in the follower's rack ends up reading from the follower only.
	var batches batchesByNode
	cl := q.client(int(follower), kgo.Rack(rackOf(follower)), kgo.WithHooks(&batches),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	consumeN(t, ctx, cl, 6)
	for range 2 {
		if got := produceTo(t, r, mt, -1, 10000, rawBatch("c")); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	consumeN(t, ctx, cl, 2)
	if got := batches.counts(); got[follower] != 5 || len(got) != 1 {
		t.Errorf("kgo in rack %s read batches from nodes %v, want all 5 from follower %d", rackOf(follower), got, follower)
	}

	fetch := func(r *rawConn, version int16, rack string, offset int64, epoch int32) kmsg.FetchResponseTopicPartition {
		t.Helper()
		req := fetchRequest(topic, 1, 1<<20, 1<<20)
		req.SetVersion(version)
		req.Rack = rack
		rp := &req.Topics[0].Partitions[0]
		rp.FetchOffset, rp.CurrentLeaderEpoch = offset, epoch
		return rawDo[*kmsg.FetchResponse](t, r, req).Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		name      string
		version   int16
		rack      string
		preferred int32
	}{
		{"consumer in the follower's rack", 12, rackOf(follower), follower},
		{"consumer in the leader's rack", 12, rackOf(leader), -1},
		{"consumer in no known rack", 12, "elsewhere", -1},
		{"consumer naming no rack", 12, "", -1},
		{"Fetch v10, no client metadata", 10, rackOf(follower), -1},
	} {
		sp := fetch(r, tc.version, tc.rack, 0, p.LeaderEpoch)
		if sp.ErrorCode != 0 || sp.PreferredReadReplica != tc.preferred || sp.HighWatermark != 8 {
			t.Errorf("%s: %v, preferred read replica %d, HW %d; want none, %d, 8", tc.name, kerr.ErrorForCode(sp.ErrorCode), sp.PreferredReadReplica, sp.HighWatermark, tc.preferred)
		}
		if sent := tc.preferred >= 0; sent == (len(sp.RecordBatches) > 0) {
			t.Errorf("%s: %d bytes of records with preferred read replica %d", tc.name, len(sp.RecordBatches), sp.PreferredReadReplica)
		}
	}

	// The follower serves up to the high watermark it learned.
	fp := q.nodes[follower].PartitionForTest(topic, 0)
	testkit.WaitFor(t, "the follower's high watermark at 8", func() (bool, string) {
		return fp.HighWatermark() == 8, fmt.Sprintf("HW %d", fp.HighWatermark())
	})
	fr := dialRaw(t, q.nodes[follower].Advertised())
	for _, tc := range []struct {
		name    string
		version int16
		offset  int64
		epoch   int32
		code    *kerr.Error
		records bool
	}{
		{"v12 consumer", 12, 0, p.LeaderEpoch, nil, true},
		{"v12 consumer without an epoch", 12, 6, -1, nil, true},
		{"v12 consumer at the high watermark", 12, 8, p.LeaderEpoch, nil, false},
		{"v12 consumer past the log end", 12, 9, p.LeaderEpoch, kerr.OffsetOutOfRange, false},
		{"v12 consumer with a future epoch", 12, 0, p.LeaderEpoch + 1, kerr.UnknownLeaderEpoch, false},
		{"v10 consumer", 10, 0, p.LeaderEpoch, kerr.NotLeaderForPartition, false},
	} {
		sp := fetch(fr, tc.version, rackOf(follower), tc.offset, tc.epoch)
		if sp.ErrorCode != codeOf(tc.code) || (len(sp.RecordBatches) > 0) != tc.records || sp.PreferredReadReplica != -1 {
			t.Errorf("%s at the follower: %v with %d bytes, preferred %d; want %v, records %v", tc.name,
				kerr.ErrorForCode(sp.ErrorCode), len(sp.RecordBatches), sp.PreferredReadReplica, tc.code, tc.records)
		}
		if tc.code == nil && sp.HighWatermark != 8 {
			t.Errorf("%s at the follower: HW %d, want 8", tc.name, sp.HighWatermark)
		}
	}
}
