package broker_test

import (
	"fmt"
	"testing"
	"time"

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

// A long-poll fetch parked for data is released as soon as its client
// closes the connection, not at the end of its MaxWait (issue 9: such
// fetches stayed in CLOSE-WAIT for up to 30 s).
func TestParkedFetchEndsWithItsConnection(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "empty"); err != nil {
		t.Fatal(err)
	}
	req := fetchRequest("empty", 1, 1<<20, 1<<20)
	req.MaxWaitMillis, req.MinBytes = 30_000, 1
	r := dialRaw(t, n.Addr())
	r.send(1, 12, 1, true, req.AppendTo(nil))
	b := n.Broker()
	testkit.WaitFor(t, "the fetch to park", func() (bool, string) {
		return b.ParkedFetches() == 1, fmt.Sprintf("%d parked", b.ParkedFetches())
	})

	closed := time.Now()
	r.c.Close()
	testkit.WaitFor(t, "the fetch to be released", func() (bool, string) {
		return b.ParkedFetches() == 0, fmt.Sprintf("%d parked", b.ParkedFetches())
	})
	if took := time.Since(closed); took > testkit.HangBound {
		t.Fatalf("parked fetch released %v after its connection closed", took)
	}

	// A parked fetch that keeps its connection is still answered, and so
	// is a request pipelined behind it, which ends the watch.
	req.MaxWaitMillis = 200
	r = dialRaw(t, n.Addr())
	r.send(1, 12, 2, true, req.AppendTo(nil))
	if corr, _, err := r.recv(); err != nil || corr != 2 {
		t.Fatalf("long poll on an open connection: correlation %d, %v", corr, err)
	}
	req.MaxWaitMillis = 30_000
	r.send(1, 12, 3, true, req.AppendTo(nil))
	testkit.WaitFor(t, "the second fetch to park", func() (bool, string) {
		return b.ParkedFetches() == 1, fmt.Sprintf("%d parked", b.ParkedFetches())
	})
	r.send(18, 0, 4, false, nil) // ApiVersions v0
	produceRaw(ctx, t, cl, "empty", 0, rawBatch("wake"))
	for _, want := range []int32{3, 4} {
		if corr, _, err := r.recv(); err != nil || corr != want {
			t.Fatalf("pipelined behind a long poll: correlation %d, %v; want %d", corr, err, want)
		}
	}
}

// A fetch naming a replica id is a follower's; from a broker that is no
// follower of the partition (this node itself, or a broker not among its
// replicas) it is refused NOT_LEADER_OR_FOLLOWER, as Kafka refuses an
// unknown replica, at v12 (ReplicaID) and v15 (ReplicaState). A consumer's
// (-1) is served.
func TestFetchFromNoFollowerRefused(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "followers"); err != nil {
		t.Fatal(err)
	}
	produceRaw(ctx, t, cl, "followers", 0, rawBatch("a"))
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "followers")
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, n.Addr()) // as sent: no client rewrites the version
	for _, tc := range []struct {
		version int16
		replica int32
		want    *kerr.Error
	}{
		{12, -1, nil},
		{12, 0, kerr.NotLeaderForPartition},
		{12, 7, kerr.NotLeaderForPartition},
		{15, 0, kerr.NotLeaderForPartition},
		{15, 7, kerr.NotLeaderForPartition},
	} {
		req := fetchRequest("followers", 1, 1<<20, 1<<20)
		req.SetVersion(tc.version)
		if tc.version >= 13 {
			req.Topics[0].TopicID = topics["followers"].ID
		}
		if tc.version >= 15 {
			req.ReplicaState.ID, req.ReplicaState.Epoch = tc.replica, 1
		} else {
			req.ReplicaID = tc.replica
		}
		resp := rawDo[*kmsg.FetchResponse](t, r, req)
		p := resp.Topics[0].Partitions[0]
		want := int16(0)
		if tc.want != nil {
			want = tc.want.Code
		}
		if p.ErrorCode != want {
			t.Errorf("v%d replica %d: %v, want %v", tc.version, tc.replica, kerr.ErrorForCode(p.ErrorCode), tc.want)
		}
		if tc.want != nil && (len(p.RecordBatches) != 0 || p.HighWatermark != -1) {
			t.Errorf("v%d replica %d: refused, yet %d bytes and high watermark %d", tc.version, tc.replica, len(p.RecordBatches), p.HighWatermark)
		}
	}
}

// A fetch whose MinBytes is more than its partitions hold beyond the fetch
// offset parks until MaxWait and then answers with what there is, as
// Kafka's does; a parked fetch ends with its client's connection. Before,
// a partition with any data past the fetch offset made the fetch read
// again at once, forever: no answer, a core spinning, and the loop outlived
// the client.
func TestFetchMinBytesAboveDataAnswersAtMaxWait(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "few"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		produceRaw(ctx, t, cl, "few", 0, rawBatch(fmt.Sprint(i)))
	}
	b := n.Broker()

	req := fetchRequest("few", 1, 1<<20, 1<<20)
	req.MinBytes, req.MaxWaitMillis = 1<<20, 500
	r := dialRaw(t, n.Addr())
	r.c.SetDeadline(time.Now().Add(20 * time.Second))
	r.send(1, 12, 1, true, req.AppendTo(nil))
	corr, body, err := r.recv()
	if err != nil || corr != 1 {
		t.Fatalf("fetch with MinBytes above the data: correlation %d, %v; want an answer at MaxWait", corr, err)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(12)
	if err := resp.ReadFrom(body[1:]); err != nil { // past the header's tags
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.HighWatermark != 10 || len(p.RecordBatches) == 0 {
		t.Fatalf("answer at MaxWait: error %d, high watermark %d, %d bytes of records; want the 10 records", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}

	// Parked with a long MaxWait, woken by an append that still leaves it
	// short, and then left by its client: the fetch ends with the
	// connection.
	req.MaxWaitMillis = 30_000
	r2 := dialRaw(t, n.Addr())
	r2.send(1, 12, 2, true, req.AppendTo(nil))
	testkit.WaitFor(t, "the fetch to park", func() (bool, string) {
		return b.ParkedFetches() == 1, fmt.Sprintf("%d parked", b.ParkedFetches())
	})
	produceRaw(ctx, t, cl, "few", 0, rawBatch("more"))
	r2.c.Close()
	testkit.WaitFor(t, "the parked fetch to end with its connection", func() (bool, string) {
		return b.ParkedFetches() == 0, fmt.Sprintf("%d parked", b.ParkedFetches())
	})
}
