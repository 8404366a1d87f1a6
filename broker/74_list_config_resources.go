package broker

// ListConfigResources (key 74), versions 0-1 (KIP-1142; v0 was
// ListClientMetricsResources, KIP-714).
//
// Lists the config resources of the types asked for, as Kafka 4.4's
// KafkaApis does: v0 lists client metrics resources only; v1 lists the
// types it names, every supported type when it names none. The supported
// types of v1 are topics (2), brokers (4), broker loggers (8), client
// metrics (16) and groups (32); a type outside them fails the whole
// request with UNSUPPORTED_VERSION and no resources. Resources come in
// Kafka's order of types (groups, client metrics, broker loggers,
// brokers, topics), each type once however often it is named: the groups
// with dynamic configs (klog has no group configs, so none), the client
// metrics resources (those with configs), every registered broker with an endpoint on the
// request's listener (fenced ones too) as a broker logger and as a
// broker, by id, and every topic, internal ones included, by name. Kafka
// orders the names within a type by its hash maps; klog sorts them.
//
// Asking needs DESCRIBE_CONFIGS on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED.

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// configResourceTypes are the config resource types ListConfigResources
// lists, in the order Kafka answers them.
var configResourceTypes = []kmsg.ConfigResourceType{
	kmsg.ConfigResourceTypeGroupConfig,
	kmsg.ConfigResourceTypeClientMetrics,
	kmsg.ConfigResourceTypeBrokerLogger,
	kmsg.ConfigResourceTypeBroker,
	kmsg.ConfigResourceTypeTopic,
}

func handleListConfigResources(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListConfigResourcesRequest)
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	supported := configResourceTypes
	if req.Version == 0 {
		supported = []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeClientMetrics}
	}
	asked := supported
	if len(req.ResourceTypes) > 0 {
		asked = nil
		for _, t := range req.ResourceTypes {
			if !slices.Contains(supported, kmsg.ConfigResourceType(t)) {
				resp.ErrorCode = kerr.UnsupportedVersion.Code
				return resp, nil
			}
			asked = append(asked, kmsg.ConfigResourceType(t))
		}
	}
	img := n.ctrl.Image()
	for _, t := range configResourceTypes {
		if !slices.Contains(asked, t) {
			continue
		}
		for _, name := range configResourceNames(img, rc, t) {
			cr := kmsg.NewListConfigResourcesResponseConfigResource()
			cr.Name, cr.Type = name, int8(t)
			resp.ConfigResources = append(resp.ConfigResources, cr)
		}
	}
	return resp, nil
}

// configResourceNames are the names of img's config resources of type t,
// as ListConfigResources lists them to a request that came as rc did.
func configResourceNames(img *metadata.Image, rc *wire.RequestContext, t kmsg.ConfigResourceType) []string {
	var names []string
	switch t {
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		for _, id := range img.SortedBrokerIDs() {
			if _, ok := brokerEndpoint(img.Brokers[id], rc); ok {
				names = append(names, strconv.Itoa(int(id)))
			}
		}
	case kmsg.ConfigResourceTypeClientMetrics:
		names = slices.Sorted(maps.Keys(img.ClientMetrics))
	case kmsg.ConfigResourceTypeTopic:
		names = img.SortedTopicNames()
	}
	return names
}
