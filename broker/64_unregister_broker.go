package broker

// UnregisterBroker (key 64), version 0.
//
// Removes a broker's registration from the metadata, as Kafka 4.4's
// controller does whether the broker is alive, fenced or gone for good:
// the broker leaves Metadata and DescribeCluster, its replicas stay in
// the partitions' replica lists as offline replicas, it leaves every ISR
// (but as a last member) and its leaderships pass to other replicas. A
// broker still running stays unregistered, as Kafka's does (its
// heartbeats refused), until it restarts and registers again. Served by
// any node, forwarded to the active controller; the answer comes once the
// leaderships and ISRs have moved, bounded by the quorum's apply timeout.
// A broker not registered is BROKER_ID_NOT_REGISTERED ("Broker ID N is
// not currently registered"). Asking needs ALTER on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED. `kafka-cluster unregister --id N` sends
// it.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/wire"
)

func handleUnregisterBroker(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.UnregisterBrokerRequest)
	resp := req.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationAlter) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, errorMessage(kerr.ClusterAuthorizationFailed)
		return resp, nil
	}
	err := n.ctrl.UnregisterBroker(ctx, req.BrokerID)
	if errors.Is(err, controller.ErrUnknownBroker) {
		err = errmsg.Withf(err, "Broker ID %d is not currently registered", req.BrokerID)
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), errorMessage(err)
	}
	return resp, nil
}
