package telemetry

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/internal/testkit"
)

// payload is an OTLP MetricsData with a gauge and a delta counter.
func payload(t *testing.T, gauge float64, delta int64) []byte {
	t.Helper()
	attr := []*commonpb.KeyValue{{Key: "topic", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "orders"}}}}
	md := &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
		{Name: "org.apache.kafka.producer.record.queue.time.avg", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{
			{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: gauge}},
		}}}},
		{Name: "org.apache.kafka.producer.topic.record.send.total", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
			AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, IsMonotonic: true,
			DataPoints: []*metricspb.NumberDataPoint{{Attributes: attr, Value: &metricspb.NumberDataPoint_AsInt{AsInt: delta}}},
		}}},
	}}}}}}
	b, err := proto.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sub(t *testing.T, name string, cfg map[string]string) Subscription {
	t.Helper()
	s, err := ParseSubscription(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A client's round: it asks for its subscription, which names the
// metrics of the subscriptions matching it and their shortest interval;
// pushes; its counters add up its deltas and its gauges keep the last
// value; asking or pushing again within the interval is throttled, and a
// subscription changed since is answered at once with a new id, which the
// old one's push learns as UNKNOWN_SUBSCRIPTION_ID.
func TestReceiverRound(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1000, 0))
	r := NewReceiver(clock.Now)
	defer r.Close()
	r.SetSubscriptions([]Subscription{
		sub(t, "producers", map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000", "match": "client_id=app-.*"}),
		sub(t, "slow", map[string]string{"metrics": "org.apache.kafka.consumer.", "interval.ms": "60000"}),
		sub(t, "others", map[string]string{"metrics": "*", "match": "client_software_name=other"}),
	})
	c := Client{ClientID: "app-1", SoftwareName: "apache-kafka-java", SoftwareVersion: "4.4.0", Remote: "127.0.0.1:5000"}
	a := r.Subscriptions([16]byte{}, c)
	if a.Err != nil || a.InstanceID == ([16]byte{}) || a.PushIntervalMs != 1000 || fmt.Sprint(a.Metrics) != "[org.apache.kafka.consumer. org.apache.kafka.producer.]" || !a.DeltaTemporality || a.MaxBytes != MaxBytes {
		t.Fatalf("answer %+v", a)
	}
	if again := r.Subscriptions(a.InstanceID, c); !errors.Is(again.Err, kerr.ThrottlingQuotaExceeded) {
		t.Errorf("asked again at once: %v, want THROTTLING_QUOTA_EXCEEDED", again.Err)
	}
	id := a.InstanceID
	if err := r.Push(id, a.SubscriptionID, false, 0, payload(t, 1.5, 3), c); err != nil {
		t.Fatalf("first push: %v", err)
	}
	if err := r.Push(id, a.SubscriptionID, false, 0, payload(t, 2.5, 4), c); !errors.Is(err, kerr.ThrottlingQuotaExceeded) {
		t.Errorf("push again at once: %v, want THROTTLING_QUOTA_EXCEEDED", err)
	}
	clock.Advance(time.Second)
	if err := r.Push(id, a.SubscriptionID, false, 0, payload(t, 2.5, 4), c); err != nil {
		t.Fatalf("push after the interval: %v", err)
	}
	got := r.Clients()
	if len(got) != 1 || got[0].ClientID != "app-1" || got[0].Pushes != 2 || len(got[0].Series) != 2 {
		t.Fatalf("clients %+v", got)
	}
	for _, s := range got[0].Series {
		switch s.Kind {
		case Gauge:
			if s.Value != 2.5 {
				t.Errorf("gauge %s = %v, want the last value 2.5", s.Name, s.Value)
			}
		case Counter:
			if s.Value != 7 || s.Attrs != "{topic=orders}" {
				t.Errorf("counter %s%s = %v, want 3+4", s.Name, s.Attrs, s.Value)
			}
		}
	}

	r.SetSubscriptions(nil)
	b := r.Subscriptions(id, c)
	if b.Err != nil || b.SubscriptionID == a.SubscriptionID || len(b.Metrics) != 0 || b.PushIntervalMs != DefaultIntervalMs {
		t.Fatalf("after the subscriptions changed: %+v", b)
	}
	if err := r.Push(id, a.SubscriptionID, false, 0, payload(t, 1, 1), c); !errors.Is(err, kerr.UnknownSubscriptionID) {
		t.Errorf("push with the old subscription id: %v, want UNKNOWN_SUBSCRIPTION_ID", err)
	}
	if err := r.Push(id, b.SubscriptionID, true, 0, nil, c); err != nil {
		t.Errorf("terminating push: %v", err)
	}
	if err := r.Push(id, b.SubscriptionID, false, 0, nil, c); !errors.Is(err, kerr.InvalidRequest) {
		t.Errorf("push after terminating: %v, want INVALID_REQUEST", err)
	}
}

// Bad pushes get Kafka's errors and keep nothing: no instance id, an
// unknown compression type, a payload over MaxBytes, one that does not
// decode.
func TestReceiverBadPushes(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1000, 0))
	r := NewReceiver(clock.Now)
	defer r.Close()
	r.SetSubscriptions([]Subscription{sub(t, "all", map[string]string{"metrics": "*", "interval.ms": "100"})})
	c := Client{ClientID: "c"}
	if err := r.Push([16]byte{}, 0, false, 0, nil, c); !errors.Is(err, kerr.InvalidRequest) {
		t.Errorf("no instance id: %v", err)
	}
	for _, tc := range []struct {
		name        string
		compression int8
		payload     []byte
		want        error
	}{
		{"compression type 9", 9, []byte{1}, kerr.UnsupportedCompressionType},
		{"over MaxBytes", 0, make([]byte, MaxBytes+1), kerr.TelemetryTooLarge},
		{"not OTLP", 0, []byte{0xff, 0xff, 0xff}, kerr.InvalidRecord},
		{"not gzip", 1, []byte("not gzip"), kerr.InvalidRecord},
	} {
		a := r.Subscriptions([16]byte{}, c)
		if err := r.Push(a.InstanceID, a.SubscriptionID, false, tc.compression, tc.payload, c); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	for _, v := range r.Clients() {
		if len(v.Series) != 0 {
			t.Errorf("client %s kept %d series from bad pushes", v.InstanceID, len(v.Series))
		}
	}
}

// The receiver is bounded: past MaxClients instances the one heard from
// longest ago is forgotten, instances are forgotten three push intervals
// (at least a minute) after their last request, and one instance keeps
// at most MaxSeries series.
func TestReceiverBounds(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1000, 0))
	r := NewReceiver(clock.Now)
	defer r.Close()
	first := r.Subscriptions([16]byte{}, Client{ClientID: "first"})
	for i := range MaxClients {
		clock.Advance(time.Millisecond)
		r.Subscriptions([16]byte{}, Client{ClientID: fmt.Sprint("c", i)})
	}
	clients := r.Clients()
	if len(clients) != MaxClients {
		t.Fatalf("%d clients kept, want %d", len(clients), MaxClients)
	}
	for _, v := range clients {
		if v.InstanceID == uuid(first.InstanceID) {
			t.Errorf("the instance heard from longest ago is still kept")
		}
	}
	clock.Advance(3*DefaultIntervalMs*time.Millisecond + time.Second)
	if n := len(r.Clients()); n != 0 {
		t.Errorf("%d clients kept three push intervals after their last request", n)
	}

	r.SetSubscriptions([]Subscription{sub(t, "all", map[string]string{"metrics": "*"})})
	c := Client{ClientID: "many"}
	a := r.Subscriptions([16]byte{}, c)
	var metrics []*metricspb.Metric
	for i := range MaxSeries + 10 {
		metrics = append(metrics, &metricspb.Metric{Name: fmt.Sprint("m", i), Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{{}}}}})
	}
	b, err := proto.Marshal(&metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: metrics}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(a.InstanceID, a.SubscriptionID, false, 0, b, c); err != nil {
		t.Fatal(err)
	}
	v := r.Clients()[0]
	if len(v.Series) != MaxSeries || v.DroppedSeries != 10 {
		t.Errorf("%d series kept, %d dropped; want %d and 10", len(v.Series), v.DroppedSeries, MaxSeries)
	}
}

// ParseSubscription refuses what config.ValidateClientMetrics refuses,
// with Kafka's words, and reads what it takes: list items trimmed, the
// interval, patterns matching whole attributes.
func TestParseSubscription(t *testing.T) {
	for _, tc := range []struct {
		cfg map[string]string
		msg string
	}{
		{map[string]string{"color": "red"}, "Unknown client metrics configuration: color"},
		{map[string]string{"interval.ms": "99"}, "Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)"},
		{map[string]string{"match": "client_colour=x"}, "Illegal client matching pattern: client_colour=x"},
		{map[string]string{"match": "client_id"}, "Illegal client matching pattern: client_id"},
	} {
		_, err := ParseSubscription("s", tc.cfg)
		if msg, _ := errmsg.Wire(err); err == nil || msg != tc.msg {
			t.Errorf("%v: %v (message %q), want %q", tc.cfg, err, msg, tc.msg)
		}
	}
	s := sub(t, "s", map[string]string{"metrics": "a, b", "interval.ms": "100", "match": "client_id=app-.*, client_software_name=java"})
	if fmt.Sprint(s.Metrics) != "[a b]" || s.IntervalMs != 100 || len(s.Match) != 2 {
		t.Errorf("parsed %+v", s)
	}
	if !s.matches(map[string]string{AttrClientID: "app-1", AttrSoftwareName: "java"}) || s.matches(map[string]string{AttrClientID: "xapp-1", AttrSoftwareName: "java"}) {
		t.Errorf("a pattern matches a whole attribute")
	}
}
