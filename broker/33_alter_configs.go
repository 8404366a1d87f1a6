package broker

// AlterConfigs (key 33), versions 0-2.
//
// The legacy, non-incremental form: a topic's overrides, a broker
// resource's dynamic configs (this node's id, or "" for the cluster-wide
// defaults) or a client metrics resource's configs are replaced by the
// given set (configs not named go back to
// their defaults); a null value is refused with INVALID_REQUEST, as Kafka
// refuses it. Validated and committed like IncrementalAlterConfigs. A
// resource named more than once is answered once, with INVALID_REQUEST,
// and not changed (ControllerApis.handleLegacyAlterConfigs).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleAlterConfigs(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	resp.Resources = changeEach(n, ctx, 30000, req.ValidateOnly, req.Resources,
		func(rr *kmsg.AlterConfigsRequestResource) configResource {
			return configResource{rr.ResourceType, rr.ResourceName}
		}, errDuplicateResource,
		func(ctx context.Context, rr *kmsg.AlterConfigsRequestResource, validateOnly bool) error {
			if err := n.configDenied(rc, kmsg.ACLOperationAlterConfigs, rr.ResourceType, rr.ResourceName); err != nil {
				return err
			}
			return n.alterConfigs(ctx, rr, validateOnly)
		},
		func(rr *kmsg.AlterConfigsRequestResource, err error) kmsg.AlterConfigsResponseResource {
			sr := kmsg.NewAlterConfigsResponseResource()
			sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
			sr.ErrorCode, sr.ErrorMessage = errorCode(err), errorMessage(err)
			return sr
		})
	return resp, nil
}

// alterConfigs replaces a topic's config overrides, or a broker
// resource's dynamic configs, with the configs of one AlterConfigs
// resource.
func (n *Node) alterConfigs(ctx context.Context, rr *kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	if err := n.alterable(rr.ResourceType, rr.ResourceName); err != nil {
		return err
	}
	set := make(map[string]*string, len(rr.Configs))
	for _, c := range rr.Configs {
		if c.Value == nil {
			return nullValue(c.Name)
		}
		set[c.Name] = c.Value
	}
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeBroker:
		return n.ctrl.AlterBrokerConfigs(ctx, rr.ResourceName, set, false, validateOnly)
	case kmsg.ConfigResourceTypeClientMetrics:
		return n.ctrl.AlterClientMetricsConfigs(ctx, rr.ResourceName, set, false, validateOnly)
	}
	return n.ctrl.AlterTopicConfigs(ctx, rr.ResourceName, set, false, validateOnly)
}
