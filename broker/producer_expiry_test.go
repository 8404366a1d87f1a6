package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
)

// TestProducerIDsExpire: producer ids a client invents (idempotent batches
// with ids no InitProducerId gave out, which Kafka accepts too) are dropped
// every producer.id.expiration.check.interval.ms once idle for
// producer.id.expiration.ms, even one whose batch claims a time years ahead.
func TestProducerIDsExpire(t *testing.T) {
	ctx := testkit.Context(t)
	const expiration = 2 * time.Second
	n := brokertest.Start(t,
		brokertest.Config("producer.id.expiration.ms", fmt.Sprint(expiration.Milliseconds())),
		brokertest.Config("producer.id.expiration.check.interval.ms", "20"),
		// Kafka's default refuses timestamps over an hour ahead; a user may
		// lift that, and expiry must still hold.
		brokertest.Config("log.message.timestamp.after.max.ms", "9223372036854775807"))
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "pids"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, ts := range []time.Time{now, now.AddDate(10, 0, 0)} {
		batch := logtest.ProducerBatch(ts.UnixMilli(), int64(9000+i), 0, 0, 1, false)
		if sp := produceRaw(ctx, t, cl, "pids", 0, batch); sp.ErrorCode != 0 {
			t.Fatalf("produce from invented producer %d: error %d", 9000+i, sp.ErrorCode)
		}
	}
	describe := func() []kadm.DescribedProducer {
		ds, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"pids": {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		return ds.SortedProducers()
	}
	if ps := describe(); len(ps) != 2 && time.Since(now) < expiration {
		t.Fatalf("described %d producers after producing, want 2: %+v", len(ps), ps)
	}
	testkit.WaitFor(t, "the invented producer ids to expire", func() (bool, string) {
		ps := describe()
		return len(ps) == 0, fmt.Sprintf("%+v", ps)
	})
}
