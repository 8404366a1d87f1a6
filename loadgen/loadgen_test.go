package loadgen

import (
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestHistogramQuantiles: every quantile is within 1% above the exact
// one, and never above the largest sample.
func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	exact := make([]time.Duration, 0, 100_000)
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		d := time.Duration(r.ExpFloat64() * float64(300*time.Microsecond))
		h.add(d)
		exact = append(exact, d)
	}
	slices.Sort(exact)
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		want := exact[min(len(exact)-1, int(q*float64(len(exact))))]
		got := h.quantile(q)
		if got < want || float64(got) > float64(want)*1.01+1 {
			t.Errorf("q%v: %v, exact %v", q, got, want)
		}
	}
	if h.max != exact[len(exact)-1] || h.quantile(1) != h.max {
		t.Errorf("max %v, quantile(1) %v, exact %v", h.max, h.quantile(1), exact[len(exact)-1])
	}
	var empty histogram
	if empty.percentiles() != nil || empty.quantile(0.5) != 0 {
		t.Error("an empty histogram reports percentiles")
	}
	for _, d := range []time.Duration{0, 1, 127, 128, 255, 256, 1 << 40, 1<<62 + 12345} {
		if b := bucketOf(d); upper(b) < d || b > 0 && upper(b-1) >= d {
			t.Errorf("%d: bucket %d holds up to %d, the one before up to %d", d, b, upper(b), upper(b-1))
		}
	}
}

func TestConfigRefused(t *testing.T) {
	for _, c := range []Config{
		{Topic: "t"},
		{Brokers: []string{"x:1"}},
		{Brokers: []string{"x:1"}, Topic: "t", Acks: 2},
		{Brokers: []string{"x:1"}, Topic: "t", Acks: 1, Idempotent: true},
		{Brokers: []string{"x:1"}, Topic: "t", Acks: -1, Compression: "brotli"},
		{Brokers: []string{"x:1"}, Topic: "t", Acks: -1, Size: -1},
	} {
		if err := c.defaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
		}
	}
}

// TestRuns produces, consumes and runs e2e against a node in this
// process, sampling this process as the broker.
func TestRuns(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	base := Config{
		Brokers: []string{n.Addr()}, Topic: "load", Partitions: 3, Size: 100,
		Acks: -1, Idempotent: true, Linger: time.Millisecond, BrokerPIDs: []int{os.Getpid()},
	}
	c := base
	c.Records = 5000
	p, err := Produce(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if p.Records != 5000 || p.Errors != 0 || p.Bytes != 500_000 || p.RecordsPerSec <= 0 || p.Latency == nil || p.Broker == nil || p.Broker.RSSMB <= 0 {
		t.Fatalf("produce: %+v", p)
	}
	if p.Latency.P50 <= 0 || p.Latency.P50 > p.Latency.P99 || p.Latency.P99 > p.Latency.Max {
		t.Fatalf("produce latency: %+v", p.Latency)
	}

	c = base
	cr, err := Consume(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// The warm-up record is read too.
	if cr.Records != 5001 || cr.MBps <= 0 {
		t.Fatalf("consume: %+v", cr)
	}

	c = base
	c.Rate, c.Duration, c.Acks, c.Idempotent = 2000, 500*time.Millisecond, 1, false
	e, err := E2E(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if e.Records != 1000 || e.Latency == nil || e.FromSchedule == nil || e.Latency.P50 > e.Latency.Max {
		t.Fatalf("e2e: %+v", e)
	}

	c = base
	c.Duration, c.Acks, c.Idempotent = 200*time.Millisecond, 0, false
	d, err := Produce(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d.Records == 0 || d.Elapsed < 200*time.Millisecond {
		t.Fatalf("produce for a duration: %+v", d)
	}

	c = base
	c.Topic, c.Partitions, c.Records, c.PartitionRun = "spread", 10, 1000, 20
	if _, err := Produce(ctx, c); err != nil {
		t.Fatal(err)
	}
	ends, err := endOffsets(ctx, &c, false)
	if err != nil {
		t.Fatal(err)
	}
	var per []int64
	ends.Each(func(o kadm.ListedOffset) { per = append(per, o.Offset) })
	slices.Sort(per)
	if len(per) != 10 || per[0] < 100 || per[9] > 101 {
		t.Fatalf("runs of 20 over 10 partitions: end offsets %v, want 100 each (and the warm-up)", per)
	}

	c = base
	c.Records = 50
	m, err := Metadata(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if m.Records != 50 || m.Latency == nil {
		t.Fatalf("metadata: %+v", m)
	}
}
