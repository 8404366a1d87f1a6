package inspect

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

func TestPartitionLag(t *testing.T) {
	c := func(n int64) *int64 { return &n }
	tests := []struct {
		committed     *int64
		logStart, lso int64
		want          int64
		why           string
	}{
		{c(4), 0, 10, 6, "committed inside the log"},
		{nil, 0, 3, 3, "no commit: from the log start"},
		{nil, 5, 8, 3, "no commit, trimmed log"},
		{c(2), 5, 8, 3, "committed before the log start"},
		{c(10), 0, 10, 0, "at the end"},
		{c(12), 0, 10, 0, "past the LSO (an open transaction)"},
	}
	for _, tc := range tests {
		if got := partitionLag(tc.committed, tc.logStart, tc.lso); got != tc.want {
			t.Errorf("%s: lag = %d, want %d", tc.why, got, tc.want)
		}
	}
}

// TestGroupOffsetsLag: lag counts the records a read_committed consumer has
// left, not the markers that close transactions nor aborted records, and
// beyond exactLagLimit offsets it is the offset distance.
func TestGroupOffsetsLag(t *testing.T) {
	n := brokertest.Start(t)
	cl := n.Client()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "marked", "g-marked"
	if resp, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}

	// Offsets 0-1 committed data, 2 its marker; 3 aborted, 4 its marker;
	// 5 committed, 6 its marker.
	txns := []struct {
		end    kgo.TransactionEndTry
		values []string
	}{{kgo.TryCommit, []string{"c0", "c1"}}, {kgo.TryAbort, []string{"a0"}}, {kgo.TryCommit, []string{"c2"}}}
	producer := n.Client(kgo.TransactionalID("inspect-lag"), kgo.DefaultProduceTopic(topic))
	for _, txn := range txns {
		if err := producer.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range txn.values {
			if err := producer.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := producer.EndTransaction(ctx, txn.end); err != nil {
			t.Fatal(err)
		}
	}

	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) {
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.Addr())}, opts...)...)
	}
	// lagAt commits offset for the group and returns the group's position
	// in the partition once its last stable offset is lso: the coordinator
	// writes a transaction's markers after it answers EndTxn.
	lagAt := func(offset, lso int64) GroupPartition {
		t.Helper()
		var commit kadm.Offsets
		commit.AddOffset(topic, 0, offset, -1)
		if err := adm.CommitAllOffsets(ctx, group, commit); err != nil {
			t.Fatalf("commit %d: %v", offset, err)
		}
		var p GroupPartition
		testkit.WaitFor(t, fmt.Sprintf("last stable offset %d", lso), func() (bool, string) {
			infos, err := DescribeGroups(ctx, cl, adm, []string{group})
			if err != nil {
				t.Fatal(err)
			}
			d := GroupOffsets(ctx, adm, newClient, infos[group])
			if d.Error != "" || len(d.Partitions) != 1 || d.Partitions[0].Error != "" {
				t.Fatalf("describe %s: %+v", group, d)
			}
			p = d.Partitions[0]
			if p.LastStableOffset != lso {
				return false, fmt.Sprintf("last stable offset %d", p.LastStableOffset)
			}
			if p.Lag == nil || d.TotalLag != *p.Lag {
				t.Fatalf("lag %v, total lag %d", p.Lag, d.TotalLag)
			}
			return true, ""
		})
		return p
	}
	for _, tc := range []struct {
		committed, want int64
		why             string
	}{
		{0, 3, "three committed records, two markers and an aborted record"},
		{2, 1, "at a commit marker"},
		{3, 1, "at an aborted record"},
		{5, 1, "at the last record"},
		{6, 0, "at the last marker"},
		{7, 0, "at the end"},
	} {
		if p := lagAt(tc.committed, 7); *p.Lag != tc.want || *p.Committed != tc.committed || p.HighWatermark != 7 {
			t.Errorf("%s: committed %d: committed %d, HW %d, lag %d; want lag %d", tc.why, tc.committed, *p.Committed, p.HighWatermark, *p.Lag, tc.want)
		}
	}

	// Beyond exactLagLimit offsets the lag is the offset distance, markers
	// and aborted records included.
	plain := make([]*kgo.Record, exactLagLimit)
	for i := range plain {
		plain[i] = &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))}
	}
	if err := cl.ProduceSync(ctx, plain...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	end := int64(7 + exactLagLimit)
	if p := lagAt(0, end); *p.Lag != end {
		t.Errorf("lag over %d offsets = %d, want the distance %d", end, *p.Lag, end)
	}
	if p := lagAt(7, end); *p.Lag != exactLagLimit {
		t.Errorf("lag over %d records = %d, want %d", exactLagLimit, *p.Lag, exactLagLimit)
	}
}
