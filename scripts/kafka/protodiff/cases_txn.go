package main

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's transaction and group cases.

func endTxnReq(txnID string, pid int64, epoch int16, commit bool) *kmsg.EndTxnRequest {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = txnID, pid, epoch, commit
	return req
}

// txnOffsetCommitReq commits offset 1 of partition 0 of topic for the
// group in the transaction, as producer pid at epoch 0, at v5 (the last
// version naming topics; v5+ adds the group to the transaction).
func txnOffsetCommitReq(txnID, group string, pid int64, topic string) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.SetVersion(5)
	req.TransactionalID, req.Group = txnID, group
	req.ProducerID, req.ProducerEpoch, req.Generation = pid, 0, -1
	tt := kmsg.NewTxnOffsetCommitRequestTopic()
	tt.Topic = topic
	tp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	tp.Partition, tp.Offset, tp.LeaderEpoch = 0, 1, -1
	tt.Partitions = append(tt.Partitions, tp)
	req.Topics = append(req.Topics, tt)
	return req
}

// inTxn is a case run by a transactional producer that has added a fresh
// topic's partition 0 to its open transaction and written one batch there.
func inTxn(base string, f func(s *side, txnID, topic string, pid int64, epoch int16) ([]kmsg.Response, error)) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		t, txnID := s.topic(base), s.topic(base+"-txn")
		if err := s.createTopic(t, 1); err != nil {
			return nil, err
		}
		pid, epoch, err := s.initProducer(&txnID)
		if err != nil {
			return nil, err
		}
		if _, err := s.addPartition(txnID, pid, epoch, t); err != nil {
			return nil, err
		}
		if _, err := s.do(produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch, 0, true))); err != nil {
			return nil, err
		}
		return f(s, txnID, t, pid, epoch)
	}
}

// endTxnV5 is an EndTxn at version 5, transaction version 2 (KIP-890
// part 2): the coordinator bumps the epoch and answers it.
func endTxnV5(txnID string, pid int64, epoch int16, commit bool) *kmsg.EndTxnRequest {
	req := endTxnReq(txnID, pid, epoch, commit)
	req.SetVersion(5)
	return req
}

// waitTxnState polls DescribeTransactions until txnID is in state, for
// 15 s: the markers of an ended transaction are written after EndTxn is
// answered.
func (s *side) waitTxnState(txnID, state string) error {
	return s.waitTxnStateFor(txnID, state, 15*time.Second)
}

// waitTxnStateFor is waitTxnState bounded by d.
func (s *side) waitTxnStateFor(txnID, state string, d time.Duration) error {
	req := describeTxn(txnID)
	deadline := time.Now().Add(d)
	for {
		resp, err := s.do(req)
		if err != nil {
			return fmt.Errorf("%w: DescribeTransactions on %s: %v", errSetup, s.name, err)
		}
		got := ""
		if sts := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates; len(sts) == 1 {
			got = sts[0].State
		}
		if got == state {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s on %s is %q, not %s, after %s", errSetup, txnID, s.name, got, state, d)
		}
		time.Sleep(50 * time.Millisecond) // a bounded poll of a condition
	}
}

// describeTxn is a DescribeTransactions of one transactional id.
func describeTxn(txnID string) *kmsg.DescribeTransactionsRequest {
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{txnID}
	return req
}

// describeProducers is a DescribeProducers of partition 0 of topic.
func describeProducers(topic string) *kmsg.DescribeProducersRequest {
	req := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, dt)
	return req
}

// doAll sends reqs in order and returns every response, stopping at the
// first connection error.
func (s *side) doAll(reqs ...kmsg.Request) ([]kmsg.Response, error) {
	var out []kmsg.Response
	for _, req := range reqs {
		resp, err := s.do(req)
		if err != nil {
			return out, err
		}
		out = append(out, resp)
	}
	return out, nil
}

// endV5 ends the transaction with EndTxn v5 and waits until it is
// complete (its markers written); the EndTxn response is returned.
func (s *side) endV5(txnID string, pid int64, epoch int16, commit bool) (kmsg.Response, error) {
	resp, err := s.do(endTxnV5(txnID, pid, epoch, commit))
	if err != nil {
		return nil, err
	}
	state := "CompleteAbort"
	if commit {
		state = "CompleteCommit"
	}
	return resp, s.waitTxnState(txnID, state)
}

// committedV5 is inTxn whose transaction is then committed with EndTxn v5
// (its response first in the case's responses) before f runs.
func committedV5(base string, f func(s *side, txnID, topic string, pid int64, epoch int16) ([]kmsg.Response, error)) func(s *side) ([]kmsg.Response, error) {
	return inTxn(base, func(s *side, txnID, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
		end, err := s.endV5(txnID, pid, epoch, true)
		if err != nil {
			return nil, err
		}
		rest, err := f(s, txnID, t, pid, epoch)
		return append([]kmsg.Response{end}, rest...), err
	})
}

// txnOffsetsWithoutAddOffsets commits offsets at version with a fresh
// producer that sent no AddOffsetsToTxn; then runs then (nil: nothing).
func txnOffsetsWithoutAddOffsets(base string, version int16, then func(s *side, txnID, group, topic string, pid int64, epoch int16) ([]kmsg.Response, error)) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		t, txnID, group := s.topic(base), s.topic(base+"-txn"), s.topic(base+"-group")
		if err := s.createTopic(t, 1); err != nil {
			return nil, err
		}
		pid, epoch, err := s.initProducer(&txnID)
		if err != nil {
			return nil, err
		}
		toc := txnOffsetCommitReq(txnID, group, pid, t)
		toc.ProducerEpoch = epoch
		toc.SetVersion(version)
		resp, err := s.do(toc)
		if err != nil || then == nil {
			return []kmsg.Response{resp}, err
		}
		rest, err := then(s, txnID, group, t, pid, epoch)
		return append([]kmsg.Response{resp}, rest...), err
	}
}

// tv2Cases are transaction version 2 (KIP-890 part 2): produce v12+ and
// TxnOffsetCommit v5+ add their partition to the transaction implicitly,
// EndTxn v5 bumps the producer epoch at every commit or abort.
func tv2Cases() []testCase {
	return []testCase{
		{"txn-v2-commit-bumps-epoch", committedV5("v2-commit", func(s *side, txnID, t string, _ int64, _ int16) ([]kmsg.Response, error) {
			return s.doAll(describeTxn(txnID), describeProducers(t))
		})},
		// The next transaction, at the bumped epoch, without
		// AddPartitionsToTxn; then its abort.
		{"txn-v2-next-transaction-implicit", committedV5("v2-next", func(s *side, txnID, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
			rest, err := s.doAll(produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch+1, 0, true)), describeTxn(txnID))
			if err != nil {
				return rest, err
			}
			abort, err := s.endV5(txnID, pid, epoch+1, false)
			if err != nil {
				return nil, err
			}
			last, err := s.doAll(describeProducers(t))
			return append(append(rest, abort), last...), err
		})},
		// A retry at the old epoch is answered as the commit was; an
		// abort at the old epoch, or the same commit at the new one, is
		// not.
		{"txn-v2-endtxn-retry", committedV5("v2-retry", func(s *side, txnID, _ string, pid int64, epoch int16) ([]kmsg.Response, error) {
			return s.doAll(endTxnV5(txnID, pid, epoch, true), endTxnV5(txnID, pid, epoch, false), endTxnV5(txnID, pid, epoch+1, true))
		})},
		{"txn-v2-empty-abort", func(s *side) ([]kmsg.Response, error) {
			txnID := s.topic("v2-empty-txn")
			pid, epoch, err := s.initProducer(&txnID)
			if err != nil {
				return nil, err
			}
			abort, err := s.endV5(txnID, pid, epoch, false)
			if err != nil {
				return nil, err
			}
			rest, err := s.doAll(endTxnV5(txnID, pid, epoch, true), describeTxn(txnID))
			return append([]kmsg.Response{abort}, rest...), err
		}},
		{"txn-v2-stale-epoch-produce", committedV5("v2-stale", func(s *side, txnID, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
			return s.doAll(produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch, 1, true)))
		})},
		{"txnoffsetcommit-v5-without-addoffsets", txnOffsetsWithoutAddOffsets("v2-toc", 5, func(s *side, txnID, group, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
			described, err := s.doAll(describeTxn(txnID))
			if err != nil {
				return described, err
			}
			end, err := s.endV5(txnID, pid, epoch, true)
			if err != nil {
				return nil, err
			}
			fetch := kmsg.NewPtrOffsetFetchRequest()
			fetch.SetVersion(7) // the one-group form
			fetch.Group = group
			ft := kmsg.NewOffsetFetchRequestTopic()
			ft.Topic, ft.Partitions = t, []int32{0}
			fetch.Topics = append(fetch.Topics, ft)
			last, err := s.doAll(fetch)
			return append(append(described, end), last...), err
		})},
		{"txnoffsetcommit-v4-without-addoffsets", txnOffsetsWithoutAddOffsets("v1-toc", 4, nil)},
		// A transaction of version 2 past its timeout (1 s) is aborted
		// by the coordinator with the epoch bumped once (Kafka's abort
		// check runs every 10 s); its producer's abort at the old epoch
		// is then answered as a retry, with the new epoch, so the
		// producer goes on, while a commit is INVALID_TXN_STATE; a produce
		// at the old epoch is fenced, one at the new epoch starts the
		// next transaction.
		{"txn-v2-timed-out", func(s *side) ([]kmsg.Response, error) {
			t, txnID := s.topic("v2-timeout"), s.topic("v2-timeout-txn")
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			init := kmsg.NewPtrInitProducerIDRequest()
			init.TransactionalID, init.TransactionTimeoutMillis = &txnID, 1000
			init.ProducerID, init.ProducerEpoch = -1, -1
			resp, err := s.do(init)
			if err != nil {
				return nil, err
			}
			ir := resp.(*kmsg.InitProducerIDResponse)
			if ir.ErrorCode != 0 {
				return nil, fmt.Errorf("%w: InitProducerID on %s: error %d", errSetup, s.name, ir.ErrorCode)
			}
			pid, epoch := ir.ProducerID, ir.ProducerEpoch
			produced, err := s.do(produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch, 0, true)))
			if err != nil {
				return nil, err
			}
			if err := s.waitTxnStateFor(txnID, "CompleteAbort", 40*time.Second); err != nil {
				return nil, err
			}
			rest, err := s.doAll(describeTxn(txnID), describeProducers(t),
				endTxnV5(txnID, pid, epoch, true), endTxnV5(txnID, pid, epoch, false),
				produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch, 1, true)),
				produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch+1, 0, true)))
			return append([]kmsg.Response{resp, produced}, rest...), err
		}},
	}
}

// inGroup is a case run after one member joined a fresh classic group
// and synced (generation and member id in hand); the topic named
// s.topic(base) exists, with one partition.
func inGroup(base string, f func(s *side, group, member string, generation int32) kmsg.Request) func(s *side) ([]kmsg.Response, error) {
	return one(func(s *side) (kmsg.Request, error) {
		group := s.topic(base)
		if err := s.createTopic(group, 1); err != nil {
			return nil, err
		}
		member, gen, err := s.join(group)
		if err != nil {
			return nil, err
		}
		return f(s, group, member, gen), nil
	})
}

func txnCases() []testCase {
	const invented = int64(123456789)
	return append(tv2Cases(), []testCase{
		{"initproducerid-timeout-too-large", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(s.topic("toolong")), 1_000_000_000
			req.ProducerID, req.ProducerEpoch = -1, -1
			return req
		})},
		{"addpartitions-stale-epoch", func(s *side) ([]kmsg.Response, error) {
			t, txnID := s.topic("stale"), s.topic("stale-txn")
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			pid, epoch, err := s.initProducer(&txnID)
			if err != nil {
				return nil, err
			}
			if _, _, err := s.initProducer(&txnID); err != nil {
				return nil, err
			}
			resp, err := s.addPartition(txnID, pid, epoch, t)
			return []kmsg.Response{resp}, err
		}},
		{"addpartitions-invented-producer", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrAddPartitionsToTxnRequest()
			req.SetVersion(3)
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = s.topic("invented-txn"), invented, 0
			at := kmsg.NewAddPartitionsToTxnRequestTopic()
			at.Topic, at.Partitions = s.topic("missing"), []int32{0}
			req.Topics = append(req.Topics, at)
			return req
		})},
		{"addpartitions-unknown-topic", func(s *side) ([]kmsg.Response, error) {
			txnID := s.topic("addunk-txn")
			pid, epoch, err := s.initProducer(&txnID)
			if err != nil {
				return nil, err
			}
			resp, err := s.addPartition(txnID, pid, epoch, s.topic("missing"))
			return []kmsg.Response{resp}, err
		}},
		{"endtxn-invented-producer", noSetup(func(s *side) kmsg.Request {
			return endTxnReq(s.topic("invented-end"), invented, 0, true)
		})},
		{"endtxn-nothing-open", one(func(s *side) (kmsg.Request, error) {
			txnID := s.topic("empty-end")
			pid, epoch, err := s.initProducer(&txnID)
			return endTxnReq(txnID, pid, epoch, true), err
		})},
		{"endtxn-stale-epoch", inTxn("end-stale", func(s *side, txnID, _ string, pid int64, epoch int16) ([]kmsg.Response, error) {
			resp, err := s.do(endTxnReq(txnID, pid, epoch-1, true))
			return []kmsg.Response{resp}, err
		})},
		{"txn-commit", inTxn("commit", func(s *side, txnID, _ string, pid int64, epoch int16) ([]kmsg.Response, error) {
			resp, err := s.do(endTxnReq(txnID, pid, epoch, true))
			return []kmsg.Response{resp}, err
		})},
		{"fetch-read-committed-open-txn", inTxn("rc-fetch", func(s *side, _, t string, _ int64, _ int16) ([]kmsg.Response, error) {
			req := fetchReq(t, 0, -1, 0)
			req.IsolationLevel = 1
			resp, err := s.do(req)
			return []kmsg.Response{resp}, err
		})},
		{"listoffsets-read-committed-open-txn", inTxn("rc-lo", func(s *side, _, t string, _ int64, _ int16) ([]kmsg.Response, error) {
			req := listOffsetsReq(t, -1, -1, 0)
			req.IsolationLevel = 1
			resp, err := s.do(req)
			return []kmsg.Response{resp}, err
		})},
		{"txn-init-while-open", inTxn("concurrent", func(s *side, txnID, _ string, _ int64, _ int16) ([]kmsg.Response, error) {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID, req.TransactionTimeoutMillis = &txnID, 60000
			req.ProducerID, req.ProducerEpoch = -1, -1
			resp, err := s.do(req)
			return []kmsg.Response{resp}, err
		})},
		{"txn-produce-without-addpartitions", one(func(s *side) (kmsg.Request, error) {
			t, txnID := s.topic("noadd"), s.topic("noadd-txn")
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			pid, epoch, err := s.initProducer(&txnID)
			return produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch, 0, true)), err
		})},
		{"txnoffsetcommit-invented-producer", noSetup(func(s *side) kmsg.Request {
			return txnOffsetCommitReq(s.topic("invented-toc"), s.topic("toc-group"), invented, s.topic("missing"))
		})},
		{"txnoffsetcommit-invented-producer-existing-topic", withTopic("toc-topic", func(s *side, t string) kmsg.Request {
			return txnOffsetCommitReq(s.topic("invented-toc2"), s.topic("toc-group2"), invented, t)
		})},
		{"addoffsetstotxn-invented-producer", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrAddOffsetsToTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = s.topic("invented-aot"), invented, 0, s.topic("aot-group")
			return req
		})},
		{"describetransactions-unknown", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = []string{s.topic("no-such-txn")}
			return req
		})},
		{"describeproducers-unknown-topic", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrDescribeProducersRequest()
			dt := kmsg.NewDescribeProducersRequestTopic()
			dt.Topic, dt.Partitions = s.topic("missing"), []int32{0}
			req.Topics = append(req.Topics, dt)
			return req
		})},

		// Groups: unknown members, wrong generations.
		{"joingroup-unknown-member", noSetup(func(s *side) kmsg.Request { return joinReq(s.topic("g-unk"), "invented-member") })},
		{"joingroup-member-id-required", noSetup(func(s *side) kmsg.Request { return joinReq(s.topic("g-req"), "") })},
		{"joingroup-session-timeout-too-small", noSetup(func(s *side) kmsg.Request {
			req := joinReq(s.topic("g-sess"), "")
			req.SessionTimeoutMillis = 1
			return req
		})},
		{"joingroup-empty-protocol-type", noSetup(func(s *side) kmsg.Request {
			req := joinReq(s.topic("g-noproto"), "")
			req.ProtocolType = ""
			return req
		})},
		{"heartbeat-unknown-group", noSetup(func(s *side) kmsg.Request { return heartbeatReq(s.topic("g-hb-none"), "invented-member", 1) })},
		{"heartbeat-wrong-generation", inGroup("g-hb-gen", func(_ *side, g, m string, gen int32) kmsg.Request { return heartbeatReq(g, m, gen+1) })},
		{"heartbeat-unknown-member", inGroup("g-hb-mem", func(_ *side, g, _ string, gen int32) kmsg.Request { return heartbeatReq(g, "invented-member", gen) })},
		{"syncgroup-wrong-generation", inGroup("g-sync-gen", func(_ *side, g, m string, gen int32) kmsg.Request { return syncReq(g, m, gen+1, false) })},
		{"offsetcommit-ok", inGroup("g-oc-ok", func(_ *side, g, m string, gen int32) kmsg.Request {
			return offsetCommitReq(g, m, gen, g, 0)
		})},
		{"offsetcommit-wrong-generation", inGroup("g-oc-gen", func(_ *side, g, m string, gen int32) kmsg.Request {
			return offsetCommitReq(g, m, gen+1, g, 0)
		})},
		{"offsetcommit-unknown-member", inGroup("g-oc-mem", func(_ *side, g, _ string, gen int32) kmsg.Request {
			return offsetCommitReq(g, "invented-member", gen, g, 0)
		})},
		{"offsetcommit-wrong-generation-unknown-topic", inGroup("g-oc-gen-unk", func(s *side, g, m string, gen int32) kmsg.Request {
			return offsetCommitReq(g, m, gen+1, s.topic("missing"), 0)
		})},
		{"offsetcommit-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return offsetCommitReq(s.topic("g-oc-topic"), "", -1, s.topic("missing"), 0)
		})},
		{"offsetcommit-no-group-with-generation", withTopic("g-oc-none", func(s *side, t string) kmsg.Request {
			return offsetCommitReq(s.topic("g-oc-none"), "invented-member", 5, t, 0)
		})},
		{"offsetcommit-no-group-with-generation-unknown-topic", noSetup(func(s *side) kmsg.Request {
			return offsetCommitReq(s.topic("g-oc-none2"), "invented-member", 5, s.topic("missing"), 0)
		})},
		{"listgroups-unknown-state", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrListGroupsRequest()
			req.StatesFilter = []string{"NoSuchState"}
			return req
		})},
		{"listgroups-unknown-type", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrListGroupsRequest()
			req.TypesFilter = []string{"nosuchtype"}
			return req
		})},
		{"listtransactions-unknown-state", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrListTransactionsRequest()
			req.StateFilters = []string{"NoSuchState"}
			return req
		})},
		{"describetransactions-empty-id", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = []string{""}
			return req
		})},
		{"describeproducers-no-producers", withTopic("dp-none", func(_ *side, t string) kmsg.Request {
			req := kmsg.NewPtrDescribeProducersRequest()
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = t, []int32{0}
			req.Topics = append(req.Topics, rt)
			return req
		})},
		{"describecluster", noSetup(func(*side) kmsg.Request { return kmsg.NewPtrDescribeClusterRequest() })},
		{"syncgroup-unknown-group", noSetup(func(s *side) kmsg.Request { return syncReq(s.topic("g-sync-none"), "invented-member", 1, false) })},
		{"syncgroup-unknown-member", inGroup("g-sync-mem", func(_ *side, g, _ string, gen int32) kmsg.Request { return syncReq(g, "invented-member", gen, false) })},
		{"joingroup-empty-group-id", noSetup(func(*side) kmsg.Request { return joinReq("", "") })},
		{"heartbeat-empty-group-id", noSetup(func(*side) kmsg.Request { return heartbeatReq("", "invented-member", 1) })},
		{"leavegroup-unknown-group", noSetup(func(s *side) kmsg.Request { return leaveReq(s.topic("g-leave-none"), "invented-member") })},
		{"offsetfetch-batched-unknown-group", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.SetVersion(9)
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = s.topic("g-of9-none")
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic, rt.Partitions = s.topic("missing"), []int32{0}
			rg.Topics = append(rg.Topics, rt)
			req.Groups = append(req.Groups, rg)
			return req
		})},
		{"offsetdelete-unknown-topic", inGroup("g-odel-unk", func(s *side, g, _ string, _ int32) kmsg.Request {
			req := kmsg.NewPtrOffsetDeleteRequest()
			req.Group = g
			ot := kmsg.NewOffsetDeleteRequestTopic()
			ot.Topic = s.topic("missing")
			ot.Partitions = append(ot.Partitions, kmsg.OffsetDeleteRequestTopicPartition{Partition: 0})
			req.Topics = append(req.Topics, ot)
			return req
		})},
		{"describegroups-empty-id", noSetup(func(*side) kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = []string{""}
			return req
		})},
		{"consumergroupheartbeat-leave-unknown-group", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group, req.MemberID, req.MemberEpoch = s.topic("g848-leave-none"), "invented-member-0000000", -1
			return req
		})},
		{"consumergroupheartbeat-unknown-assignor", noSetup(func(s *side) kmsg.Request {
			req := firstHeartbeatReq(s.topic("g848-assignor"), "pd-member-0000000000002", s.topic("missing"))
			req.ServerAssignor = kmsg.StringPtr("sticky")
			return req
		})},
		{"offsetfetch-unknown-group", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.SetVersion(7) // v8+ batches groups
			req.Group = s.topic("g-of-none")
			ot := kmsg.NewOffsetFetchRequestTopic()
			ot.Topic, ot.Partitions = s.topic("missing"), []int32{0}
			req.Topics = append(req.Topics, ot)
			return req
		})},
		{"leavegroup-unknown-member", inGroup("g-leave", func(_ *side, g, _ string, _ int32) kmsg.Request { return leaveReq(g, "invented-member") })},
		{"describegroups-unknown", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = []string{s.topic("g-desc-none")}
			return req
		})},
		{"deletegroups-unknown", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = []string{s.topic("g-del-none")}
			return req
		})},
		{"deletegroups-not-empty", inGroup("g-del-busy", func(_ *side, g, _ string, _ int32) kmsg.Request {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = []string{g}
			return req
		})},
		{"offsetdelete-unknown-group", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrOffsetDeleteRequest()
			req.Group = s.topic("g-odel-none")
			ot := kmsg.NewOffsetDeleteRequestTopic()
			ot.Topic = s.topic("missing")
			op := kmsg.NewOffsetDeleteRequestTopicPartition()
			op.Partition = 0
			ot.Partitions = append(ot.Partitions, op)
			req.Topics = append(req.Topics, ot)
			return req
		})},
		{"consumergroupheartbeat-unknown-member", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group, req.MemberID, req.MemberEpoch = s.topic("g848-unk"), "invented-member-0000000", 5
			req.RebalanceTimeoutMillis = -1
			return req
		})},
		{"consumergroupdescribe-unknown", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.Groups = []string{s.topic("g848-desc-none")}
			return req
		})},
		{"consumergroupheartbeat-join", withTopic("g848-join", func(_ *side, t string) kmsg.Request {
			// A first heartbeat with a member id the client made
			// (KIP-1082): the member and group epochs it starts at.
			return firstHeartbeatReq(t, "pd-member-0000000000001", t)
		})},
		{"consumergroupheartbeat-empty-member-id", noSetup(func(s *side) kmsg.Request {
			return firstHeartbeatReq(s.topic("g848-empty"), "", s.topic("missing"))
		})},
	}...)
}
