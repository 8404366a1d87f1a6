package broker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
)

// idempotentBatch builds a batch of n records of producer pid/epoch
// starting at sequence seq.
func idempotentBatch(pid int64, epoch int16, seq int32, n int) []byte {
	return logtest.ProducerBatch(time.Now().UnixMilli(), pid, epoch, seq, n, false)
}

func initProducer(ctx context.Context, t *testing.T, cl *kgo.Client) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = 60000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// TestIdempotentDedupeWindow drives the producer-state checks over the
// wire: a replayed batch is answered with its original offsets and not
// appended again, a skipped sequence and a stale epoch are refused.
func TestIdempotentDedupeWindow(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "idem"); err != nil {
		t.Fatal(err)
	}
	pid, epoch := initProducer(ctx, t, cl)

	firstBatch := idempotentBatch(pid, epoch, 0, 3)
	firstTs := logtest.MaxTimestamp(firstBatch)
	first := produceRaw(ctx, t, cl, "idem", 0, firstBatch)
	second := produceRaw(ctx, t, cl, "idem", 0, idempotentBatch(pid, epoch, 3, 2))
	if first.ErrorCode != 0 || second.ErrorCode != 0 || first.BaseOffset != 0 || second.BaseOffset != 3 {
		t.Fatalf("appends: %+v %+v", first, second)
	}
	// As Kafka's UnifiedLog: the original's timestamp as the append
	// time, even on a CreateTime topic.
	replay := produceRaw(ctx, t, cl, "idem", 0, idempotentBatch(pid, epoch, 0, 3))
	if replay.ErrorCode != 0 || replay.BaseOffset != 0 || replay.LogAppendTime != firstTs {
		t.Fatalf("replayed batch: error %v base %d append time %d, want the original offset 0 and timestamp %d",
			kerr.ErrorForCode(replay.ErrorCode), replay.BaseOffset, replay.LogAppendTime, firstTs)
	}
	// As Kafka's ReplicaManager: no message, the log start offset.
	gap := produceRaw(ctx, t, cl, "idem", 0, idempotentBatch(pid, epoch, 9, 1))
	if gap.ErrorCode != kerr.OutOfOrderSequenceNumber.Code || gap.ErrorMessage != nil || gap.LogStartOffset != 0 {
		t.Fatalf("sequence gap: %v, message %v, log start offset %d; want no message and 0", kerr.ErrorForCode(gap.ErrorCode), gap.ErrorMessage, gap.LogStartOffset)
	}
	bumped := produceRaw(ctx, t, cl, "idem", 0, idempotentBatch(pid, epoch+1, 0, 1))
	if bumped.ErrorCode != 0 {
		t.Fatalf("new epoch from sequence 0: %v", kerr.ErrorForCode(bumped.ErrorCode))
	}
	stale := produceRaw(ctx, t, cl, "idem", 0, idempotentBatch(pid, epoch, 5, 1))
	if stale.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch: %v", kerr.ErrorForCode(stale.ErrorCode))
	}
	offs, err := kadm.NewClient(cl).ListEndOffsets(ctx, "idem")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("idem", 0); o.Offset != 6 {
		t.Fatalf("end offset %d, want 6: the replay must not have been appended", o.Offset)
	}
}

func transactionalClient(t *testing.T, n *brokertest.Node, id string, opts ...kgo.Opt) *kgo.Client {
	return n.Client(append([]kgo.Opt{kgo.TransactionalID(id), kgo.TransactionTimeout(20 * time.Second)}, opts...)...)
}

// consumeAll returns the values of a one-partition topic at an isolation
// level. It appends a plain "end" record and reads until it: everything
// before it in the partition has been delivered by then, so the result is
// exact without waiting for silence.
func consumeAll(ctx context.Context, t *testing.T, n *brokertest.Node, topic string, iso kgo.IsolationLevel) []string {
	t.Helper()
	if err := n.Client().ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("end")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl := n.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	var out []string
	ends := 0
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if done {
				return
			}
			if string(r.Value) == "end" {
				ends++
				// Earlier calls left their own "end" records.
				if r.Offset == lastOffset(ctx, t, n, topic) {
					done = true
				}
				return
			}
			out = append(out, string(r.Value))
		})
		if done {
			return out
		}
	}
}

// lastOffset is the offset of the last record of partition 0.
func lastOffset(ctx context.Context, t *testing.T, n *brokertest.Node, topic string) int64 {
	return listOffset(ctx, t, n, topic, 0) - 1
}

// TestTransactionsCommitAbortReadCommitted: read_committed consumers see
// only committed transactions; read_uncommitted consumers see everything;
// the LSO holds back at an open transaction.
func TestTransactionsCommitAbortReadCommitted(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "tx"); err != nil {
		t.Fatal(err)
	}
	p := transactionalClient(t, n, "tx-producer", kgo.DefaultProduceTopic("tx"))
	run := func(prefix string, count int, commit bool) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range count {
			if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	run("committed", 5, true)
	run("aborted", 4, false)
	run("later", 3, true)

	got := consumeAll(ctx, t, n, "tx", kgo.ReadCommitted())
	want := "committed-0 committed-1 committed-2 committed-3 committed-4 later-0 later-1 later-2"
	if strings.Join(got, " ") != want {
		t.Fatalf("read_committed saw %v", got)
	}
	all := consumeAll(ctx, t, n, "tx", kgo.ReadUncommitted())
	if len(all) != 12 { // the earlier "end" record is skipped too
		t.Fatalf("read_uncommitted saw %d records, want 12 (markers are not records): %v", len(all), all)
	}

	// An open transaction holds the LSO back; the HW moves on.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	lso := listOffset(ctx, t, n, "tx", 1)
	hw := listOffset(ctx, t, n, "tx", 0)
	if lso >= hw {
		t.Fatalf("LSO %d should stay below HW %d while a transaction is open", lso, hw)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// EndTxn answers once the decision is logged; the markers that release
	// the LSO follow, as in Kafka.
	testkit.WaitFor(t, "the markers to release tx's LSO", func() (bool, string) {
		return listOffset(ctx, t, n, "tx", 1) == listOffset(ctx, t, n, "tx", 0), ""
	})
}

// listOffset is the latest offset at an isolation level (0 uncommitted: HW,
// 1 committed: LSO).
func listOffset(ctx context.Context, t *testing.T, n *brokertest.Node, topic string, isolation int8) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, n.Client())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0].Offset
}

// TestTransactionsZombieFencing: a second producer with the same
// transactional id fences the first.
func TestTransactionsZombieFencing(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "fence"); err != nil {
		t.Fatal(err)
	}
	zombie := transactionalClient(t, n, "fenced-id", kgo.DefaultProduceTopic("fence"))
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, &kgo.Record{Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := transactionalClient(t, n, "fenced-id", kgo.DefaultProduceTopic("fence"))
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.ProduceSync(ctx, &kgo.Record{Value: []byte("fresh")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	err := zombie.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		t.Fatal("the fenced producer committed")
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("fenced producer's commit: %v", err)
	}
	if got := consumeAll(ctx, t, n, "fence", kgo.ReadCommitted()); strings.Join(got, " ") != "fresh" {
		t.Fatalf("read_committed saw %v, want only the fresh producer's record", got)
	}
}

// TestTransactionTimeoutAborts: the coordinator aborts a transaction left
// open past its timeout, and the LSO moves on.
func TestTransactionTimeoutAborts(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("transaction.abort.timed.out.transaction.cleanup.interval.ms", "100"))
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "slow"); err != nil {
		t.Fatal(err)
	}
	p := n.Client(kgo.TransactionalID("slowpoke"), kgo.TransactionTimeout(time.Second), kgo.DefaultProduceTopic("slow"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("abandoned")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the timed-out transaction to release slow's LSO", func() (bool, string) {
		return listOffset(ctx, t, n, "slow", 1) == listOffset(ctx, t, n, "slow", 0), ""
	})
	if got := consumeAll(ctx, t, n, "slow", kgo.ReadCommitted()); len(got) != 0 {
		t.Fatalf("read_committed saw %v from a timed-out transaction", got)
	}
	txns, err := kadm.NewClient(n.Client()).DescribeTransactions(ctx, "slowpoke")
	if err != nil {
		t.Fatal(err)
	}
	if s := txns["slowpoke"].State; s != "CompleteAbort" {
		t.Fatalf("transaction state %q, want CompleteAbort", s)
	}
}
