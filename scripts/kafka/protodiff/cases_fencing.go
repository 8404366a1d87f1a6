package main

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's fenced-producer cases: the error code of each
// transactional request, at each version, from a producer whose epoch a
// newer producer of its transactional id bumped. Clients tell a fatal
// fence from an abortable error by these codes (PRODUCER_FENCED only from
// the version that knows it, INVALID_PRODUCER_EPOCH before, and always on
// a produce).

// fenced is inTxn whose producer is then fenced: a second producer of the
// transactional id initialises twice (the first aborts the open
// transaction), so the first producer's epoch is two behind, neither the
// current one nor the one a retry may carry.
func fenced(base string, f func(s *side, txnID, topic string, pid int64, epoch int16) ([]kmsg.Response, error)) func(s *side) ([]kmsg.Response, error) {
	return inTxn(base, func(s *side, txnID, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
		for range 2 {
			if _, _, err := s.initProducer(&txnID); err != nil {
				return nil, err
			}
		}
		return f(s, txnID, t, pid, epoch)
	})
}

// atVersions is req built for each version, in order.
func atVersions(versions []int16, req func() kmsg.Request) []kmsg.Request {
	var out []kmsg.Request
	for _, v := range versions {
		r := req()
		r.SetVersion(v)
		out = append(out, r)
	}
	return out
}

func fencedCases() []testCase {
	return []testCase{
		// librdkafka produces at v10: a fenced produce must be fatal to it.
		{"txn-fenced-produce", fenced("fenced-produce", func(s *side, txnID, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
			return s.doAll(atVersions([]int16{3, 9, 10, 11, 12}, func() kmsg.Request {
				return produceReq(t, 0, &txnID, batch(1, time.Now().UnixMilli(), pid, epoch, 1, true))
			})...)
		})},
		{"txn-fenced-addpartitions", fenced("fenced-addparts", func(s *side, txnID, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
			return s.doAll(atVersions([]int16{1, 2, 3}, func() kmsg.Request {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = txnID, pid, epoch
				at := kmsg.NewAddPartitionsToTxnRequestTopic()
				at.Topic, at.Partitions = t, []int32{0}
				req.Topics = append(req.Topics, at)
				return req
			})...)
		})},
		{"txn-fenced-addoffsets", fenced("fenced-addoffsets", func(s *side, txnID, _ string, pid int64, epoch int16) ([]kmsg.Response, error) {
			group := s.topic("fenced-addoffsets-group")
			return s.doAll(atVersions([]int16{1, 2, 3, 4}, func() kmsg.Request {
				req := kmsg.NewPtrAddOffsetsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = txnID, pid, epoch, group
				return req
			})...)
		})},
		{"txn-fenced-endtxn", fenced("fenced-end", func(s *side, txnID, _ string, pid int64, epoch int16) ([]kmsg.Response, error) {
			reqs := atVersions([]int16{1, 2, 3, 4, 5}, func() kmsg.Request { return endTxnReq(txnID, pid, epoch, true) })
			reqs = append(reqs, atVersions([]int16{1, 2, 4, 5}, func() kmsg.Request { return endTxnReq(txnID, pid, epoch, false) })...)
			return s.doAll(reqs...)
		})},
		{"txn-fenced-txnoffsetcommit", fenced("fenced-toc", func(s *side, txnID, t string, pid int64, epoch int16) ([]kmsg.Response, error) {
			group := s.topic("fenced-toc-group")
			return s.doAll(atVersions([]int16{2, 3, 4, 5}, func() kmsg.Request {
				req := txnOffsetCommitReq(txnID, group, pid, t)
				req.ProducerEpoch = epoch
				return req
			})...)
		})},
		// InitProducerID with the fenced producer id and epoch (KIP-360).
		{"txn-fenced-initproducerid", fenced("fenced-init", func(s *side, txnID, _ string, pid int64, epoch int16) ([]kmsg.Response, error) {
			return s.doAll(atVersions([]int16{3, 4, 5}, func() kmsg.Request {
				req := kmsg.NewPtrInitProducerIDRequest()
				req.TransactionalID, req.TransactionTimeoutMillis = &txnID, 60000
				req.ProducerID, req.ProducerEpoch = pid, epoch
				return req
			})...)
		})},
	}
}
