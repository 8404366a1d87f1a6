package loadgen

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// quotaTestRate is the byte rate the quota tests hold clients to.
const quotaTestRate = 1 << 20

// setDefaultClientQuota sets key to quotaTestRate for every client id.
func setDefaultClientQuota(t *testing.T, ctx context.Context, n *brokertest.Node, key string) {
	t.Helper()
	adm := kadm.NewClient(n.Client())
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id"}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: key, Value: quotaTestRate}},
	}})
	if err == nil && res[0].Err != nil {
		err = res[0].Err
	}
	if err != nil {
		t.Fatal(err)
	}
}

// checkQuotaHeld checks that r's bytes went at quotaTestRate within
// within, and that the broker throttled the client.
func checkQuotaHeld(t *testing.T, what string, r *Result, within float64) {
	t.Helper()
	rate := float64(r.Bytes) / r.Elapsed.Seconds()
	t.Logf("%s: %d bytes in %v (%d batches in %d requests): %.0f B/s, %.3f of the %d B/s quota; throttled %d times, %v in all, longest %v",
		what, r.Bytes, r.Elapsed.Round(time.Millisecond), r.Batches, r.Requests, rate, rate/quotaTestRate, quotaTestRate,
		r.Throttles.Count, r.Throttles.Total, r.Throttles.Max)
	if math.Abs(rate/quotaTestRate-1) > within {
		t.Errorf("%s at %.0f B/s, more than %.0f%% from the quota of %d B/s", what, rate, within*100, quotaTestRate)
	}
	if r.Throttles.Count == 0 {
		t.Errorf("%s was never told to wait", what)
	}
}

// TestProduceHeldToQuota runs a franz-go producer, as fast as it can, for
// 30 s against a producer_byte_rate of 1 MiB/s and checks that its
// long-run average is within 10% of the quota.
//
// Kafka's rate lets a client use at once what the quota allows over
// quota.window.num-1 windows, and forgets a burst once quota.window.num
// windows passed: a greedy client's average over a run overshoots by at
// most about one such burst plus a request, and a client late after a
// throttle (a loaded machine) catches up within the window, as long as it
// can send faster than the quota. With Kafka's default of 11 windows of
// 1 s the burst is 10 s of quota, more than 10% of any run shorter than
// about 2 minutes; the node here measures over 2 windows, so the burst is
// 1 s of quota and a request of 256 KiB a quarter of a second: about 4% of
// 30 s. Batches that large also make few wake-ups a second, so scheduling
// delays on a loaded machine cost little: runs under a load average of 20
// measured 1.004 and 1.019 of the quota.
func TestProduceHeldToQuota(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s measurement")
	}
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("quota.window.num", "2"))
	setDefaultClientQuota(t, ctx, n, "producer_byte_rate")
	r, err := Produce(ctx, Config{
		Brokers: []string{n.Addr()}, Topic: "quota", Size: 1000, Acks: 1, BatchMax: 256 << 10,
		Duration: 30 * time.Second, MaxBuffered: 1000, // a flush of about 1 s at the end

	})
	if err != nil {
		t.Fatal(err)
	}
	checkQuotaHeld(t, "producer", r, 0.10)
}

// TestFetchHeldToQuota consumes 8 MiB against a consumer_byte_rate of
// 1 MiB/s in fetches of 64 KiB: the consumer is throttled, and takes
// about 8 s. (A throttled fetch is answered empty, as in Kafka, so a
// consumer whose fetches are large beside what the quota allows in a
// window gets less than its quota.)
func TestFetchHeldToQuota(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("quota.window.num", "2"))
	c := Config{
		Brokers: []string{n.Addr()}, Topic: "quota", Size: 1000, Acks: 1, Records: 8 << 10, BatchMax: 16 << 10,
		FetchMaxBytes: 64 << 10, FetchMaxPartitionBytes: 64 << 10,
	}
	if _, err := Produce(ctx, c); err != nil {
		t.Fatal(err)
	}
	setDefaultClientQuota(t, ctx, n, "consumer_byte_rate")
	r, err := Consume(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	checkQuotaHeld(t, "consumer", r, 0.20)
}
