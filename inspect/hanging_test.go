package inspect

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestHangingClassification(t *testing.T) {
	now := time.UnixMilli(10_000_000)
	old := now.Add(-20 * time.Minute).UnixMilli()
	young := now.Add(-time.Minute).UnixMilli()
	parts := []PartitionProducers{
		{Topic: "t", Partition: 0, Producers: []Producer{
			{ProducerID: 1, ProducerEpoch: 3, CoordinatorEpoch: 7, CurrentTxnStartOffset: 10, LastTimestamp: old}, // unknown to coordinators
			{ProducerID: 2, ProducerEpoch: 0, CurrentTxnStartOffset: 12, LastTimestamp: old},                      // running at its coordinator
			{ProducerID: 3, ProducerEpoch: 0, CurrentTxnStartOffset: 14, LastTimestamp: young},                    // too young to judge
			{ProducerID: 4, ProducerEpoch: 0, CurrentTxnStartOffset: -1, LastTimestamp: old},                      // no open transaction
			{ProducerID: 5, ProducerEpoch: 1, CurrentTxnStartOffset: 16, LastTimestamp: old},                      // coordinator moved on
			{ProducerID: 6, ProducerEpoch: 1, CurrentTxnStartOffset: 18, LastTimestamp: old},                      // ongoing, other partitions
			{ProducerID: 7, ProducerEpoch: 1, CurrentTxnStartOffset: 20, LastTimestamp: old},                      // id reused by a new producer
			{ProducerID: 8, ProducerEpoch: 1, CurrentTxnStartOffset: 22, LastTimestamp: old},                      // commit in progress
		}},
	}
	cands := hangingCandidates(parts, 15*time.Minute, now)
	var candIDs []int64
	for _, c := range cands {
		candIDs = append(candIDs, c.producer.ProducerID)
	}
	if want := []int64{1, 2, 5, 6, 7, 8}; !slices.Equal(candIDs, want) {
		t.Fatalf("candidates = %v, want %v", candIDs, want)
	}
	on := func(topic string, ps ...int32) kadm.TopicsSet {
		s := make(kadm.TopicsSet)
		s.Add(topic, ps...)
		return s
	}
	txnIDs := map[int64]string{2: "a", 5: "b", 6: "c", 7: "d", 8: "e"}
	described := kadm.DescribedTransactions{
		"a": {TxnID: "a", ProducerID: 2, State: "Ongoing", Topics: on("t", 0)},
		"b": {TxnID: "b", ProducerID: 5, State: "CompleteCommit"},
		"c": {TxnID: "c", ProducerID: 6, State: "Ongoing", Topics: on("t", 1)},
		"d": {TxnID: "d", ProducerID: 70, State: "Ongoing", Topics: on("t", 0)},
		"e": {TxnID: "e", ProducerID: 8, State: "PrepareCommit", Topics: on("t", 0)},
	}
	hanging := classifyHanging(cands, txnIDs, described)
	var got []int64
	for _, h := range hanging {
		got = append(got, h.ProducerID)
	}
	if want := []int64{1, 5, 6, 7}; !slices.Equal(got, want) {
		t.Fatalf("hanging = %v, want %v", got, want)
	}
	if h := hanging[0]; h.TransactionalID != nil || h.StartOffset != 10 || h.CoordinatorEpoch != 7 || h.ProducerEpoch != 3 {
		t.Errorf("unknown producer reported as %+v", h)
	}
	if h := hanging[1]; h.TransactionalID == nil || *h.TransactionalID != "b" || h.CoordinatorState != "CompleteCommit" {
		t.Errorf("finished transaction reported as %+v", h)
	}
}
