package broker

// ElectLeaders (key 43), versions 0-2.
//
// Served from any node, as Kafka's brokers forward it to the controller:
// each partition's election is a controller proposal (controller.
// ElectLeaders) with Kafka's rules. PREFERRED (0) moves leadership to the
// first replica when it is unfenced and in the ISR; UNCLEAN (1) elects a
// leader for a partition without one, from outside the ISR if need be.
// Per-partition errors are Kafka's: ELECTION_NOT_NEEDED when the
// partition already has the leader asked for, PREFERRED_LEADER_NOT_AVAILABLE
// and ELIGIBLE_LEADERS_NOT_AVAILABLE when no election gives it one,
// UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition (each item
// as often as it is named), NOT_CONTROLLER when the quorum has no leader.
// With Topics null every partition is tried and those needing no
// election are left out (each topic listed, sorted, maybe empty). An
// election type other than 0 or 1 fails the request with
// INVALID_REQUEST, at the top and on every partition named.

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/wire"
)

const (
	electionPreferred int8 = 0
	electionUnclean   int8 = 1
)

func handleElectLeaders(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)

	authorized := n.authorizeCluster(rc, kmsg.ACLOperationAlter)
	if !authorized || req.ElectionType != electionPreferred && req.ElectionType != electionUnclean {
		code, msg := kerr.InvalidRequest.Code, fmt.Sprintf("Unknown election type %d", req.ElectionType)
		if !authorized {
			code, msg = kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Description
		}
		resp.ErrorCode = code
		for _, rt := range req.Topics {
			st := kmsg.NewElectLeadersResponseTopic()
			st.Topic = rt.Topic
			for _, index := range rt.Partitions {
				sp := kmsg.NewElectLeadersResponseTopicPartition()
				sp.Partition, sp.ErrorCode, sp.ErrorMessage = index, code, kmsg.StringPtr(msg)
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	unclean := req.ElectionType == electionUnclean
	ctx, cancel := requestContext(ctx, req.TimeoutMillis)
	defer cancel()

	if req.Topics == nil {
		names := n.ctrl.Image().SortedTopicNames()
		parts, errs := n.ctrl.ElectLeaders(ctx, unclean, nil)
		idx := make(map[string]int, len(names))
		for _, name := range names {
			st := kmsg.NewElectLeadersResponseTopic()
			st.Topic = name
			st.Partitions = []kmsg.ElectLeadersResponseTopicPartition{}
			idx[name] = len(resp.Topics)
			resp.Topics = append(resp.Topics, st)
		}
		for i, tp := range parts {
			k, ok := idx[tp.Topic]
			if !ok || errors.Is(errs[i], controller.ErrElectionNotNeeded) {
				continue
			}
			resp.Topics[k].Partitions = append(resp.Topics[k].Partitions, electResult(tp.Partition, errs[i]))
		}
		return resp, nil
	}
	parts := []controller.TopicPartition{}
	for _, rt := range req.Topics {
		for _, index := range rt.Partitions {
			parts = append(parts, controller.TopicPartition{Topic: rt.Topic, Partition: index})
		}
	}
	_, errs := n.ctrl.ElectLeaders(ctx, unclean, parts)
	// Each topic is answered once per time it is named, in order, as
	// Kafka does.
	i := 0
	for _, rt := range req.Topics {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = []kmsg.ElectLeadersResponseTopicPartition{}
		for _, index := range rt.Partitions {
			st.Partitions = append(st.Partitions, electResult(index, errs[i]))
			i++
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func electResult(index int32, err error) kmsg.ElectLeadersResponseTopicPartition {
	sp := kmsg.NewElectLeadersResponseTopicPartition()
	sp.Partition, sp.ErrorCode, sp.ErrorMessage = index, errorCode(err), errorMessage(err)
	return sp
}
