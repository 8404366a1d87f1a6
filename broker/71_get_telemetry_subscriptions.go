package broker

// GetTelemetrySubscriptions (key 71), version 0 (KIP-714).
//
// A client asks which of its metrics to push, how often, compressed how
// and how large at most; a zero client instance id asks for a new id. The
// answer comes from the CLIENT_METRICS subscriptions matching the client
// (broker/telemetry): none matching asks for no metrics, every 5 minutes.
// Kafka serves this only with a ClientTelemetry plugin configured; klog
// is its own receiver and always serves it. Any principal may ask, as in
// Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/telemetry"
	"github.com/klogdev/klog/broker/wire"
)

func handleGetTelemetrySubscriptions(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	a := n.telemetry.Subscriptions(req.ClientInstanceID, telemetryClient(rc))
	if a.Err != nil {
		resp.ErrorCode = errorCode(a.Err)
		return resp, nil
	}
	resp.ClientInstanceID, resp.SubscriptionID = a.InstanceID, a.SubscriptionID
	resp.AcceptedCompressionTypes, resp.PushIntervalMillis = a.Compression, a.PushIntervalMs
	resp.TelemetryMaxBytes, resp.DeltaTemporality = a.MaxBytes, a.DeltaTemporality
	resp.RequestedMetrics = a.Metrics
	if resp.RequestedMetrics == nil {
		resp.RequestedMetrics = []string{}
	}
	return resp, nil
}

// telemetryClient is what the receiver matches subscriptions against.
func telemetryClient(rc *wire.RequestContext) telemetry.Client {
	if rc == nil {
		return telemetry.Client{}
	}
	return telemetry.Client{ClientID: rc.ClientID, SoftwareName: rc.ClientSoftwareName, SoftwareVersion: rc.ClientSoftwareVersion, Remote: rc.Remote}
}
