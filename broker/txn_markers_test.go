package broker_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// writeTxnMarker sends one WriteTxnMarkers marker for partition 0 of topic
// from a plain client connection and returns the partition's error code.
func writeTxnMarker(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, pid int64, epoch int16, commit bool, coordinatorEpoch int32) int16 {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, coordinatorEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("WriteTxnMarkers: %v", err)
	}
	if len(resp.Markers) != 1 || len(resp.Markers[0].Topics) != 1 || len(resp.Markers[0].Topics[0].Partitions) != 1 {
		t.Fatalf("WriteTxnMarkers response %+v", resp.Markers)
	}
	return resp.Markers[0].Topics[0].Partitions[0].ErrorCode
}

// openProducer returns the producer id, epoch and coordinator epoch of the
// producer with an open transaction on partition 0 of topic, as
// DescribeProducers reports them.
func openProducer(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) (int64, int16, int32) {
	t.Helper()
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeProducers: %v %+v", err, resp)
	}
	for _, p := range resp.Topics[0].Partitions[0].ActiveProducers {
		if p.CurrentTxnStartOffset >= 0 {
			return p.ProducerID, int16(p.ProducerEpoch), p.CoordinatorEpoch
		}
	}
	t.Fatalf("no open transaction on %s-0: %+v", topic, resp.Topics[0].Partitions[0])
	return 0, 0, 0
}

// addPartitionsToTxn adds partition 0 of topic to the transaction of id
// with a raw request and returns the partition's error code: a client
// library would retry CONCURRENT_TRANSACTIONS and hide a wedged id.
func addPartitionsToTxn(ctx context.Context, t *testing.T, cl *kgo.Client, id string, pid int64, epoch int16, topic string) int16 {
	t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 3
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("AddPartitionsToTxn: %v %+v", err, resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// openTransaction creates a one-partition topic and returns a producer of
// transactional id with a transaction open on it, holding one record.
func openTransaction(ctx context.Context, t *testing.T, n *brokertest.Node, topic, id, value string) *kgo.Client {
	t.Helper()
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	p := transactionalClient(t, n, id, kgo.DefaultProduceTopic(topic))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClientWriteTxnMarkersCannotWedgeATransaction is issue 9, item 6: a
// client sends WriteTxnMarkers (abort, coordinator epoch 2^31-1) for
// another producer's open transaction. Kafka guards the API with
// CLUSTER_ACTION; klog, with no inter-broker listener, refuses a marker
// that claims a coordinator epoch above the transaction's coordinator with
// CLUSTER_AUTHORIZATION_FAILED and writes nothing. The victim's commit is
// then visible to read_committed consumers, and its transactional id keeps
// working, before and after a restart.
func TestClientWriteTxnMarkersCannotWedgeATransaction(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.DataDir(t.TempDir()))
	victim := openTransaction(ctx, t, n, "victim", "victim-txn", "promised")

	attacker := nameClient(n)
	pid, epoch, _ := openProducer(ctx, t, attacker, "victim")
	if code := writeTxnMarker(ctx, t, attacker, "victim", pid, epoch, false, math.MaxInt32); code != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("client abort marker with coordinator epoch 2^31-1: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}

	if err := victim.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("victim's commit: %v", err)
	}
	check := func(when string) {
		t.Helper()
		testkit.WaitFor(t, when+": the commit marker to release the LSO", func() (bool, string) {
			lso, hw := listOffset(ctx, t, n, "victim", 1), listOffset(ctx, t, n, "victim", 0)
			return lso == hw, ""
		})
		if got := consumeAll(ctx, t, n, "victim", kgo.ReadCommitted()); !slices.Contains(got, "promised") {
			t.Fatalf("%s: read_committed saw %v, want the committed record", when, got)
		}
		cl := nameClient(n)
		var pid int64
		var epoch int16
		testkit.WaitFor(t, when+": InitProducerID of the victim's id", func() (bool, string) {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID = kmsg.StringPtr("victim-txn")
			req.TransactionTimeoutMillis = 60000
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return false, err.Error()
			}
			// COORDINATOR_LOAD_IN_PROGRESS passes after a restart;
			// CONCURRENT_TRANSACTIONS must too, once the markers are in.
			pid, epoch = resp.ProducerID, resp.ProducerEpoch
			return resp.ErrorCode == 0, fmt.Sprint(kerr.ErrorForCode(resp.ErrorCode))
		})
		if code := addPartitionsToTxn(ctx, t, cl, "victim-txn", pid, epoch, "victim"); code != 0 {
			t.Fatalf("%s: AddPartitionsToTxn: %v", when, kerr.ErrorForCode(code))
		}
	}
	check("before the restart")
	n.Restart()
	check("after the restart")
}

// TestClientWriteTxnMarkersAbortGoesThroughTheCoordinator: an operator's
// abort (klog txn abort, Kafka's kafka-transactions.sh abort) of a
// transaction this node's coordinator runs, at the coordinator epoch the
// partition reports, is carried out by the coordinator itself, as a
// timed-out transaction is: the epoch is bumped, so the producer is never
// told its commit succeeded while its records stay aborted (fenced under
// transaction version 1; under version 2, which franz-go runs here, its
// commit at the old epoch is INVALID_TXN_STATE, as Kafka 4.4 answers after
// a timeout). A commit marker for it, or a producer epoch other than the
// coordinator's, is refused.
func TestClientWriteTxnMarkersAbortGoesThroughTheCoordinator(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	p := openTransaction(ctx, t, n, "operated", "operated-txn", "doomed")
	admin := nameClient(n)
	pid, epoch, coordinatorEpoch := openProducer(ctx, t, admin, "operated")
	for _, tc := range []struct {
		name   string
		epoch  int16
		commit bool
		want   *kerr.Error
	}{
		{"commit marker", epoch, true, kerr.InvalidTxnState},
		{"newer producer epoch", epoch + 1, false, kerr.InvalidProducerEpoch},
	} {
		if code := writeTxnMarker(ctx, t, admin, "operated", pid, tc.epoch, tc.commit, coordinatorEpoch); code != tc.want.Code {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(code), tc.want)
		}
	}
	if code := writeTxnMarker(ctx, t, admin, "operated", pid, epoch, false, coordinatorEpoch); code != 0 {
		t.Fatalf("operator abort: %v", kerr.ErrorForCode(code))
	}
	testkit.WaitFor(t, "the coordinator's abort marker to release the LSO", func() (bool, string) {
		return listOffset(ctx, t, n, "operated", 1) == listOffset(ctx, t, n, "operated", 0), ""
	})
	err := p.EndTransaction(ctx, kgo.TryCommit)
	if err == nil || !(strings.Contains(err.Error(), kerr.ProducerFenced.Message) || strings.Contains(err.Error(), kerr.InvalidProducerEpoch.Message) ||
		strings.Contains(err.Error(), kerr.InvalidTxnState.Message)) {
		t.Fatalf("commit after the operator's abort: %v, want it refused", err)
	}
	if got := consumeAll(ctx, t, n, "operated", kgo.ReadCommitted()); slices.Contains(got, "doomed") {
		t.Fatalf("read_committed saw the aborted record: %v", got)
	}
}
