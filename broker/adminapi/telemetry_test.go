package adminapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"google.golang.org/protobuf/proto"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// A client's telemetry over the Kafka protocol: GetTelemetrySubscriptions
// gives it an instance id and a subscription, it pushes an OTLP payload
// (gzip-compressed), and what it pushed is in GET /v1/telemetry and
// /metrics; a push with a subscription id not its own is
// UNKNOWN_SUBSCRIPTION_ID and keeps nothing.
func TestClientTelemetry(t *testing.T) {
	n := brokertest.Start(t)
	ctx := testkit.Context(t)
	cl := n.Client(kgo.ClientID("telemetry-app"), kgo.SoftwareNameAndVersion("apache-kafka-java", "4.4.0"))
	get, err := kmsg.NewPtrGetTelemetrySubscriptionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if get.ErrorCode != 0 || get.ClientInstanceID == ([16]byte{}) || get.PushIntervalMillis != 300000 || !get.DeltaTemporality || get.TelemetryMaxBytes != 1<<20 || len(get.RequestedMetrics) != 0 {
		t.Fatalf("GetTelemetrySubscriptions: %+v", get)
	}

	// A subscription, as kafka-client-metrics --alter sets it: the
	// client's next request is answered with it at once.
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "producers"
	for k, v := range map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000", "match": "client_software_name=apache-kafka-java"} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		res.Configs = append(res.Configs, c)
	}
	alter.Resources = append(alter.Resources, res)
	if ar, err := alter.RequestWith(ctx, cl); err != nil || ar.Resources[0].ErrorCode != 0 {
		t.Fatalf("set the subscription: %v %+v", err, ar)
	}
	subscribed := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	subscribed.ClientInstanceID = get.ClientInstanceID
	testkit.WaitFor(t, "the subscription in the client's answer", func() (bool, string) {
		got, err := subscribed.RequestWith(ctx, cl)
		if err != nil || got.ErrorCode != 0 {
			return false, fmt.Sprint(err, got)
		}
		get = got
		return len(got.RequestedMetrics) == 1 && got.RequestedMetrics[0] == "org.apache.kafka.producer." && got.PushIntervalMillis == 1000, fmt.Sprintf("%+v", got)
	})
	md := &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{
		{Name: "org.apache.kafka.producer.record.queue.time.max", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{
			{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 12.5}},
		}}}},
	}}}}}}
	raw, err := proto.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(raw)
	w.Close()

	push := kmsg.NewPtrPushTelemetryRequest()
	push.ClientInstanceID, push.SubscriptionID, push.CompressionType, push.Metrics = get.ClientInstanceID, get.SubscriptionID+1, 1, gz.Bytes()
	resp, err := push.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != kerr.UnknownSubscriptionID.Code {
		t.Fatalf("push with another subscription id: %v %+v, want UNKNOWN_SUBSCRIPTION_ID", err, resp)
	}
	// The refused push counts as the one the interval allowed after
	// GetTelemetrySubscriptions; ask again, as a client told its
	// subscription is unknown does.
	n.AdvanceClock(time.Second)
	again := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	again.ClientInstanceID = get.ClientInstanceID
	if get, err = again.RequestWith(ctx, cl); err != nil || get.ErrorCode != 0 || get.ClientInstanceID != again.ClientInstanceID {
		t.Fatalf("ask again: %v %+v", err, get)
	}
	push.ClientInstanceID, push.SubscriptionID = get.ClientInstanceID, get.SubscriptionID
	if resp, err = push.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("push: %v %+v", err, resp)
	}

	tm, err := nodeapi.NewClient(n.AdminAddr(), 0).Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tm.Count != 1 || len(tm.Clients) != 1 {
		t.Fatalf("telemetry %+v, want one client", tm)
	}
	c := tm.Clients[0]
	if c.PushIntervalMs != 1000 || len(c.Metrics) != 1 || c.ClientID != "telemetry-app" || c.SoftwareName != "apache-kafka-java" || c.Pushes != 1 || c.LastPush == nil ||
		len(c.Series) != 1 || c.Series[0].Name != "org.apache.kafka.producer.record.queue.time.max" || c.Series[0].Kind != "gauge" || c.Series[0].Value != 12.5 {
		t.Fatalf("client %+v", c)
	}
	m := scrape(t, n.AdminAddr())
	if v := m.must(t, "klog_client_metric", "client_id", "telemetry-app", "name", "org.apache.kafka.producer.record.queue.time.max"); v != 12.5 {
		t.Errorf("klog_client_metric = %v, want 12.5", v)
	}
	if v := m.must(t, "klog_client_telemetry_pushes_total", "client_id", "telemetry-app"); v != 1 {
		t.Errorf("pushes = %v, want 1", v)
	}
}
