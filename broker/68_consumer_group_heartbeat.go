package broker

// ConsumerGroupHeartbeat (key 68), versions 0-1.
//
// The consumer group protocol of KIP-848, served by the group coordinator
// (broker/group): member and group epochs, server-side assignment (uniform
// and range assignors), incremental assignment and revocation. Requests are
// checked as Kafka 4.4 checks them: from v1 (KIP-1082) the client makes the
// member id, so an empty one is INVALID_REQUEST, and a join sends an empty,
// not null, list of owned partitions; a heartbeat to a group that does not
// exist is GROUP_ID_NOT_FOUND.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleConsumerGroupHeartbeat(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.ConsumerGroupHeartbeat(groupContext(ctx, rc), req.(*kmsg.ConsumerGroupHeartbeatRequest)), nil
}
