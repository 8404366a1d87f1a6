package broker

import (
	"context"
	"net"
	"slices"
	"time"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/coordinator"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/wire"
)

// offsetsTopic is the internal topic holding committed offsets and group
// metadata, in Kafka's record schemas.
const offsetsTopic = "__consumer_offsets"

// newOffsetsTopic describes __consumer_offsets: its keys are group ids, and
// the partitions this node leads are loaded into the group coordinator.
func (n *Node) newOffsetsTopic() *internalTopic {
	return &internalTopic{
		name:        offsetsTopic,
		settings:    func(s *config.Settings) config.InternalTopicSettings { return s.OffsetsTopic },
		compression: "producer",
		handoff: &coordinator.Handoff{
			Topic:       offsetsTopic,
			Coordinator: "group",
			Load:        func(ctx context.Context, p, _ int32) error { return n.groups.LoadPartition(ctx, p) },
			Unload:      func(p int32) { n.groups.UnloadPartition(p) },
			Logger:      n.logger,
		},
	}
}

// minInitialRebalanceDelay is the shortest wait for more members before a
// new classic group's first generation, whatever
// group.initial.rebalance.delay.ms says (klog's default is 0). Completed
// inside the first JoinGroup, a consumer started a few milliseconds after
// another forced a second generation, which waits for the first consumer
// to rejoin (librdkafka rejoins from the application's poll: up to
// max.poll.interval.ms). Kafka completes even an undelayed first join from
// its timer (GroupMetadataManager.prepareRebalance), which leaves a window
// of about a millisecond, and a lone member's first join took it 20 to
// 180 ms on a loaded machine; klog's window is wider on purpose and its
// lone join about as fast. Each member that joins during the wait extends
// it by as much, up to the rebalance timeout, as Kafka's initial delayed
// join does.
const minInitialRebalanceDelay = 50 * time.Millisecond

// newGroupCoordinator builds the node's group coordinator from the broker's
// group.* and offsets.* configs.
func (n *Node) newGroupCoordinator() *group.Coordinator {
	s := n.settings()
	return group.New(group.Config{
		Logger:                        n.logger.With("component", "group"),
		Store:                         n.internalStore(n.offsets),
		Partitions:                    s.OffsetsTopic.Partitions,
		PartitionCount:                func() int32 { return n.offsets.partitions(n.ctrl.Image(), n.settings()) },
		Topics:                        n.topicInfos,
		InitialRebalanceDelay:         max(s.Group.InitialRebalanceDelay, minInitialRebalanceDelay),
		MinSessionTimeout:             s.Group.MinSessionTimeout,
		MaxSessionTimeout:             s.Group.MaxSessionTimeout,
		MaxSize:                       int(s.Group.MaxSize),
		OffsetsRetention:              s.Group.OffsetsRetention,
		OffsetsRetentionCheckInterval: s.Group.OffsetsRetentionCheckInterval,
		WriteTimeout:                  s.Group.OffsetsCommitTimeout,
		ConsumerSessionTimeout:        s.Group.ConsumerSessionTimeout,
		ConsumerHeartbeatInterval:     s.Group.ConsumerHeartbeatInterval,
		ConsumerAssignors:             slices.Clone(s.Group.ConsumerAssignors),
		ConsumerMaxSize:               int(s.Group.ConsumerMaxSize),
		ShareSessionTimeout:           s.Group.Share.SessionTimeout,
		ShareHeartbeatInterval:        s.Group.Share.HeartbeatInterval,
		ShareMaxSize:                  int(s.Group.Share.MaxSize),
		OnShareMemberGone:             n.shareMemberGone,
		OnRebalance:                   n.recordRebalance,
		Now:                           n.clock.Now,
	})
}

// groupContext carries the client id and host a group member is shown
// with (DescribeGroups), in Kafka's "/address" form, and the principal
// the admin API shows it with.
func groupContext(ctx context.Context, rc *wire.RequestContext) context.Context {
	host := rc.Remote
	if h, _, err := net.SplitHostPort(rc.Remote); err == nil {
		host = h
	}
	return group.WithPrincipal(group.WithClient(ctx, rc.ClientID, "/"+host), rc.Principal)
}
