package broker

// ListPartitionReassignments (key 46), version 0.
//
// Served from this node's metadata image: the partitions with a
// reassignment under way, each with its replicas (the target replicas
// followed by those leaving) and the replicas being added and removed.
// Topics null lists every reassignment; otherwise only the partitions
// named, and unknown topics and partitions are left out, as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/wire"
)

func handleListPartitionReassignments(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListPartitionReassignmentsRequest)
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationDescribe) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, errorMessage(kerr.ClusterAuthorizationFailed)
		return resp, nil
	}

	var parts []controller.TopicPartition
	if req.Topics != nil {
		parts = []controller.TopicPartition{}
		for _, rt := range req.Topics {
			for _, index := range rt.Partitions {
				parts = append(parts, controller.TopicPartition{Topic: rt.Topic, Partition: index})
			}
		}
	}
	for _, r := range n.ctrl.ListPartitionReassignments(parts) {
		if k := len(resp.Topics) - 1; k < 0 || resp.Topics[k].Topic != r.Topic {
			st := kmsg.NewListPartitionReassignmentsResponseTopic()
			st.Topic = r.Topic
			resp.Topics = append(resp.Topics, st)
		}
		sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		sp.Partition = r.Partition
		sp.Replicas, sp.AddingReplicas, sp.RemovingReplicas = r.Replicas, orEmpty(r.Adding), orEmpty(r.Removing)
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, sp)
	}
	return resp, nil
}

// orEmpty returns s, or an empty list for nil: the protocol's arrays are
// not nullable here.
func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
