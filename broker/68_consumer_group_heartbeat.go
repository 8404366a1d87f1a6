package broker

// ConsumerGroupHeartbeat (key 68), versions 0-1.
//
// The consumer group protocol of KIP-848, served by the group coordinator
// (broker/group): member and group epochs, server-side assignment (uniform
// and range assignors), incremental assignment and revocation.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleConsumerGroupHeartbeat(n *Node, ctx context.Context, cc *clientConn, req kmsg.Request) (kmsg.Response, error) {
	return n.groups.ConsumerGroupHeartbeat(cc.groupContext(ctx), req.(*kmsg.ConsumerGroupHeartbeatRequest)), nil
}
