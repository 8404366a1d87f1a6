package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/klogproc"
	"github.com/klogdev/klog/store/log/record"
)

// errCode is the Kafka error code of err, -1 for an error that is not one.
func errCode(err error) int16 {
	var ke *kerr.Error
	if err == nil {
		return 0
	}
	if errors.As(err, &ke) {
		return ke.Code
	}
	return -1
}

// txnClient is a transactional producer of topic.
func txnClient(n *node, id, topic string) (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(n.Addr()), kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic),
		kgo.TransactionTimeout(10*time.Second), kgo.RetryTimeout(clientTimeout))
}

// initProducer waits up to 5 s for InitProducerId of txnID to succeed
// (kgo's BeginTransaction would wait without a bound), retrying the
// answers a client retries, and returns the last code.
func initProducer(p *run, txnID string) (int16, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	last := int16(-1)
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = kmsg.StringPtr(txnID)
		req.TransactionTimeoutMillis = 10000
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := doRaw(p.n, req)
		if err != nil {
			return false, err
		}
		last = resp.(*kmsg.InitProducerIDResponse).ErrorCode
		return last == 0, nil
	})
	if err != nil {
		return last, fmt.Errorf("InitProducerId %s still %s after 5s: %w", txnID, codeName(last), err)
	}
	return last, nil
}

// commitOne produces value in one transaction of txnID and commits it,
// once InitProducerId answers.
func commitOne(p *run, txnID, topic, value string) error {
	if _, err := initProducer(p, txnID); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(p.ctx, 2*clientTimeout)
	defer cancel()
	cl, err := txnClient(p.n, txnID, topic)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr(); err != nil {
		return fmt.Errorf("produce in transaction: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// readSees reads topic read_committed and checks value is there.
func readSees(ctx context.Context, n *node, topic string, want int, value string) error {
	seen, err := consumeValues(ctx, n, topic, want)
	if !slices.Contains(seen, value) {
		return fmt.Errorf("read_committed consumer does not see %s (read %q: %v)", value, seen, err)
	}
	return nil
}

// writeTxnMarkers (finding 6): a client sends WriteTxnMarkers to abort
// another producer's open transaction with coordinator epoch 2^31-1.
// Bounds: if the victim's EndTxn(commit) succeeds its record is visible
// read_committed; the transactional id works again, and after a restart.
func writeTxnMarkers(p *run) {
	ctx := p.ctx
	const topic = "wtm"
	if err := createTopic(ctx, p.n, topic, 1, nil); err != nil {
		p.failf("%v", err)
		return
	}
	victim, err := txnClient(p.n, "victim", topic)
	if err != nil {
		p.failf("%v", err)
		return
	}
	defer victim.Close()
	if err := victim.BeginTransaction(); err != nil {
		p.failf("begin: %v", err)
		return
	}
	if err := victim.ProduceSync(ctx, &kgo.Record{Value: []byte("victim-1")}).FirstErr(); err != nil {
		p.failf("victim produce: %v", err)
		return
	}
	pid, epoch, err := victim.ProducerID(ctx)
	if err != nil {
		p.failf("victim producer id: %v", err)
		return
	}

	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, false, math.MaxInt32
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	if resp, err := doRaw(p.n, req); err != nil {
		p.codeText("writetxnmarkers", "closed")
		p.notef("writetxnmarkers: %v", err)
	} else {
		for _, m := range resp.(*kmsg.WriteTxnMarkersResponse).Markers {
			for _, t := range m.Topics {
				for _, pt := range t.Partitions {
					p.code("writetxnmarkers", pt.ErrorCode)
				}
			}
		}
	}

	ectx, cancel := context.WithTimeout(ctx, 2*clientTimeout)
	err = victim.EndTransaction(ectx, kgo.TryCommit)
	cancel()
	p.code("endtxn", errCode(err))
	if err == nil {
		if err := readSees(ctx, p.n, topic, 1, "victim-1"); err != nil {
			p.failf("EndTxn(commit) succeeded but %v", err)
		}
	}
	victim.Close()
	if err := commitOne(p, "victim", topic, "victim-2"); err != nil {
		p.failf("transactional id unusable after the markers: %v", err)
	}
	if err := p.n.restart(ctx, false, p.n.opts); err != nil {
		p.failf("restart: %v", err)
		return
	}
	if err := commitOne(p, "victim", topic, "victim-3"); err != nil {
		p.failf("transactional id unusable after a restart: %v", err)
	}
}

// doRaw sends one request on a fresh connection and reads its answer.
func doRaw(n *node, req kmsg.Request) (kmsg.Response, error) {
	r, err := dialRaw(n)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	resp, _, err := r.Do(req, 15*time.Second)
	return resp, err
}

// txnBatch (finding 7): a transactional batch of an invented producer,
// sent without a transactional id, is refused with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, and read_committed consumers of
// the partition progress, also after a restart.
func txnBatch(p *run) {
	ctx := p.ctx
	const topic = "txnbatch"
	if err := createTopic(ctx, p.n, topic, 1, nil); err != nil {
		p.failf("%v", err)
		return
	}
	bb := record.NewBuilder(time.Now().UnixMilli())
	bb.Transactional, bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = true, 424242, 0, 0
	bb.Append(record.Record{Value: []byte("no-txn-id")})
	batch, err := bb.Build()
	if err != nil {
		p.failf("%v", err)
		return
	}
	resp, err := doRaw(p.n, produceReq(topic, 0, -1, batch))
	if err != nil {
		p.failf("produce: %v", err)
		return
	}
	code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	p.code("produce", code)
	if code != kerr.TransactionalIDAuthorizationFailed.Code {
		p.failf("transactional batch without transactional id answered %s, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", codeName(code))
	}
	if err := produceValues(ctx, p.n, topic, 0, 1<<20, []byte("after")); err != nil {
		p.failf("%v", err)
		return
	}
	if err := readSees(ctx, p.n, topic, 1, "after"); err != nil {
		p.failf("LSO pinned: %v", err)
	}
	if err := p.n.restart(ctx, false, p.n.opts); err != nil {
		p.failf("restart: %v", err)
		return
	}
	if err := produceValues(ctx, p.n, topic, 0, 1<<20, []byte("after-restart")); err != nil {
		p.failf("%v", err)
		return
	}
	if err := readSees(ctx, p.n, topic, 2, "after-restart"); err != nil {
		p.failf("LSO pinned after a restart: %v", err)
	}
}

// txnOffset (finding 8): TxnOffsetCommit from a producer no coordinator
// knows is refused, and OffsetFetch with RequireStable never answers
// UNSTABLE_OFFSET_COMMIT for the group, also after a restart.
func txnOffset(p *run) {
	const group = "ghost-group"
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "ghost", group, 525252, 0
	req.Generation = -1
	t := kmsg.NewTxnOffsetCommitRequestTopic()
	t.Topic = p.c.topic
	pt := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	pt.Partition, pt.Offset, pt.LeaderEpoch = 0, 1, -1
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)
	if err := findCoordinator(p, group, 0); err != nil {
		p.failf("%v", err)
		return
	}
	if err := findCoordinator(p, "ghost", 1); err != nil {
		p.failf("%v", err)
		return
	}
	// A coordinator that is loading says so; only its real answer counts.
	var resp kmsg.Response
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		var err error
		if resp, err = doRaw(p.n, req); err != nil {
			return false, err
		}
		code := resp.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		return code != kerr.NotCoordinator.Code && code != kerr.CoordinatorLoadInProgress.Code, nil
	})
	if err != nil {
		p.failf("TxnOffsetCommit: %v", err)
		return
	}
	for _, t := range resp.(*kmsg.TxnOffsetCommitResponse).Topics {
		for _, pt := range t.Partitions {
			p.code("txnoffsetcommit", pt.ErrorCode)
			if pt.ErrorCode == 0 {
				p.failf("TxnOffsetCommit of an invented producer accepted")
			}
		}
	}
	stable := func(when string) {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.SetVersion(9) // RequireStable is v7+; 10+ name topics by id
		req.RequireStable = true
		req.Group = group
		ft := kmsg.NewOffsetFetchRequestTopic()
		ft.Topic, ft.Partitions = p.c.topic, []int32{0}
		req.Topics = append(req.Topics, ft)
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = group
		gt := kmsg.NewOffsetFetchRequestGroupTopic()
		gt.Topic, gt.Partitions = p.c.topic, []int32{0}
		g.Topics = append(g.Topics, gt)
		req.Groups = append(req.Groups, g)
		resp, err := doRaw(p.n, req)
		if err != nil {
			p.failf("OffsetFetch %s: %v", when, err)
			return
		}
		codes := itemCodes(resp)
		p.codeText("offsetfetch-"+when, codes)
		if strings.Contains(codes, codeName(kerr.UnstableOffsetCommit.Code)) {
			p.failf("OffsetFetch RequireStable %s answers UNSTABLE_OFFSET_COMMIT", when)
		}
	}
	stable("now")
	if err := p.n.restart(p.ctx, false, p.n.opts); err != nil {
		p.failf("restart: %v", err)
		return
	}
	stable("restarted")
}

// findCoordinator waits up to 5 s for FindCoordinator of key (type 0
// group, 1 transaction) to name a coordinator, as a client does before
// sending to it.
func findCoordinator(p *run, key string, keyType int8) error {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	last := int16(-1)
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys, req.CoordinatorType = key, []string{key}, keyType
		resp, err := doRaw(p.n, req)
		if err != nil {
			return false, err
		}
		r := resp.(*kmsg.FindCoordinatorResponse)
		last = r.ErrorCode
		if len(r.Coordinators) > 0 {
			last = r.Coordinators[0].ErrorCode
		}
		return last == 0, nil
	})
	if err != nil {
		return fmt.Errorf("FindCoordinator %s: %s: %w", key, codeName(last), err)
	}
	return nil
}

// internalTopic (finding 9): a client's CreateTopics of __transaction_state
// (1 partition) and __consumer_offsets does not wedge the coordinators:
// InitProducerId and a transaction work at once, without a restart.
// Kafka 4.4 lets a client create both (ControllerApis.createTopics refuses
// only __cluster_metadata, with INVALID_REQUEST), and so does klog; the
// coordinators serve whatever partition count the topic has.
func internalTopic(p *run) {
	for _, tc := range []struct {
		name string
		want int16
	}{
		{"__transaction_state", 0},
		{"__consumer_offsets", 0},
		{"__cluster_metadata", kerr.InvalidRequest.Code},
	} {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 10000
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = tc.name, 1, 1
		req.Topics = append(req.Topics, t)
		resp, err := doRaw(p.n, req)
		if err != nil {
			p.failf("CreateTopics %s: %v", tc.name, err)
			continue
		}
		code := resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
		p.code("create"+tc.name, code)
		if code != tc.want {
			p.failf("CreateTopics %s: %s, want %s as Kafka 4.4 answers", tc.name, codeName(code), codeName(tc.want))
		}
	}
	start := time.Now()
	last, err := initProducer(p, "after-internal")
	p.code("initproducerid", last)
	p.notef("InitProducerId after %.1fs", time.Since(start).Seconds())
	if err != nil {
		p.failf("%v", err)
		return
	}
	if err := commitOne(p, "after-internal-2", p.c.topic, "txn-after-internal"); err != nil {
		p.failf("transaction after the CreateTopics: %v", err)
	}
}
