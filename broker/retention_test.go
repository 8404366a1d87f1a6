package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
)

// Retention runs every log.retention.check.interval.ms, not at every tick
// of the node's maintenance: with an hour's interval, a segment.ms roll
// (each second) happens and still nothing expired is deleted.
func TestRetentionCheckIntervalHonoured(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("log.retention.check.interval.ms", "3600000"))
	cl := n.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	segment, roll, retention := "400", "1", "1"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"internal.segment.bytes": &segment, "segment.ms": &roll, "retention.ms": &retention}, "slow"); err != nil {
		t.Fatal(err)
	}
	producePadded(ctx, t, cl, "slow", 0, 20)
	p := n.Broker().PartitionForTest("slow", 0)
	testkit.WaitFor(t, "segment.ms to roll the active segment", func() (bool, string) {
		segs := p.Segments()
		last := segs[len(segs)-1]
		return last.Size == 0 && last.BaseOffset == 20, fmt.Sprintf("%d segments, last %+v", len(segs), last)
	})
	if start := p.LogStartOffset(); start != 0 {
		t.Fatalf("log start %d: retention ran before log.retention.check.interval.ms", start)
	}
}

// Over many segments, time and size retention delete exactly the leading
// segments they should on the leader, never the active one, and every
// replica's log start follows; a follower's segments below it go too.
func TestRetentionManySegmentsReplicated(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.StartCluster(t, 3, brokertest.Config("log.retention.check.interval.ms", "200"))
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	segment, off := "400", "-1"
	if _, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"internal.segment.bytes": &segment, "retention.ms": &off, "retention.bytes": &off}, "ret"); err != nil {
		t.Fatal(err)
	}
	mp := partitionOnAll(ctx, t, c, "ret")
	// 40 records two hours old, then 40 of now: about 3 to a segment.
	old := time.Now().Add(-2 * time.Hour)
	for i := range 80 {
		r := &kgo.Record{Topic: "ret", Value: fmt.Appendf(nil, "%03d-%060d", i, 0)}
		if i < 40 {
			r.Timestamp = old.Add(time.Duration(i) * time.Millisecond)
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	leader := c.Node(mp.Leader).Broker().PartitionForTest("ret", 0)
	replicas := func() []*partition.Partition {
		var ps []*partition.Partition
		for _, n := range c.Nodes() {
			ps = append(ps, n.Broker().PartitionForTest("ret", 0))
		}
		return ps
	}
	testkit.WaitFor(t, "every replica to hold all 80 records", func() (bool, string) {
		for i, p := range replicas() {
			if p.LogEndOffset() != 80 || p.HighWatermark() != 80 {
				return false, fmt.Sprintf("node %d: end %d hw %d", i, p.LogEndOffset(), p.HighWatermark())
			}
		}
		return true, ""
	})
	segs := leader.Segments()
	if len(segs) < 20 {
		t.Fatalf("%d segments, want many", len(segs))
	}

	// expect waits until every replica's log start is want, with nothing
	// below it left, and the leader's segments are segs[from:].
	expect := func(what string, want int64, from int) {
		t.Helper()
		testkit.WaitFor(t, what, func() (bool, string) {
			for i, p := range replicas() {
				if p.LogStartOffset() != want {
					return false, fmt.Sprintf("node %d: log start %d, want %d", i, p.LogStartOffset(), want)
				}
				if why := belowStartDeleted(p); why != "" {
					return false, fmt.Sprintf("node %d: %s", i, why)
				}
			}
			return true, ""
		})
		got := leader.Segments()
		if len(got) != len(segs)-from || got[0].BaseOffset != segs[from].BaseOffset || !got[len(got)-1].Active || got[len(got)-1].BaseOffset != segs[len(segs)-1].BaseOffset {
			t.Fatalf("%s: leader's segments at %v, want those from %d of %v", what, bases(got), from, bases(segs))
		}
		if end := leader.LogEndOffset(); end != 80 {
			t.Fatalf("%s: log end %d, want 80", what, end)
		}
	}
	alter := func(key, value string) {
		t.Helper()
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: &value}}, "ret")
		if err == nil {
			err = rs[0].Err
		}
		if err != nil {
			t.Fatalf("set %s=%s: %v", key, value, err)
		}
	}

	// retention.ms of an hour: the leading segments holding only old
	// records go, the first with a recent record stays.
	expired := 0
	for expired < len(segs)-1 && segs[expired].MaxTimestamp < time.Now().Add(-time.Hour).UnixMilli() {
		expired++
	}
	if expired == 0 {
		t.Fatalf("no segment of old records only: %+v", segs)
	}
	alter("retention.ms", "3600000")
	expect("retention.ms to delete the old segments", segs[expired].BaseOffset, expired)

	// retention.bytes of the last five segments' size: the rest go.
	keep := int64(0)
	for _, s := range segs[len(segs)-5:] {
		keep += s.Size
	}
	alter("retention.bytes", fmt.Sprint(keep))
	expect("retention.bytes to keep five segments", segs[len(segs)-5].BaseOffset, len(segs)-5)

	// retention.bytes of 0 deletes all but the active segment.
	alter("retention.bytes", "0")
	expect("retention.bytes=0 to keep only the active segment", segs[len(segs)-1].BaseOffset, len(segs)-1)
}

func bases(segs []log.SegmentInfo) []int64 {
	out := make([]int64, len(segs))
	for i, s := range segs {
		out[i] = s.BaseOffset
	}
	return out
}
