package broker

// AlterConfigs (key 33), versions 0-2.
//
// The legacy, non-incremental form: a topic's overrides are replaced by the
// given set (configs not named go back to their defaults). Validated and
// committed like IncrementalAlterConfigs. Broker resources are refused:
// klog's broker configs are static.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleAlterConfigs(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	ctx, cancel := requestContext(ctx, 30000)
	defer cancel()
	changed := false
	for _, rr := range req.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var err error
		if rr.ResourceType != kmsg.ConfigResourceTypeTopic {
			err = fmt.Errorf("%w: klog's broker configs are static; set them with -X at start", kerr.InvalidRequest)
		} else {
			set := make(map[string]*string, len(rr.Configs))
			for _, c := range rr.Configs {
				set[c.Name] = c.Value
			}
			err = n.ctrl.AlterTopicConfigs(ctx, rr.ResourceName, set, false, req.ValidateOnly)
		}
		if err != nil {
			sr.ErrorCode = errorCode(err)
			sr.ErrorMessage = errorMessage(err)
		} else if !req.ValidateOnly {
			changed = true
		}
		resp.Resources = append(resp.Resources, sr)
	}
	if changed {
		n.reconcile()
	}
	return resp, nil
}
