package broker

// AlterConfigs (key 33), versions 0-2.
//
// The legacy, non-incremental form: a topic's overrides are replaced by the
// given set (configs not named go back to their defaults). Validated and
// committed like IncrementalAlterConfigs. Broker resources are refused:
// klog's broker configs are static. A resource named more than once is
// answered once, with INVALID_REQUEST, and not changed
// (ControllerApis.handleLegacyAlterConfigs).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterConfigs(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	resp.Resources = changeEach(n, ctx, 30000, req.ValidateOnly, req.Resources,
		func(rr *kmsg.AlterConfigsRequestResource) configResource {
			return configResource{rr.ResourceType, rr.ResourceName}
		}, errDuplicateResource,
		n.alterConfigs,
		func(rr *kmsg.AlterConfigsRequestResource, err error) kmsg.AlterConfigsResponseResource {
			sr := kmsg.NewAlterConfigsResponseResource()
			sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
			sr.ErrorCode, sr.ErrorMessage = errorCode(err), errorMessage(err)
			return sr
		})
	return resp, nil
}

// alterConfigs replaces a topic's config overrides with the configs of one
// AlterConfigs resource.
func (n *Node) alterConfigs(ctx context.Context, rr *kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	if err := alterableResource(rr.ResourceType); err != nil {
		return err
	}
	set := make(map[string]*string, len(rr.Configs))
	for _, c := range rr.Configs {
		set[c.Name] = c.Value
	}
	return n.ctrl.AlterTopicConfigs(ctx, rr.ResourceName, set, false, validateOnly)
}
