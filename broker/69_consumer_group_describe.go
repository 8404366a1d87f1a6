package broker

// ConsumerGroupDescribe (key 69), versions 0-1.
//
// Served by the group coordinator (broker/group): KIP-848 groups with their
// epochs, assignor, members, and current and target assignments.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleConsumerGroupDescribe(n *Node, ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ConsumerGroupDescribeRequest)
	r.Groups = distinct(r.Groups, identity[string])
	return n.groups.ConsumerGroupDescribe(ctx, r), nil
}
