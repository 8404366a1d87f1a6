package telemetry

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// Kind is how a series' value reads.
type Kind string

const (
	// Gauge: the last value pushed.
	Gauge Kind = "gauge"
	// Counter: a sum; with delta temporality (what klog asks for) the
	// pushed deltas added up since the client's first push, with
	// cumulative temporality the last total pushed.
	Counter Kind = "counter"
	// Histogram: the count and sum of observations, added up as a
	// counter's.
	Histogram Kind = "histogram"
)

// sample is one data point of a pushed payload.
type sample struct {
	series string // name, then its attributes as {k=v,...}
	name   string
	attrs  string
	kind   Kind
	value  float64
	count  uint64
	delta  bool
}

// decode reads an OTLP MetricsData payload into its data points. Summary
// and exponential histogram points are left out (Kafka's clients send
// neither).
func decode(payload []byte) ([]sample, error) {
	var md metricspb.MetricsData
	if err := proto.Unmarshal(payload, &md); err != nil {
		return nil, fmt.Errorf("decode OTLP metrics: %w", err)
	}
	var out []sample
	for _, rm := range md.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				out = appendMetric(out, m)
			}
		}
	}
	return out, nil
}

func appendMetric(out []sample, m *metricspb.Metric) []sample {
	name := m.GetName()
	number := func(kind Kind, delta bool, p *metricspb.NumberDataPoint) sample {
		v := p.GetAsDouble()
		if _, ok := p.GetValue().(*metricspb.NumberDataPoint_AsInt); ok {
			v = float64(p.GetAsInt())
		}
		attrs := attributes(p.GetAttributes())
		return sample{series: name + attrs, name: name, attrs: attrs, kind: kind, value: v, delta: delta}
	}
	switch {
	case m.GetGauge() != nil:
		for _, p := range m.GetGauge().GetDataPoints() {
			out = append(out, number(Gauge, false, p))
		}
	case m.GetSum() != nil:
		s := m.GetSum()
		delta := s.GetAggregationTemporality() == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
		for _, p := range s.GetDataPoints() {
			out = append(out, number(Counter, delta, p))
		}
	case m.GetHistogram() != nil:
		h := m.GetHistogram()
		delta := h.GetAggregationTemporality() == metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
		for _, p := range h.GetDataPoints() {
			attrs := attributes(p.GetAttributes())
			out = append(out, sample{series: name + attrs, name: name, attrs: attrs, kind: Histogram, value: p.GetSum(), count: p.GetCount(), delta: delta})
		}
	}
	return out
}

// attributes renders a data point's attributes as {k=v,...}, sorted by
// key; "" for none.
func attributes(kvs []*commonpb.KeyValue) string {
	if len(kvs) == 0 {
		return ""
	}
	parts := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		parts = append(parts, kv.GetKey()+"="+anyValue(kv.GetValue()))
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	}
	return ""
}
