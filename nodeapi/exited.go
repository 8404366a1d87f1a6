package nodeapi

import (
	"context"
	"net/http"
	"strconv"
)

// PathBrokerExited is POST: broker {id}'s process has exited, as the
// supervisor of a local cluster (klog up -n) saw it; the node asked has
// the metadata quorum fence that broker at once (BrokerExited), without
// waiting for its session (broker.session.timeout.ms) to expire, so that
// its partitions get new leaders. It answers once the fencing is
// committed; 404 for a broker not registered, 503 while no quorum can
// commit it.
const PathBrokerExited = "/v1/cluster/brokers/{id}/exited"

// BrokerExitedPath is PathBrokerExited for broker id.
func BrokerExitedPath(id int32) string {
	return "/v1/cluster/brokers/" + strconv.Itoa(int(id)) + "/exited"
}

// BrokerExited is the answer to POST PathBrokerExited.
type BrokerExited struct {
	// NodeID is the node that was asked, Broker the broker fenced.
	NodeID int32 `json:"node_id"`
	Broker int32 `json:"broker"`
}

// BrokerExited is POST PathBrokerExited for broker id.
func (c *Client) BrokerExited(ctx context.Context, id int32) (BrokerExited, error) {
	var out BrokerExited
	return out, c.call(ctx, http.MethodPost, BrokerExitedPath(id), nil, &out)
}
