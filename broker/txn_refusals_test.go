package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

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
