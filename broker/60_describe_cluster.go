package broker

// DescribeCluster (key 60), versions 0-2.
//
// Brokers, cluster id and controller from the metadata image. v1 adds the
// endpoint type (1 = brokers, the only kind klog answers for); v2 adds
// fenced brokers when asked. Brokers are named at their endpoint of the
// listener the request came on; one without it is left out.
//
// Not implemented: authorized operations (no ACLs).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeCluster(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		return resp, nil
	}
	resp.EndpointType = 1
	img := n.ctrl.Image()
	resp.ClusterID = img.ClusterID
	resp.ControllerID = n.controllerID(img)
	for _, id := range img.SortedBrokerIDs() {
		b := img.Brokers[id]
		e, ok := brokerEndpoint(b, rc)
		if b.Fenced && !req.IncludeFencedBrokers || !ok {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port = b.ID, e.Host, e.Port
		rb.IsFenced = b.Fenced
		if b.Rack != "" {
			rack := b.Rack
			rb.Rack = &rack
		}
		resp.Brokers = append(resp.Brokers, rb)
	}
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = 0
		if n.authorizeCluster(rc, kmsg.ACLOperationDescribe) {
			resp.ClusterAuthorizedOperations = n.authorizedOperations(rc, kmsg.ACLResourceTypeCluster, auth.ClusterName)
		}
	}
	return resp, nil
}
