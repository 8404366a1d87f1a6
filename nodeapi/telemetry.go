package nodeapi

import (
	"context"
	"net/http"
	"time"
)

// PathTelemetry is GET: the client instances that asked the node for
// their telemetry subscription (KIP-714), with what they pushed
// (Telemetry).
const PathTelemetry = "/v1/telemetry"

// Telemetry is GET /v1/telemetry.
type Telemetry struct {
	NodeID int32 `json:"node_id"`
	// Clients are the first MaxListed by client id, then instance id;
	// Count is all of them.
	Clients []TelemetryClient `json:"clients"`
	Count   int               `json:"count"`
}

// TelemetryClient is one client instance.
type TelemetryClient struct {
	// InstanceID is the id the node gave the instance, as Kafka prints
	// ids.
	InstanceID      string `json:"instance_id"`
	ClientID        string `json:"client_id"`
	SoftwareName    string `json:"software_name,omitempty"`
	SoftwareVersion string `json:"software_version,omitempty"`
	// Remote is the address of its last request, host:port.
	Remote string `json:"remote"`
	// SubscriptionID, PushIntervalMs and Metrics are its subscription:
	// the metric name prefixes it was asked for ("*" for all; none when
	// no subscription matches it).
	SubscriptionID int32    `json:"subscription_id"`
	PushIntervalMs int32    `json:"push_interval_ms"`
	Metrics        []string `json:"metrics"`
	Pushes         int64    `json:"pushes"`
	// LastPush is when it last pushed; nil if it has not.
	LastPush    *time.Time `json:"last_push,omitempty"`
	Terminating bool       `json:"terminating"`
	// DroppedSeries counts the series not kept: an instance keeps at
	// most 2000.
	DroppedSeries int64             `json:"dropped_series"`
	Series        []TelemetrySeries `json:"series"`
}

// TelemetrySeries is one metric an instance pushed.
type TelemetrySeries struct {
	Name string `json:"name"`
	// Attrs are the data point's attributes, {key=value,...}; empty for
	// none.
	Attrs string `json:"attrs,omitempty"`
	// Kind is gauge (Value is the last value pushed), counter (Value is
	// the total) or histogram (Count and Value are the number and sum of
	// the observations).
	Kind  string    `json:"kind"`
	Value float64   `json:"value"`
	Count uint64    `json:"count,omitempty"`
	At    time.Time `json:"at"`
}

// Telemetry is GET /v1/telemetry.
func (c *Client) Telemetry(ctx context.Context) (Telemetry, error) {
	var out Telemetry
	return out, c.call(ctx, http.MethodGet, PathTelemetry, nil, &out)
}
