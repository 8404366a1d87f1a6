package broker_test

import (
	"context"
	"math"
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

// TestProduceRefusesTransactionalBatchWithoutTransactionalID: a batch with
// the transactional bit, from a producer id no coordinator gave out, sent
// without a transactional id, is refused as Kafka refuses it
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and appends nothing, so it cannot
// pin the last stable offset.
func TestProduceRefusesTransactionalBatchWithoutTransactionalID(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "notxnid"); err != nil {
		t.Fatal(err)
	}
	batch := logtest.ProducerBatch(time.Now().UnixMilli(), 4242, 0, 0, 1, true)
	if sp := produceRaw(ctx, t, cl, "notxnid", 0, batch); sp.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code || sp.BaseOffset != -1 {
		t.Fatalf("transactional batch without a transactional id: %v, base offset %d; want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
	if hw := listOffset(ctx, t, n, "notxnid", 0); hw != 0 {
		t.Fatalf("high watermark %d after the refused batch, want 0: nothing appended", hw)
	}
	// A plain record after it: the LSO follows the high watermark.
	if sp := produceRaw(ctx, t, cl, "notxnid", 0, rawBatch("plain")); sp.ErrorCode != 0 {
		t.Fatalf("plain produce: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	hw, lso := listOffset(ctx, t, n, "notxnid", 0), listOffset(ctx, t, n, "notxnid", 1)
	if hw != 1 || lso != hw {
		t.Fatalf("high watermark %d, last stable offset %d; want both 1", hw, lso)
	}
}

// initTransactional runs InitProducerID for a transactional id and returns
// its producer id and epoch.
func initTransactional(ctx context.Context, t *testing.T, cl *kgo.Client, id string) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr(id)
	req.TransactionTimeoutMillis = 60000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerID of %q: %v %v", id, err, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// TestTxnOffsetCommitRefusesProducerWithoutTheGroupInItsTransaction: a
// TxnOffsetCommit before v5 is verified with the transaction coordinator
// first, as in Kafka. An invented producer (INVALID_PRODUCER_ID_MAPPING)
// and a real one whose transaction never added the group's offsets
// (INVALID_TXN_STATE; TRANSACTION_ABORTABLE from v4, as Kafka 4.4
// answers) are refused and leave nothing pending: OffsetFetch with
// RequireStable answers without UNSTABLE_OFFSET_COMMIT, before and after a
// restart. A topic that does not exist is answered
// UNKNOWN_TOPIC_OR_PARTITION before the verification, as Kafka's
// KafkaApis answers it.
func TestTxnOffsetCommitRefusesProducerWithoutTheGroupInItsTransaction(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.DataDir(t.TempDir()))
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "txnoffsets"); err != nil {
		t.Fatal(err)
	}
	pid, epoch := initTransactional(ctx, t, cl, "no-offsets-added")
	if _, err := kadm.NewClient(cl).FetchOffsets(ctx, "wedged"); err != nil { // find the coordinator
		t.Fatal(err)
	}
	r := dialRaw(t, n.Addr())
	unknownTopic := kerr.UnknownTopicOrPartition
	for _, tc := range []struct {
		name    string
		version int16
		txnID   string
		pid     int64
		epoch   int16
		topics  []string
		want    []*kerr.Error
	}{
		{"invented producer", 3, "invented", 4242, 0, []string{"txnoffsets"}, []*kerr.Error{kerr.InvalidProducerIDMapping}},
		{"no AddOffsetsToTxn", 3, "no-offsets-added", pid, epoch, []string{"txnoffsets"}, []*kerr.Error{kerr.InvalidTxnState}},
		{"no AddOffsetsToTxn, v4", 4, "no-offsets-added", pid, epoch, []string{"txnoffsets"}, []*kerr.Error{kerr.TransactionAbortable}},
		{"invented producer, unknown topic", 3, "invented", 4242, 0, []string{"missing"}, []*kerr.Error{unknownTopic}},
		{"invented producer, topics known and not", 3, "invented", 4242, 0, []string{"missing", "txnoffsets", "gone"}, []*kerr.Error{unknownTopic, kerr.InvalidProducerIDMapping, unknownTopic}},
	} {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.SetVersion(tc.version)
		req.TransactionalID, req.Group = tc.txnID, "wedged"
		req.ProducerID, req.ProducerEpoch = tc.pid, tc.epoch
		req.Generation = -1
		for _, topic := range tc.topics {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Offset = 5
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		resp := rawDo[*kmsg.TxnOffsetCommitResponse](t, r, req)
		if len(resp.Topics) != len(tc.topics) {
			t.Fatalf("%s: response %+v", tc.name, resp.Topics)
		}
		got := make(map[string][]kmsg.TxnOffsetCommitResponseTopicPartition)
		for _, st := range resp.Topics {
			got[st.Topic] = st.Partitions
		}
		for i, topic := range tc.topics {
			if ps := got[topic]; len(ps) != 1 || ps[0].ErrorCode != tc.want[i].Code {
				t.Errorf("%s: TxnOffsetCommit answered %s %+v, want %v", tc.name, topic, ps, tc.want[i])
			}
		}
	}

	fetchStable := func() {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group, req.RequireStable = "wedged", true
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "txnoffsets", []int32{0}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, n.Client())
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("OffsetFetch: %v, %+v", kerr.ErrorForCode(resp.ErrorCode), resp.Topics)
		}
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != -1 {
			t.Fatalf("OffsetFetch RequireStable: %v, offset %d; want no error and no offset", kerr.ErrorForCode(p.ErrorCode), p.Offset)
		}
	}
	fetchStable()
	n.Restart()
	fetchStable()
}

// TestFencedProducerErrorCodesByVersion: a producer whose epoch newer
// InitProducerIDs of its transactional id bumped is answered what Kafka
// 4.4 answers, request by request and version by version (protodiff's
// txn-fenced-* cases). A produce is INVALID_PRODUCER_EPOCH at every
// version, as Kafka's AddPartitionsToTxnManager maps PRODUCER_FENCED:
// librdkafka, producing at v10, takes only that as fatal and would go on
// after PRODUCER_FENCED. TxnOffsetCommit is INVALID_PRODUCER_EPOCH too;
// the coordinator's own requests are PRODUCER_FENCED from the version
// that knows it, INVALID_PRODUCER_EPOCH before.
func TestFencedProducerErrorCodesByVersion(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "fenced"); err != nil {
		t.Fatal(err)
	}
	const id = "fenced-id"
	pid, epoch := initTransactional(ctx, t, cl, id)
	for range 2 { // two bumps: the epoch is neither current nor a retry's
		initTransactional(ctx, t, cl, id)
	}
	r := dialRaw(t, n.Addr())
	for _, tc := range []struct {
		name     string
		versions []int16
		since    int16 // the first version answered PRODUCER_FENCED
		req      func() kmsg.Request
		code     func(kmsg.Response) int16
	}{
		{"Produce", []int16{3, 9, 10, 11, 12}, math.MaxInt16, func() kmsg.Request {
			return txnProduce("fenced", kmsg.StringPtr(id), logtest.ProducerBatch(time.Now().UnixMilli(), pid, epoch, 0, 1, true))
		}, func(r kmsg.Response) int16 { return r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode }},
		{"AddPartitionsToTxn", []int16{1, 2, 3}, 2, func() kmsg.Request {
			req := kmsg.NewPtrAddPartitionsToTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "fenced", []int32{0}
			req.Topics = append(req.Topics, rt)
			return req
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
		}},
		{"AddOffsetsToTxn", []int16{1, 2, 3, 4}, 2, func() kmsg.Request {
			req := kmsg.NewPtrAddOffsetsToTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = id, pid, epoch, "fenced-group"
			return req
		}, func(r kmsg.Response) int16 { return r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode }},
		{"EndTxn", []int16{1, 2, 3, 4, 5}, 2, func() kmsg.Request {
			return endTxnV(0, id, pid, epoch, true)
		}, func(r kmsg.Response) int16 { return r.(*kmsg.EndTxnResponse).ErrorCode }},
		{"TxnOffsetCommit", []int16{2, 3, 4, 5}, math.MaxInt16, func() kmsg.Request {
			req := kmsg.NewPtrTxnOffsetCommitRequest()
			req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = id, "fenced-group", pid, epoch, -1
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = "fenced"
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch = 1, -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		}},
		{"InitProducerID", []int16{3, 4, 5}, 4, func() kmsg.Request {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
			req.ProducerID, req.ProducerEpoch = pid, epoch
			return req
		}, func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }},
	} {
		for _, v := range tc.versions {
			req := tc.req()
			req.SetVersion(v)
			want := kerr.InvalidProducerEpoch
			if v >= tc.since {
				want = kerr.ProducerFenced
			}
			if got := tc.code(rawDo[kmsg.Response](t, r, req)); got != want.Code {
				t.Errorf("%s v%d from the fenced producer: %v, want %v", tc.name, v, kerr.ErrorForCode(got), want)
			}
		}
	}
}
