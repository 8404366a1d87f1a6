package broker

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// Topic configs are set, deleted (back to the default), or — for list
// configs such as cleanup.policy — appended to or subtracted from, and
// committed through the controller. Values are validated against the config
// definitions (INVALID_CONFIG with the reason). Dynamic broker configs are
// not supported: klog's broker configs are static (-X at start). A resource
// named more than once is answered once, with INVALID_REQUEST, and not
// changed (ControllerApis.handleIncrementalAlterConfigs).

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func handleIncrementalAlterConfigs(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	resp.Resources = changeEach(n, ctx, 30000, req.ValidateOnly, req.Resources,
		func(rr *kmsg.IncrementalAlterConfigsRequestResource) configResource {
			return configResource{rr.ResourceType, rr.ResourceName}
		}, errDuplicateResource,
		n.incrementalAlter,
		func(rr *kmsg.IncrementalAlterConfigsRequestResource, err error) kmsg.IncrementalAlterConfigsResponseResource {
			sr := kmsg.NewIncrementalAlterConfigsResponseResource()
			sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
			sr.ErrorCode, sr.ErrorMessage = errorCode(err), errorMessage(err)
			return sr
		})
	return resp, nil
}

// alterableResource refuses, for AlterConfigs and IncrementalAlterConfigs, a
// config change to any resource but a topic.
func alterableResource(rt kmsg.ConfigResourceType) error {
	if rt != kmsg.ConfigResourceTypeTopic {
		return fmt.Errorf("%w: klog's broker configs are static; set them with -X at start", kerr.InvalidRequest)
	}
	return nil
}

// incrementalAlter applies one IncrementalAlterConfigs resource's
// operations to a topic's config overrides.
func (n *Node) incrementalAlter(ctx context.Context, rr *kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if err := alterableResource(rr.ResourceType); err != nil {
		return err
	}
	t, ok := n.ctrl.Image().Topic(rr.ResourceName)
	if !ok {
		return kerr.UnknownTopicOrPartition
	}
	set := make(map[string]*string, len(rr.Configs))
	for _, c := range rr.Configs {
		if _, dup := set[c.Name]; dup {
			return fmt.Errorf("%w: config %s appears more than once", kerr.InvalidRequest, c.Name)
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return fmt.Errorf("%w: null value for %s", kerr.InvalidConfig, c.Name)
			}
			v := *c.Value
			set[c.Name] = &v
		case kmsg.IncrementalAlterConfigOpDelete:
			set[c.Name] = nil
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract: // on list configs
			cur, _ := n.broker.Load().TopicValue(t.Configs, c.Name)
			items := splitList(cur)
			var arg []string
			if c.Value != nil {
				arg = splitList(*c.Value)
			}
			if c.Op == kmsg.IncrementalAlterConfigOpAppend {
				for _, a := range arg {
					if !containsString(items, a) {
						items = append(items, a)
					}
				}
			} else {
				kept := items[:0]
				for _, it := range items {
					if !containsString(arg, it) {
						kept = append(kept, it)
					}
				}
				items = kept
			}
			v := strings.Join(items, ",")
			set[c.Name] = &v
		default:
			return fmt.Errorf("%w: unknown config operation %d", kerr.InvalidRequest, c.Op)
		}
	}
	return n.ctrl.AlterTopicConfigs(ctx, rr.ResourceName, set, true, validateOnly)
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
