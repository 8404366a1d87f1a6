package broker

// PushTelemetry (key 72), version 0 (KIP-714).
//
// A client pushes its metrics, OTLP-encoded and perhaps compressed, at
// the interval its subscription set. broker/telemetry checks the push as
// Kafka's ClientMetricsManager does (a stale subscription id, a push
// within the interval, too large, an unknown compression) and keeps what
// it decodes; a payload that does not decode is INVALID_RECORD, as
// Kafka answers a plugin's failure to take it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/telemetry"
	"github.com/klogdev/klog/broker/wire"
)

func handlePushTelemetry(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.PushTelemetryRequest)
	resp := req.ResponseKind().(*kmsg.PushTelemetryResponse)
	err := n.telemetry.Push(req.ClientInstanceID, req.SubscriptionID, req.Terminating, req.CompressionType, req.Metrics, telemetryClient(rc))
	resp.ErrorCode = errorCode(err)
	return resp, nil
}

// TelemetryClients are the client instances the node's telemetry
// receiver keeps, with what they pushed, for the admin API.
func (n *Node) TelemetryClients() []telemetry.ClientView { return n.telemetry.Clients() }
