package adminapi

import (
	"net/http"

	"github.com/klogdev/klog/nodeapi"
)

// telemetry is GET /v1/telemetry: the client instances the node's
// telemetry receiver keeps.
func (h *handler) telemetry(w http.ResponseWriter, _ *http.Request) {
	clients := h.node.TelemetryClients()
	out := nodeapi.Telemetry{NodeID: h.node.ID(), Count: len(clients), Clients: []nodeapi.TelemetryClient{}}
	for _, c := range clients[:min(len(clients), nodeapi.MaxListed)] {
		tc := nodeapi.TelemetryClient{
			InstanceID: c.InstanceID, ClientID: c.ClientID, SoftwareName: c.SoftwareName, SoftwareVersion: c.SoftwareVersion,
			Remote: c.Remote, SubscriptionID: c.SubscriptionID, PushIntervalMs: c.PushIntervalMs, Metrics: c.Metrics,
			Pushes: c.Pushes, Terminating: c.Terminating, DroppedSeries: c.DroppedSeries,
			Series: make([]nodeapi.TelemetrySeries, 0, len(c.Series)),
		}
		if tc.Metrics == nil {
			tc.Metrics = []string{}
		}
		if !c.LastPush.IsZero() {
			at := c.LastPush.UTC()
			tc.LastPush = &at
		}
		for _, s := range c.Series {
			tc.Series = append(tc.Series, nodeapi.TelemetrySeries{Name: s.Name, Attrs: s.Attrs, Kind: string(s.Kind), Value: s.Value, Count: s.Count, At: s.At.UTC()})
		}
		out.Clients = append(out.Clients, tc)
	}
	writeJSON(w, out)
}
