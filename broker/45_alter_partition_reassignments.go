package broker

// AlterPartitionReassignments (key 45), versions 0-1.
//
// Served from any node, as Kafka's brokers forward it to the controller:
// each partition's reassignment is a controller proposal
// (controller.AlterPartitionReassignments) with Kafka's rules. A target
// replica list starts or replaces a reassignment, which moves real data:
// the nodes added create the replica and fetch it from the leader, the
// reassignment completes once they are in the ISR, and the nodes removed
// then delete their replica. A null list cancels the reassignment under
// way. Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REPLICA_ASSIGNMENT (an empty list, a broker twice, an
// unregistered broker, a cancellation needing an unclean election),
// INVALID_REPLICATION_FACTOR when AllowReplicationFactorChange (v1) is
// false and the list's size is not the partition's replication factor,
// NO_REASSIGNMENT_IN_PROGRESS for a cancellation with none;
// NOT_CONTROLLER when the quorum has no leader. Each topic is answered once
// per time it is named, in order.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/wire"
)

func handleAlterPartitionReassignments(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = req.AllowReplicationFactorChange
	if !n.authorizeCluster(rc, kmsg.ACLOperationAlter) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, errorMessage(kerr.ClusterAuthorizationFailed)
		return resp, nil
	}
	ctx, cancel := requestContext(ctx, req.TimeoutMillis)
	defer cancel()

	var rs []controller.Reassignment
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			rs = append(rs, controller.Reassignment{Topic: rt.Topic, Partition: rp.Partition, Replicas: rp.Replicas})
		}
	}
	errs := n.ctrl.AlterPartitionReassignments(ctx, rs, req.AllowReplicationFactorChange)
	i := 0
	for _, rt := range req.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.ErrorMessage = rp.Partition, errorCode(errs[i]), errorMessage(errs[i])
			st.Partitions = append(st.Partitions, sp)
			i++
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
