package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/internal/testkit"
)

// deleteRecords sends one DeleteRecords request of (topic, partition,
// offset) triples through r (a client, or one of its brokers) and returns
// the answers in request order of first appearance, as "topic/p=CODE@lw".
func deleteRecords(ctx context.Context, t *testing.T, r kmsg.Requestor, timeoutMs int32, parts ...any) []string {
	t.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = timeoutMs
	for i := 0; i < len(parts); i += 3 {
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = parts[i].(string)
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = int32(parts[i+1].(int)), int64(parts[i+2].(int))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			code := "NONE"
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				code = err.(*kerr.Error).Message
			}
			out = append(out, fmt.Sprintf("%s/%d=%s@%d", rt.Topic, rp.Partition, code, rp.LowWatermark))
		}
	}
	return out
}

// belowStartDeleted reports, as a reason, unless p's segments below its
// log start are gone: the first segment holds the log start and the next
// begins past it; and unless the first is not the one at offset 0.
func belowStartDeleted(p *partition.Partition) string {
	segs, start := p.Segments(), p.LogStartOffset()
	switch {
	case len(segs) == 0:
		return "no segment"
	case segs[0].BaseOffset == 0 || segs[0].BaseOffset > start || len(segs) > 1 && segs[1].BaseOffset <= start:
		bases := make([]string, len(segs))
		for i, s := range segs {
			bases[i] = fmt.Sprint(s.BaseOffset)
		}
		return fmt.Sprintf("log start %d, segments at %s", start, strings.Join(bases, ","))
	}
	return ""
}

// producePadded writes n records of 64 bytes to one partition, one at a
// time, "000-000…" on.
func producePadded(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, partition int32, n int) {
	t.Helper()
	for i := range n {
		r := &kgo.Record{Topic: topic, Partition: partition, Value: fmt.Appendf(nil, "%03d-%060d", i, 0)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// DeleteRecords on one node answers each partition as Kafka 4.4 does,
// raises the log start offset (deleting the segments below it), and from
// then on consumers below it get OFFSET_OUT_OF_RANGE and ListOffsets
// earliest gives it.
func TestDeleteRecords(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	segment, compact := "400", "compact"
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"internal.segment.bytes": &segment}, "dr"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, "dr-compact"); err != nil {
		t.Fatal(err)
	}
	producePadded(ctx, t, cl, "dr", 0, 50)
	producePadded(ctx, t, cl, "dr", 1, 7)
	testkit.WaitFor(t, "__consumer_offsets to exist", func() (bool, string) {
		adm.FindGroupCoordinators(ctx, "g") // creates it on first use
		ts, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets")
		return err == nil && ts.Has("__consumer_offsets"), fmt.Sprint(err)
	})

	// Straight to the node: the client would refuse the unknown topic.
	node := cl.SeedBrokers()[0]
	got := deleteRecords(ctx, t, node, 10000,
		"dr", 0, 5, "dr", 1, -1, "dr", 0, 20, // dr/0 twice: the last offset wins
		"dr", 2, 0, "nope", 0, 0, "dr-compact", 0, 0, "__consumer_offsets", 0, 0)
	want := []string{"dr/0=NONE@20", "dr/1=NONE@7", "dr/2=UNKNOWN_TOPIC_OR_PARTITION@-1", "nope/0=UNKNOWN_TOPIC_OR_PARTITION@-1",
		"dr-compact/0=POLICY_VIOLATION@-1", "__consumer_offsets/0=INVALID_TOPIC_EXCEPTION@-1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("DeleteRecords answered\n%v\nwant\n%v", got, want)
	}
	for _, c := range []struct {
		offset int
		want   string
	}{
		{51, "dr/0=OFFSET_OUT_OF_RANGE@-1"}, // above the high watermark (50)
		{-2, "dr/0=OFFSET_OUT_OF_RANGE@-1"},
		{10, "dr/0=NONE@20"}, // below the log start: nothing moves
		{50, "dr/0=NONE@50"}, // the high watermark itself
	} {
		if got := deleteRecords(ctx, t, node, 10000, "dr", 0, c.offset); len(got) != 1 || got[0] != c.want {
			t.Errorf("delete dr/0 below %d: %v, want %s", c.offset, got, c.want)
		}
		if c.offset == 10 {
			// Between the two deletions: what is below 20 is gone.
			checkBelowStart(ctx, t, n, cl, adm, 20)
		}
	}
	// The log start survives a restart (log-start-offset-checkpoint).
	n.Restart()
	if start := n.Broker().PartitionForTest("dr", 0).LogStartOffset(); start != 50 {
		t.Errorf("log start %d after a restart, want 50", start)
	}
}

// checkBelowStart checks dr/0 after its log start moved to start: its
// segments below start are deleted, ListOffsets earliest is start, a
// fetch below it is OFFSET_OUT_OF_RANGE and a consumer from the start
// begins there.
func checkBelowStart(ctx context.Context, t *testing.T, n *brokertest.Node, cl *kgo.Client, adm *kadm.Client, start int64) {
	t.Helper()
	if why := belowStartDeleted(n.Broker().PartitionForTest("dr", 0)); why != "" {
		t.Errorf("after DeleteRecords: %s", why)
	}
	offs, err := adm.ListStartOffsets(ctx, "dr")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("dr", 0); o.Offset != start {
		t.Errorf("ListOffsets earliest %d, want %d", o.Offset, start)
	}
	f := fetchRequest("dr", 1, 1<<20, 1<<20)
	f.Topics[0].Partitions[0].FetchOffset = start - 1
	fr, err := f.RequestWith(ctx, nameClient(n))
	if err != nil {
		t.Fatal(err)
	}
	if code := fr.Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetOutOfRange.Code {
		t.Errorf("fetch at %d below the log start: %v, want OFFSET_OUT_OF_RANGE", start-1, kerr.ErrorForCode(code))
	}
	consumer := n.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"dr": {0: kgo.NewOffset().AtStart()}}))
	fs := consumer.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	if rs := fs.Records(); len(rs) == 0 || rs[0].Offset != start || !strings.HasPrefix(string(rs[0].Value), fmt.Sprintf("%03d-", start)) {
		t.Errorf("consumer from the start got %d records, first %+v; want offset %d first", len(rs), rs, start)
	}
}

// On three nodes the leader's DeleteRecords answer waits for its
// followers: when it returns, every replica's log start has moved and
// their segments below it are gone. A follower down (not yet fenced)
// holds the low watermark back, and the request times out with
// REQUEST_TIMED_OUT and the low watermark it had; back up, it catches up.
// A follower refuses the request, NOT_LEADER_OR_FOLLOWER.
func TestDeleteRecordsCluster(t *testing.T) {
	ctx := testkit.Context(t)
	// A long session: a killed follower stays unfenced, as Kafka's does
	// until broker.session.timeout.ms, and so holds the low watermark.
	c := brokertest.StartCluster(t, 3, brokertest.Config("broker.session.timeout.ms", "600000"))
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(cl)
	segment := "400"
	if _, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"internal.segment.bytes": &segment}, "drc"); err != nil {
		t.Fatal(err)
	}
	p := partitionOnAll(ctx, t, c, "drc")
	producePadded(ctx, t, cl, "drc", 0, 60)
	var follower int32 = -1
	for _, id := range p.Replicas {
		if id != p.Leader {
			follower = id
		}
	}
	if got := deleteRecords(ctx, t, cl.Broker(int(follower)), 10000, "drc", 0, 10); len(got) != 1 || got[0] != "drc/0=NOT_LEADER_FOR_PARTITION@-1" {
		t.Errorf("DeleteRecords at follower %d: %v", follower, got)
	}
	if got := deleteRecords(ctx, t, cl, 30000, "drc", 0, 30); len(got) != 1 || got[0] != "drc/0=NONE@30" {
		t.Fatalf("DeleteRecords at the leader: %v, want drc/0=NONE@30", got)
	}
	// The answer came once every follower reported its log start at 30.
	for id, n := range c.Nodes() {
		rp := n.Broker().PartitionForTest("drc", 0)
		if start := rp.LogStartOffset(); start != 30 {
			t.Errorf("node %d: log start %d when DeleteRecords answered, want 30", id, start)
		}
		if why := belowStartDeleted(rp); why != "" {
			t.Errorf("node %d: %s", id, why)
		}
	}

	c.Node(follower).Kill()
	got := deleteRecords(ctx, t, cl, 1000, "drc", 0, 45)
	if len(got) != 1 || got[0] != "drc/0=REQUEST_TIMED_OUT@30" {
		t.Errorf("DeleteRecords with follower %d down: %v, want drc/0=REQUEST_TIMED_OUT@30", follower, got)
	}
	if start := c.Node(p.Leader).Broker().PartitionForTest("drc", 0).LogStartOffset(); start != 45 {
		t.Errorf("leader's log start %d after the timed out request, want 45", start)
	}
	c.Node(follower).Start()
	if got := deleteRecords(ctx, t, cl, 60000, "drc", 0, 45); len(got) != 1 || got[0] != "drc/0=NONE@45" {
		t.Errorf("DeleteRecords once follower %d is back: %v, want drc/0=NONE@45", follower, got)
	}
	if why := belowStartDeleted(c.Node(follower).Broker().PartitionForTest("drc", 0)); why != "" {
		t.Errorf("follower %d back: %s", follower, why)
	}
}
