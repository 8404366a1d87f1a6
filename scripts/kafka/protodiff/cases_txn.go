package main

import (
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
// group in the transaction, as producer pid at epoch 0.
func txnOffsetCommitReq(txnID, group string, pid int64, topic string) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
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
	return []testCase{
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
		{"offsetfetch-unknown-group", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.SetVersion(7) // v8+ batches groups
			req.Group = s.topic("g-of-none")
			ot := kmsg.NewOffsetFetchRequestTopic()
			ot.Topic, ot.Partitions = s.topic("missing"), []int32{0}
			req.Topics = append(req.Topics, ot)
			return req
		})},
		{"leavegroup-unknown-member", inGroup("g-leave", func(_ *side, g, _ string, _ int32) kmsg.Request {
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Group = g
			lm := kmsg.NewLeaveGroupRequestMember()
			lm.MemberID = "invented-member"
			req.Members = append(req.Members, lm)
			return req
		})},
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
		{"consumergroupheartbeat-empty-member-id", noSetup(func(s *side) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group, req.MemberID, req.MemberEpoch = s.topic("g848-empty"), "", 0
			req.RebalanceTimeoutMillis = 30000
			req.SubscribedTopicNames = []string{s.topic("missing")}
			return req
		})},
	}
}
