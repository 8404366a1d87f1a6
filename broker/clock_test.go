package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// Each test here sets a deadline far beyond testkit.WaitTimeout, so only
// the node's clock moving (AdvanceClock) can bring it: without it the
// tests fail.

// createTopicConfigs creates a one-partition topic with configs (key,
// value pairs).
func createTopicConfigs(ctx context.Context, t *testing.T, n *brokertest.Node, topic string, kv ...string) {
	t.Helper()
	configs := map[string]*string{}
	for i := 0; i+1 < len(kv); i += 2 {
		configs[kv[i]] = &kv[i+1]
	}
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, configs, topic); err != nil {
		t.Fatal(err)
	}
}

// TestClockRetention: with retention.ms an hour, advancing the clock two
// hours deletes every segment but the active one at once and moves the
// log start offset to it.
func TestClockRetention(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	createTopicConfigs(ctx, t, n, "aging", "retention.ms", "3600000", "internal.segment.bytes", "400")
	cl := n.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	producePadded(ctx, t, cl, "aging", 0, 20)
	p := n.Broker().PartitionForTest("aging", 0)
	segs := p.Segments()
	active := segs[len(segs)-1].BaseOffset
	if len(segs) < 3 || active == 0 {
		t.Fatalf("want several segments, have %+v", segs)
	}
	n.AdvanceClock(30 * time.Minute)
	if start := p.LogStartOffset(); start != 0 {
		t.Fatalf("log start %d after 30 minutes of an hour's retention", start)
	}
	n.AdvanceClock(90 * time.Minute)
	if start, segs := p.LogStartOffset(), p.Segments(); start != active || len(segs) != 1 {
		t.Fatalf("after two hours: log start %d and %d segments, want %d and the active one", start, len(segs), active)
	}
	if got := listOffset(ctx, t, n, "aging", 0); got != 20 {
		t.Fatalf("log end %d, want 20", got)
	}
}

// keyedRecords reads partition 0 of a compacted topic from its start to
// its high watermark, as offset:key=value (key=<nil> for a tombstone).
func keyedRecords(ctx context.Context, t *testing.T, n *brokertest.Node, topic string) []string {
	t.Helper()
	end := listOffset(ctx, t, n, topic, 0)
	cl := n.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var out []string
	for last := int64(-1); last < end-1; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if r.Value == nil {
				v = "<nil>"
			}
			out = append(out, fmt.Sprintf("%d:%s=%s", r.Offset, r.Key, v))
			last = r.Offset
		})
	}
	return out
}

// TestClockCompactionDeleteRetention: the cleaner keeps a tombstone until
// delete.retention.ms after the pass that first found it, then a pass
// removes it. segment.ms rolls and the cleaner passes come with each
// advance of the clock.
func TestClockCompactionDeleteRetention(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	createTopicConfigs(ctx, t, n, "keyed", "cleanup.policy", "compact", "segment.ms", "3600000",
		"delete.retention.ms", "10800000", "min.cleanable.dirty.ratio", "0.01")
	cl := n.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(key, value string) {
		r := &kgo.Record{Topic: "keyed", Key: []byte(key)}
		if value != "" {
			r.Value = []byte(value)
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(when string, want ...string) {
		t.Helper()
		if got := keyedRecords(ctx, t, n, "keyed"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: records %v, want %v", when, got, want)
		}
	}
	produce("k", "v1")
	produce("k", "") // the tombstone, offset 1
	// An hour on: the segment rolls and is cleaned; the tombstone stays,
	// to go three hours after this pass.
	n.AdvanceClock(61 * time.Minute)
	expect("first pass", "1:k=<nil>")
	produce("a", "1")
	n.AdvanceClock(61 * time.Minute)
	expect("second pass, within delete.retention.ms", "1:k=<nil>", "2:a=1")
	produce("b", "1")
	n.AdvanceClock(2 * time.Hour)
	expect("past delete.retention.ms", "2:a=1", "3:b=1")
}

// TestClockTransactionTimeout: a transaction with a 60 s timeout left open
// is aborted once the clock is two minutes on: read_committed sees none
// of it and its producer is fenced.
func TestClockTransactionTimeout(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	createTopicConfigs(ctx, t, n, "open")
	p := n.Client(kgo.TransactionalID("idle"), kgo.TransactionTimeout(time.Minute), kgo.DefaultProduceTopic("open"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("abandoned")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if lso, hw := listOffset(ctx, t, n, "open", 1), listOffset(ctx, t, n, "open", 0); lso != 0 || hw != 1 {
		t.Fatalf("open transaction: LSO %d HW %d, want 0 and 1", lso, hw)
	}
	n.AdvanceClock(2 * time.Minute)
	adm := kadm.NewClient(n.Client())
	testkit.WaitFor(t, "the timed-out transaction's abort marker", func() (bool, string) {
		hws, err := adm.ListEndOffsets(ctx, "open")
		if err != nil {
			t.Fatal(err)
		}
		lsos, err := adm.ListCommittedOffsets(ctx, "open")
		if err != nil {
			t.Fatal(err)
		}
		hw, _ := hws.Lookup("open", 0)
		lso, _ := lsos.Lookup("open", 0)
		return lso.Offset == hw.Offset && hw.Offset == 2, fmt.Sprintf("LSO %d HW %d", lso.Offset, hw.Offset)
	})
	if got := consumeAll(ctx, t, n, "open", kgo.ReadCommitted()); len(got) != 0 {
		t.Fatalf("read_committed saw %v of the timed-out transaction", got)
	}
	txns, err := adm.DescribeTransactions(ctx, "idle")
	if err != nil {
		t.Fatal(err)
	}
	if s := txns["idle"].State; s != "CompleteAbort" {
		t.Fatalf("transaction state %q, want CompleteAbort", s)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the producer committed a transaction its coordinator aborted")
	}
}

// TestClockSessionTimeout: a classic group member that stops
// heartbeating is removed once the clock passes its 60 s session.
func TestClockSessionTimeout(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(n.Client())
	createTopicConfigs(ctx, t, n, "sessions")
	own := &ownership{t: t, owners: map[int32]string{}}
	// A static member does not leave on close: only its session timeout
	// removes it.
	a := startMember(t, n, own, "a", "sleepers", "sessions", kgo.InstanceID("a"), kgo.SessionTimeout(time.Minute))
	members := func() (int, string) {
		groups, err := adm.DescribeGroups(ctx, "sleepers")
		if err != nil {
			t.Fatal(err)
		}
		return len(groups["sleepers"].Members), groups["sleepers"].State
	}
	testkit.WaitFor(t, "a in sleepers", func() (bool, string) {
		a.poll(ctx, t)
		m, state := members()
		return m == 1 && state == "Stable", fmt.Sprintf("%d members, %s", m, state)
	})
	a.cl.Close()
	n.AdvanceClock(30 * time.Second)
	if m, state := members(); m != 1 {
		t.Fatalf("30 s into a 60 s session: %d members, %s", m, state)
	}
	n.AdvanceClock(time.Minute)
	testkit.WaitFor(t, "sleepers Empty", func() (bool, string) {
		m, state := members()
		return m == 0 && state == "Empty", fmt.Sprintf("%d members, %s", m, state)
	})
}

// TestClockOffsetExpiry: the committed offsets of an empty group go once
// the clock is past offsets.retention.minutes.
func TestClockOffsetExpiry(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("offsets.retention.minutes", "60"))
	adm := kadm.NewClient(n.Client())
	createTopicConfigs(ctx, t, n, "tracked")
	produceN(ctx, t, n, "tracked", 3)
	var commit kadm.Offsets
	commit.AddOffset("tracked", 0, 2, -1)
	if err := adm.CommitAllOffsets(ctx, "idle", commit); err != nil {
		t.Fatal(err)
	}
	committed := func() int {
		res, err := adm.FetchOffsets(ctx, "idle")
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Offsets())
	}
	n.AdvanceClock(30 * time.Minute)
	if got := committed(); got != 1 {
		t.Fatalf("30 minutes into an hour's retention: %d committed offsets, want 1", got)
	}
	n.AdvanceClock(time.Hour)
	if got := committed(); got != 0 {
		t.Fatalf("past offsets.retention.minutes: %d committed offsets, want none", got)
	}
}

// TestClockOffsetSurvivesRestart: a node's own clock, advanced, is as far
// ahead after a restart, in memory and on disk; without that its time
// would run back behind the records and deadlines judged at the advanced
// time.
func TestClockOffsetSurvivesRestart(t *testing.T) {
	for _, storage := range []struct {
		name string
		opt  func(*testing.T) brokertest.Option
	}{
		{"memory", func(*testing.T) brokertest.Option { return brokertest.Memory() }},
		{"disk", func(t *testing.T) brokertest.Option { return brokertest.DataDir(t.TempDir()) }},
	} {
		t.Run(storage.name, func(t *testing.T) {
			n := brokertest.Start(t, storage.opt(t))
			n.AdvanceClock(2 * time.Hour)
			n.AdvanceClock(30 * time.Minute)
			n.Restart()
			if got := n.Broker().Clock().Offset; got != 150*time.Minute {
				t.Fatalf("offset after the restart: %v, want 2h30m", got)
			}
			if ahead := time.Until(n.Broker().Clock().Now); ahead < 149*time.Minute {
				t.Fatalf("the clock is %v ahead after the restart", ahead)
			}
		})
	}
}
