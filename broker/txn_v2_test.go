package broker_test

import (
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

// Transaction version 2 (KIP-890 part 2), as Kafka 4.4 answers it.

// txnProduce is a produce of batch to partition 0 of topic (acks all),
// transactional when txnID is set, at version 12 unless set otherwise.
func txnProduce(topic string, txnID *string, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(12)
	req.TransactionID, req.Acks, req.TimeoutMillis = txnID, -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// rawDo sends req on r and fails the test on a connection error.
func rawDo[T kmsg.Response](t *testing.T, r *rawConn, req kmsg.Request) T {
	t.Helper()
	resp, err := r.do(req)
	if err != nil {
		t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp.(T)
}

func endTxnV(version int16, id string, pid int64, epoch int16, commit bool) *kmsg.EndTxnRequest {
	req := kmsg.NewPtrEndTxnRequest()
	req.SetVersion(version)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	return req
}

// describeTxnState is the state and epoch DescribeTransactions gives id.
func describeTxnState(t *testing.T, r *rawConn, id string) (string, int16) {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	resp := rawDo[*kmsg.DescribeTransactionsResponse](t, r, req)
	if len(resp.TransactionStates) != 1 || resp.TransactionStates[0].ErrorCode != 0 {
		t.Fatalf("describe %s: %+v", id, resp.TransactionStates)
	}
	return resp.TransactionStates[0].State, resp.TransactionStates[0].ProducerEpoch
}

func waitTxnState(t *testing.T, r *rawConn, id, want string) {
	t.Helper()
	testkit.WaitFor(t, id+" "+want, func() (bool, string) {
		got, _ := describeTxnState(t, r, id)
		return got == want, got
	})
}

// TestTransactionVersion2ProduceAndEndTxn: a produce v12 adds its
// partition to the transaction (v11 is refused TRANSACTION_ABORTABLE, v10
// INVALID_TXN_STATE); EndTxn v5 bumps the epoch at every end and answers
// it, the markers carry it (the partition's producer is at the new epoch
// with no sequence), a retry at the old epoch is answered as the end was,
// and a produce at the old epoch is fenced. Then the next transaction at
// the new epoch, again without AddPartitionsToTxn.
func TestTransactionVersion2ProduceAndEndTxn(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "tv2"); err != nil {
		t.Fatal(err)
	}
	id := "tv2-txn"
	pid, epoch := initTransactional(ctx, t, cl, id)
	r := dialRaw(t, n.Addr())
	produceAt := func(version, epoch int16, seq int32) *kmsg.ProduceResponseTopicPartition {
		t.Helper()
		req := txnProduce("tv2", &id, logtest.ProducerBatch(time.Now().UnixMilli(), pid, epoch, seq, 1, true))
		req.SetVersion(version)
		return &rawDo[*kmsg.ProduceResponse](t, r, req).Topics[0].Partitions[0]
	}
	for version, want := range map[int16]*kerr.Error{10: kerr.InvalidTxnState, 11: kerr.TransactionAbortable} {
		if sp := produceAt(version, epoch, 0); sp.ErrorCode != want.Code {
			t.Fatalf("produce v%d outside the transaction: %v, want %v", version, kerr.ErrorForCode(sp.ErrorCode), want)
		}
	}
	if sp := produceAt(12, epoch, 0); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("produce v12 without AddPartitionsToTxn: %v at %d, want offset 0", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
	if st, _ := describeTxnState(t, r, id); st != "Ongoing" {
		t.Fatalf("after the produce: %s, want Ongoing", st)
	}

	end := rawDo[*kmsg.EndTxnResponse](t, r, endTxnV(5, id, pid, epoch, true))
	if end.ErrorCode != 0 || end.ProducerID != pid || end.ProducerEpoch != epoch+1 {
		t.Fatalf("EndTxn v5: %v pid %d epoch %d, want pid %d epoch %d", kerr.ErrorForCode(end.ErrorCode), end.ProducerID, end.ProducerEpoch, pid, epoch+1)
	}
	waitTxnState(t, r, id, "CompleteCommit")
	if _, e := describeTxnState(t, r, id); e != epoch+1 {
		t.Fatalf("described epoch %d, want %d", e, epoch+1)
	}
	dp := kmsg.NewPtrDescribeProducersRequest()
	dp.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "tv2", Partitions: []int32{0}}}
	producers := rawDo[*kmsg.DescribeProducersResponse](t, r, dp).Topics[0].Partitions[0].ActiveProducers
	if len(producers) != 1 || producers[0].ProducerEpoch != int32(epoch)+1 || producers[0].LastSequence != -1 || producers[0].CurrentTxnStartOffset != -1 {
		t.Fatalf("producers after the commit %+v; want epoch %d, last sequence -1, no transaction", producers, epoch+1)
	}

	retry := rawDo[*kmsg.EndTxnResponse](t, r, endTxnV(5, id, pid, epoch, true))
	if retry.ErrorCode != 0 || retry.ProducerEpoch != epoch+1 {
		t.Fatalf("EndTxn v5 retry: %v epoch %d, want the new epoch %d", kerr.ErrorForCode(retry.ErrorCode), retry.ProducerEpoch, epoch+1)
	}
	if sp := produceAt(12, epoch, 1); sp.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("produce at the old epoch: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(sp.ErrorCode))
	}
	if sp := produceAt(12, epoch+1, 0); sp.ErrorCode != 0 || sp.BaseOffset != 2 {
		t.Fatalf("next transaction's produce: %v at %d, want offset 2", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
	abort := rawDo[*kmsg.EndTxnResponse](t, r, endTxnV(5, id, pid, epoch+1, false))
	if abort.ErrorCode != 0 || abort.ProducerEpoch != epoch+2 {
		t.Fatalf("abort: %v epoch %d, want epoch %d", kerr.ErrorForCode(abort.ErrorCode), abort.ProducerEpoch, epoch+2)
	}
	waitTxnState(t, r, id, "CompleteAbort")
}

// TestTxnOffsetCommitV5AddsTheGroup: a TxnOffsetCommit v5 needs no
// AddOffsetsToTxn; the offsets commit with the transaction. v6 names the
// topic by id.
func TestTxnOffsetCommitV5AddsTheGroup(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	created, err := adm.CreateTopic(ctx, 1, 1, nil, "tv2-offsets")
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, n.Addr())
	for _, version := range []int16{5, 6} {
		id, group := "tv2-toc", "tv2-group"
		if version == 6 {
			id, group = "tv2-toc6", "tv2-group6"
		}
		pid, epoch := initTransactional(ctx, t, cl, id)
		// The group's coordinator is found (and __consumer_offsets
		// made) as a client finds it first.
		if _, err := adm.FetchOffsets(ctx, group); err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.SetVersion(version)
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = id, group, pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = "tv2-offsets", created.ID
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset = 7
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := rawDo[*kmsg.TxnOffsetCommitResponse](t, r, req)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("TxnOffsetCommit v%d without AddOffsetsToTxn: %v", version, kerr.ErrorForCode(code))
		}
		if version >= 6 && resp.Topics[0].TopicID != created.ID {
			t.Fatalf("v6 answered topic id %x, want %x", resp.Topics[0].TopicID, created.ID)
		}
		end := rawDo[*kmsg.EndTxnResponse](t, r, endTxnV(5, id, pid, epoch, true))
		if end.ErrorCode != 0 || end.ProducerEpoch != epoch+1 {
			t.Fatalf("EndTxn v5: %v epoch %d", kerr.ErrorForCode(end.ErrorCode), end.ProducerEpoch)
		}
		waitTxnState(t, r, id, "CompleteCommit")
		testkit.WaitFor(t, group+" offset committed", func() (bool, string) {
			offs, err := adm.FetchOffsets(ctx, group)
			if err != nil {
				return false, err.Error()
			}
			o, ok := offs.Lookup("tv2-offsets", 0)
			return ok && o.At == 7, ""
		})
	}
}

// TestKgoClientUsesTransactionVersion2: franz-go opts into KIP-890 part 2
// when the cluster finalizes transaction.version 2: two committed
// transactions bump its epoch twice, with no AddPartitionsToTxn.
func TestKgoClientUsesTransactionVersion2(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "kgo-tv2"); err != nil {
		t.Fatal(err)
	}
	cl := transactionalClient(t, n, "kgo-tv2-txn", kgo.DefaultProduceTopic("kgo-tv2"))
	for i := range 2 {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
	}
	r := dialRaw(t, n.Addr())
	waitTxnState(t, r, "kgo-tv2-txn", "CompleteCommit")
	if _, epoch := describeTxnState(t, r, "kgo-tv2-txn"); epoch != 2 {
		t.Fatalf("epoch %d after two commits, want 2 (bumped at each end)", epoch)
	}
	if got := consumeAll(ctx, t, n, "kgo-tv2", kgo.ReadCommitted()); len(got) != 2 {
		t.Fatalf("read committed %v, want 2 records", got)
	}
}
