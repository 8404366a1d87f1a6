package broker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// shareClient is one share group member speaking the share protocol with
// kmsg requests, keeping its share session's epoch.
type shareClient struct {
	t       *testing.T
	cl      *kgo.Client
	group   string
	member  string
	topicID [16]byte
	epoch   int32 // the share session's next epoch
}

func (c *shareClient) do(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.cl.Broker(0).Request(ctx, req)
	if err != nil {
		c.t.Fatalf("%s: %v", kmsg.Key(req.Key()).Name(), err)
	}
	return resp
}

func (c *shareClient) heartbeat(epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	c.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = c.group, c.member, epoch
	if len(topics) > 0 {
		req.SubscribedTopicNames = topics
	}
	return c.do(req).(*kmsg.ShareGroupHeartbeatResponse)
}

// ackBatch acknowledges first..last with one type.
type ackBatch struct {
	first, last int64
	typ         int8
}

// fetch sends a ShareFetch of partition 0 at the session's epoch with
// acks piggybacked, waiting up to wait, and advances the epoch on success.
func (c *shareClient) fetch(wait time.Duration, acks ...ackBatch) *kmsg.ShareFetchResponse {
	c.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &c.group, &c.member, c.epoch
	req.MaxWaitMillis, req.MaxRecords, req.MinBytes = int32(wait/time.Millisecond), 500, 1
	p := kmsg.NewShareFetchRequestTopicPartition()
	for _, a := range acks {
		p.AcknowledgementBatches = append(p.AcknowledgementBatches, kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{FirstOffset: a.first, LastOffset: a.last, AcknowledgeTypes: []int8{a.typ}})
	}
	req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: c.topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{p}}}
	resp := c.do(req).(*kmsg.ShareFetchResponse)
	if resp.ErrorCode == 0 {
		c.epoch = nextShareEpoch(c.epoch)
	}
	return resp
}

// acknowledge sends a ShareAcknowledge of partition 0 at epoch.
func (c *shareClient) acknowledge(epoch int32, acks ...ackBatch) *kmsg.ShareAcknowledgeResponse {
	c.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = &c.group, &c.member, epoch
	p := kmsg.NewShareAcknowledgeRequestTopicPartition()
	for _, a := range acks {
		p.AcknowledgementBatches = append(p.AcknowledgementBatches, kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: a.first, LastOffset: a.last, AcknowledgeTypes: []int8{a.typ}})
	}
	req.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: c.topicID, Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{p}}}
	return c.do(req).(*kmsg.ShareAcknowledgeResponse)
}

func nextShareEpoch(e int32) int32 {
	if e < 0 {
		return 0
	}
	return e + 1
}

// acquired lists the acquired runs of a ShareFetch of one partition as
// "first-last/deliveries", checking the partition has no error.
func acquired(t *testing.T, resp *kmsg.ShareFetchResponse) []string {
	t.Helper()
	if resp.ErrorCode != 0 {
		t.Fatalf("share fetch: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	var out []string
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if p.ErrorCode != 0 || p.AcknowledgeErrorCode != 0 {
				t.Fatalf("partition %d: error %v, acknowledge error %v", p.Partition, kerr.ErrorForCode(p.ErrorCode), kerr.ErrorForCode(p.AcknowledgeErrorCode))
			}
			for _, a := range p.AcquiredRecords {
				out = append(out, fmt.Sprintf("%d-%d/%d", a.FirstOffset, a.LastOffset, a.DeliveryCount))
			}
			if p.Records == nil { // Kafka's clients refuse a null
				t.Fatalf("partition %d: records null", p.Partition)
			}
			if len(p.AcquiredRecords) > 0 && len(p.Records) == 0 {
				t.Fatalf("partition %d: records acquired, none sent", p.Partition)
			}
		}
	}
	return out
}

func wantAcquired(t *testing.T, resp *kmsg.ShareFetchResponse, want ...string) {
	t.Helper()
	if got := acquired(t, resp); !slices.Equal(got, want) {
		t.Fatalf("acquired %v, want %v", got, want)
	}
}

func ackCode(resp *kmsg.ShareAcknowledgeResponse) int16 {
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// startShare starts a node with topic "s" of one partition and returns
// share clients of group "g" with its topic id.
func startShare(t *testing.T, members ...string) (*brokertest.Node, *kgo.Client, []*shareClient) {
	n := brokertest.Start(t, brokertest.Topic("s", 1, 1))
	cl := n.Client(kgo.DefaultProduceTopic("s"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := testkit.Context(t)
	md, err := cl.Broker(0).Request(ctx, &kmsg.MetadataRequest{Version: 12, Topics: []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("s")}}})
	if err != nil {
		t.Fatal(err)
	}
	id := md.(*kmsg.MetadataResponse).Topics[0].TopicID
	// The group's coordinator: __consumer_offsets is made by the first
	// FindCoordinator, and serves once a describe finds no such group.
	testkit.WaitFor(t, "the group coordinator of g", func() (bool, string) {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKeys = []string{"g"}
		if _, err := fc.RequestWith(ctx, cl); err != nil {
			return false, err.Error()
		}
		resp, err := cl.Broker(0).Request(ctx, &kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{"g"}})
		if err != nil {
			return false, err.Error()
		}
		code := resp.(*kmsg.ShareGroupDescribeResponse).Groups[0].ErrorCode
		return code == kerr.GroupIDNotFound.Code, kerr.ErrorForCode(code).Error()
	})
	var out []*shareClient
	for _, m := range members {
		out = append(out, &shareClient{t: t, cl: cl, group: "g", member: m, topicID: id})
	}
	return n, cl, out
}

// TestShareGroupFetchAcknowledge drives two share group members through
// heartbeat, fetch and acknowledge: records handed to one member at a
// time, released records delivered again with a higher count, a lapsed
// lock giving records to the other, and the refusals of bad
// acknowledgements and session epochs.
func TestShareGroupFetchAcknowledge(t *testing.T) {
	n, cl, cs := startShare(t, "m1", "m2")
	m1, m2 := cs[0], cs[1]
	hb := m1.heartbeat(0, "s")
	if hb.ErrorCode != 0 || hb.Assignment == nil || len(hb.Assignment.TopicPartitions) != 1 || hb.MemberEpoch != 1 {
		t.Fatalf("join: %v epoch %d assignment %+v", kerr.ErrorForCode(hb.ErrorCode), hb.MemberEpoch, hb.Assignment)
	}
	if hb := m2.heartbeat(0, "s"); hb.ErrorCode != 0 || hb.MemberEpoch != 2 {
		t.Fatalf("second join: %v epoch %d", kerr.ErrorForCode(hb.ErrorCode), hb.MemberEpoch)
	}

	// The first fetch opens the session and starts the share-partition
	// at the log end (share.auto.offset.reset=latest): nothing yet.
	wantAcquired(t, m1.fetch(0))
	produceN(testkit.Context(t), t, n, "s", 10)
	wantAcquired(t, m1.fetch(5*time.Second), "0-9/1")
	wantAcquired(t, m2.fetch(0)) // all held by m1

	// m1 accepts half and releases half: m2, waiting, gets those.
	got := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { got <- m2.fetch(10 * time.Second) }()
	if code := ackCode(m1.acknowledge(m1.epoch, ackBatch{0, 4, 1}, ackBatch{5, 9, 2})); code != 0 {
		t.Fatalf("acknowledge: %v", kerr.ErrorForCode(code))
	}
	m1.epoch++
	wantAcquired(t, <-got, "5-9/2")

	// Bad acknowledgements: records another member holds, records
	// already accepted, overlapping batches; each refused whole.
	for _, c := range []struct {
		name string
		acks []ackBatch
		want *kerr.Error
	}{
		{"another member's records", []ackBatch{{5, 5, 1}}, kerr.InvalidRecordState},
		{"accepted records", []ackBatch{{0, 0, 1}}, kerr.InvalidRecordState},
		{"overlapping batches", []ackBatch{{5, 6, 1}, {6, 7, 1}}, kerr.InvalidRequest},
		{"an unknown type", []ackBatch{{5, 5, 7}}, kerr.InvalidRequest},
	} {
		if code := ackCode(m1.acknowledge(m1.epoch, c.acks...)); code != c.want.Code {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(code), c.want)
		}
		m1.epoch++
	}
	// Session epochs out of order.
	if code := ackCode(m1.acknowledge(m1.epoch - 1)); code != kerr.InvalidShareSessionEpoch.Code {
		t.Errorf("an epoch again: %v", kerr.ErrorForCode(code))
	}
	if code := ackCode(m1.acknowledge(0)); code != kerr.InvalidShareSessionEpoch.Code {
		t.Errorf("epoch 0: %v", kerr.ErrorForCode(code))
	}
	stranger := &shareClient{t: t, cl: cl, group: "g", member: "m3", topicID: m1.topicID, epoch: 1}
	if resp := stranger.fetch(0); resp.ErrorCode != kerr.ShareSessionNotFound.Code {
		t.Errorf("fetch without a session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	// m2's lock lapses (30 s by the node's clock): m1 gets the records,
	// third delivery, and m2 may no longer acknowledge them.
	n.AdvanceClock(30 * time.Second)
	wantAcquired(t, m1.fetch(0), "5-9/3")
	if code := ackCode(m2.acknowledge(m2.epoch, ackBatch{5, 9, 1})); code != kerr.InvalidRecordState.Code {
		t.Errorf("acknowledging after the lock lapsed: %v", kerr.ErrorForCode(code))
	}
	m2.epoch++

	// m1 closes its session (epoch -1): what it held goes back.
	if code := ackCode(m1.acknowledge(-1, ackBatch{5, 6, 1})); code != 0 {
		t.Fatalf("closing acknowledge: %v", kerr.ErrorForCode(code))
	}
	wantAcquired(t, m2.fetch(0), "7-9/4")
	if resp := m1.fetch(0); resp.ErrorCode != kerr.ShareSessionNotFound.Code {
		t.Errorf("fetch after the session closed: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// TestShareGroupDeliveryLimitAndLeave shows a record released as many
// times as group.share.delivery.count.limit archived, never delivered
// again, and a leaving member's records going to the others at once.
func TestShareGroupDeliveryLimitAndLeave(t *testing.T) {
	n, _, cs := startShare(t, "m1", "m2")
	m1, m2 := cs[0], cs[1]
	m1.heartbeat(0, "s")
	m2.heartbeat(0, "s")
	wantAcquired(t, m1.fetch(0))
	wantAcquired(t, m2.fetch(0))
	produceN(testkit.Context(t), t, n, "s", 2)
	for delivery := 1; delivery <= 5; delivery++ { // the default limit, 5
		wantAcquired(t, m1.fetch(5*time.Second), fmt.Sprintf("0-1/%d", delivery))
		if code := ackCode(m1.acknowledge(m1.epoch, ackBatch{0, 1, 2})); code != 0 {
			t.Fatalf("release: %v", kerr.ErrorForCode(code))
		}
		m1.epoch++
	}
	// Both were released a fifth time: archived. New records come next.
	produceN(testkit.Context(t), t, n, "s", 1)
	wantAcquired(t, m1.fetch(5*time.Second), "2-2/1")

	// m1 leaves holding offset 2: m2 gets it without waiting for the lock.
	if hb := m1.heartbeat(-1); hb.ErrorCode != 0 {
		t.Fatalf("leave: %v", kerr.ErrorForCode(hb.ErrorCode))
	}
	wantAcquired(t, m2.fetch(5*time.Second), "2-2/2")
	if resp := m1.fetch(0); resp.ErrorCode != kerr.ShareSessionNotFound.Code {
		t.Errorf("a member gone keeps its session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// TestShareGroupDescribeAndErrors checks ShareGroupDescribe and the
// refusals of the share APIs that need no records.
func TestShareGroupDescribeAndErrors(t *testing.T) {
	_, cl, cs := startShare(t, "m1")
	m1 := cs[0]
	m1.heartbeat(0, "s")
	d := m1.do(&kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{"g", "nope"}}).(*kmsg.ShareGroupDescribeResponse)
	g := d.Groups[0]
	if g.ErrorCode != 0 || g.GroupState != "Stable" || g.Assignor != "simple" || len(g.Members) != 1 ||
		len(g.Members[0].Assignment.TopicPartitions) != 1 || g.Members[0].Assignment.TopicPartitions[0].Topic != "s" {
		t.Fatalf("describe: %+v", g)
	}
	if d.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe of no group: %v", kerr.ErrorForCode(d.Groups[1].ErrorCode))
	}
	// Acknowledgements on the fetch that opens a session.
	if resp := m1.fetch(0, ackBatch{0, 0, 1}); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("acknowledging while opening the session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	// A topic id no topic has.
	unknown := &shareClient{t: t, cl: cl, group: "g", member: "m1", topicID: [16]byte{9}}
	resp := unknown.fetch(0)
	if p := resp.Topics[0].Partitions[0]; resp.ErrorCode != 0 || p.ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("unknown topic id: %v / %v", kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(p.ErrorCode))
	}
}

// TestShareGroupKgoConsumersShareOnePartition runs franz-go's share
// consumer, three members of one group on a topic of one partition: each
// gets records, no record is delivered twice, and once they close every
// record has been acknowledged (the share-partition's start reaches the
// log end).
func TestShareGroupKgoConsumersShareOnePartition(t *testing.T) {
	n, cl, _ := startShare(t)
	const consumers, records = 3, 300
	var mu sync.Mutex
	seen := map[string]int{}      // value -> deliveries
	per := make([]int, consumers) // real records per consumer
	ctx, cancel := context.WithCancel(testkit.Context(t))
	var wg sync.WaitGroup
	var clients []*kgo.Client
	for i := range consumers {
		c := n.Client(kgo.ShareGroup("g"), kgo.ConsumeTopics("s"), kgo.ShareMaxRecords(10), kgo.ShareMaxRecordsStrict(), kgo.FetchMaxWait(200*time.Millisecond))
		clients = append(clients, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
					mu.Lock()
					defer mu.Unlock()
					seen[string(r.Value)]++
					if strings.HasPrefix(string(r.Value), "r") {
						per[i]++
					}
				})
			}
		}()
	}
	count := func(prefix string) (n int) {
		mu.Lock()
		defer mu.Unlock()
		for v := range seen {
			if strings.HasPrefix(v, prefix) {
				n++
			}
		}
		return n
	}
	// The share-partition starts at the log end when a member first
	// fetches (share.auto.offset.reset=latest): write until one sees it.
	warm := 0
	testkit.WaitFor(t, "a share consumer fetching", func() (bool, string) {
		warm++
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "warm%d", warm)}).FirstErr(); err != nil {
			return false, err.Error()
		}
		return count("warm") > 0, "no record delivered yet"
	})
	var rs []*kgo.Record
	for i := range records {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "r%03d", i)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "every record delivered", func() (bool, string) {
		got := count("r")
		return got == records, fmt.Sprintf("%d of %d", got, records)
	})
	cancel()
	wg.Wait()
	for _, c := range clients {
		c.Close() // acknowledges what it polled last
	}
	mu.Lock()
	for v, times := range seen {
		if times != 1 {
			t.Errorf("%s delivered %d times", v, times)
		}
	}
	for i, got := range per {
		if got == 0 {
			t.Errorf("consumer %d got no record: %v", i, per)
		}
	}
	mu.Unlock()
	testkit.WaitFor(t, "every record acknowledged", func() (bool, string) {
		start, end, ok := n.Broker().SharePartitionForTest("g", "s", 0)
		hw := n.Broker().PartitionForTest("s", 0).HighWatermark()
		return ok && start == hw && end == hw, fmt.Sprintf("share-partition %d-%d (%v), log end %d", start, end, ok, hw)
	})
}
