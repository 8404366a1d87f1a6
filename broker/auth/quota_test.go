package auth

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/metadata"
)

var (
	user    = metadata.Named
	client  = metadata.Named
	deflt   = metadata.DefaultName
	t0      = time.UnixMilli(1_000_000)
	kafkaWd = QuotaConfig{Samples: 11, Window: time.Second}
)

func produceQuotas(q *Quotas, quotas map[metadata.QuotaEntity]float64) {
	m := map[metadata.QuotaEntity]map[string]float64{}
	for e, v := range quotas {
		m[e] = map[string]float64{metadata.QuotaProducerByteRate: v}
	}
	q.SetQuotas(m)
}

// TestQuotaPrecedence checks Kafka's eight levels, most specific first,
// and the scope each measures in.
func TestQuotaPrecedence(t *testing.T) {
	all := map[metadata.QuotaEntity]float64{
		{User: user("alice"), ClientID: client("app")}: 1,
		{User: user("alice"), ClientID: deflt}:         2,
		{User: user("alice")}:                          3,
		{User: deflt, ClientID: client("app")}:         4,
		{User: deflt, ClientID: deflt}:                 5,
		{User: deflt}:                                  6,
		{ClientID: client("app")}:                      7,
		{ClientID: deflt}:                              8,
	}
	scopes := []quotaScope{
		{ProduceQuota, "alice", "app"}, {ProduceQuota, "alice", "app"}, {ProduceQuota, "alice", ""},
		{ProduceQuota, "alice", "app"}, {ProduceQuota, "alice", "app"}, {ProduceQuota, "alice", ""},
		{ProduceQuota, "", "app"}, {ProduceQuota, "", "app"},
	}
	q := NewQuotas(kafkaWd)
	for level := 1; level <= 8; level++ {
		produceQuotas(q, all)
		q.mu.Lock()
		scope, limit, ok := q.scopeLocked(ProduceQuota, "alice", "app")
		q.mu.Unlock()
		if !ok || limit != float64(level) || scope != scopes[level-1] {
			t.Errorf("level %d: scope %+v limit %v ok %v, want %+v limit %d", level, scope, limit, ok, scopes[level-1], level)
		}
		for e, v := range all {
			if v == float64(level) {
				delete(all, e)
			}
		}
	}
	produceQuotas(q, all)
	q.mu.Lock()
	_, _, ok := q.scopeLocked(ProduceQuota, "alice", "app")
	q.mu.Unlock()
	if ok {
		t.Errorf("a quota applies with none set")
	}
	// Another user's quota and a client id's quota of another kind do not.
	q.SetQuotas(map[metadata.QuotaEntity]map[string]float64{
		{User: user("bob")}:            {metadata.QuotaProducerByteRate: 1},
		{ClientID: client("app")}:      {metadata.QuotaConsumerByteRate: 1},
		{IP: metadata.DefaultName}:     {metadata.QuotaConnectionCreationRate: 1},
		{User: user("alice")}:          {metadata.QuotaRequestPercentage: 1},
		{User: deflt, ClientID: deflt}: {metadata.QuotaControllerMutationRate: 1},
	})
	if d := q.Record(ProduceQuota, "User:alice", "app", 1e9, t0); d != 0 || q.Rates() != 0 {
		t.Errorf("throttled %v with %d rates by quotas that do not apply", d, q.Rates())
	}
}

// TestQuotaThrottleTime checks the throttle Kafka computes: 11000 bytes
// at once against 1000 B/s over 11 windows of 1 s are measured over the
// 10 windows a first burst counts as, 1100 B/s, 10% over: 1 s to wait.
func TestQuotaThrottleTime(t *testing.T) {
	q := NewQuotas(kafkaWd)
	produceQuotas(q, map[metadata.QuotaEntity]float64{{ClientID: deflt}: 1000})
	if d := q.Record(ProduceQuota, "User:ANONYMOUS", "c", 10000, t0); d != 0 {
		t.Fatalf("10000 bytes within 10 s of 1000 B/s throttled %v", d)
	}
	if d := q.Record(ProduceQuota, "User:ANONYMOUS", "c", 1000, t0); d != time.Second {
		t.Fatalf("11000 bytes: throttled %v, want 1s", d)
	}
	// Another client id has a rate of its own under the default.
	if d := q.Record(ProduceQuota, "User:ANONYMOUS", "d", 1000, t0); d != 0 {
		t.Fatalf("another client id throttled %v", d)
	}
	// A rate is measured over at least 10 windows: a second later the
	// 11000 bytes are still measured over 10 s.
	if d := q.Record(ProduceQuota, "User:ANONYMOUS", "c", 0, t0.Add(time.Second)); d != time.Second {
		t.Fatalf("a second later: throttled %v, want 1s", d)
	}
	// Unrecord takes back what a throttled fetch did not send.
	q.Record(ProduceQuota, "User:ANONYMOUS", "d", 9000, t0)
	q.Unrecord(ProduceQuota, "User:ANONYMOUS", "d", 9000, t0)
	if d := q.Record(ProduceQuota, "User:ANONYMOUS", "d", 9000, t0); d != 0 {
		t.Fatalf("after unrecord: throttled %v", d)
	}
	if m, ok := q.MaxInWindow(ProduceQuota, "User:ANONYMOUS", "c"); !ok || m != 10000 {
		t.Fatalf("max in window %v %v, want 10000", m, ok)
	}
}

// TestRequestQuotaBounded checks that the request quota's throttle is at
// most one window, as Kafka's ClientRequestQuotaManager bounds it, while a
// byte rate's is not bounded.
func TestRequestQuotaBounded(t *testing.T) {
	q := NewQuotas(kafkaWd)
	q.SetQuotas(map[metadata.QuotaEntity]map[string]float64{{User: deflt}: {
		metadata.QuotaRequestPercentage: 10, metadata.QuotaProducerByteRate: 10,
	}})
	if d := q.Record(RequestQuota, "User:x", "c", 1000, t0); d != time.Second {
		t.Errorf("request quota throttled %v, want the 1s window", d)
	}
	if d := q.Record(ProduceQuota, "User:x", "c", 1000, t0); d <= time.Second {
		t.Errorf("byte rate throttled %v, want more than a window", d)
	}
}

// TestQuotaRatesBounded checks that a client rotating client ids holds
// at most MaxSensors rates, still throttled in the shared rate, and that
// rates idle for a whole quota window are dropped.
func TestQuotaRatesBounded(t *testing.T) {
	q := NewQuotas(QuotaConfig{Samples: 11, Window: time.Second, MaxSensors: 100})
	produceQuotas(q, map[metadata.QuotaEntity]float64{{ClientID: deflt}: 1000})
	throttled := false
	for i := range 10_000 {
		if q.Record(ProduceQuota, "User:ANONYMOUS", fmt.Sprint("id-", i), 100, t0) > 0 {
			throttled = true
		}
		if n := q.Rates(); n > 100 {
			t.Fatalf("%d rates after %d client ids", n, i+1)
		}
	}
	if !throttled {
		t.Errorf("1 MB from rotating client ids was never throttled")
	}
	q.Record(ProduceQuota, "User:ANONYMOUS", "late", 1, t0.Add(11*time.Second))
	if n := q.Rates(); n != 1 {
		t.Errorf("%d rates after the window passed, want 1", n)
	}
}

// TestQuotaLongNames: a rate of a long client id is keyed by its hash,
// still its own.
func TestQuotaLongNames(t *testing.T) {
	q := NewQuotas(kafkaWd)
	produceQuotas(q, map[metadata.QuotaEntity]float64{{ClientID: deflt}: 1000})
	long := strings.Repeat("x", 32<<10)
	if d := q.Record(ProduceQuota, "User:ANONYMOUS", long, 11000, t0); d != time.Second {
		t.Fatalf("long client id throttled %v, want 1s", d)
	}
	if d := q.Record(ProduceQuota, "User:ANONYMOUS", long+"y", 1, t0); d != 0 {
		t.Fatalf("another long client id throttled %v", d)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.mu.rates {
		if len(s.clientID) > maxScopeName {
			t.Errorf("a rate keyed by %d bytes", len(s.clientID))
		}
	}
}
