package broker

// ShareGroupHeartbeat (key 76), version 1.
//
// Share groups (KIP-932), served by the group coordinator (broker/group):
// members join with epoch 0 naming their topics, heartbeat with the epoch
// they were given and leave with -1; the simple assignor spreads each
// topic's partitions over its subscribers and shares a partition between
// members when they outnumber the partitions. Each member takes its target
// assignment on its next heartbeat (nothing is revoked first: partitions
// are shared). A member that leaves or whose session lapses
// (group.share.session.timeout.ms) loses its share sessions and the
// records it held go back to the others. Requests are checked as Kafka
// 4.4 checks them (INVALID_REQUEST with its words, GROUP_ID_NOT_FOUND for a
// group of another type, FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED at
// group.share.max.size). With the share.version feature below 1 the answer
// is UNSUPPORTED_VERSION. Membership is in memory only, as a consumer
// group's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleShareGroupHeartbeat(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error) {
	r := req.(*kmsg.ShareGroupHeartbeatRequest)
	code := kerr.UnsupportedVersion.Code
	if n.shareGroupsEnabled() {
		code = n.heartbeatDenied(rc, r.GroupID, r.SubscribedTopicNames)
	}
	if code != 0 {
		resp := r.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = code, errorMessage(kerr.ErrorForCode(code))
		return resp, nil
	}
	return n.groups.ShareGroupHeartbeat(groupContext(ctx, rc), r), nil
}
