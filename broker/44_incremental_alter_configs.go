package broker

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// Topic configs, the dynamic configs of a broker resource (this node's
// id, or "" for the cluster-wide defaults) and the configs of a client
// metrics resource (KIP-714: interval.ms, match, metrics, checked as
// Kafka checks them; APPEND and SUBTRACT refused, as Kafka refuses them)
// are set, deleted, or — for list
// configs such as cleanup.policy — appended to or subtracted from, and
// committed through the controller; every node applies them live. Values
// are validated against the config definitions: a topic's unknown name or
// bad value gets INVALID_CONFIG with Kafka's reason, a broker's read-only
// config or bad value INVALID_REQUEST, as in Kafka 4.4. A resource named
// more than once is answered once, with INVALID_REQUEST, and not changed
// (ControllerApis.handleIncrementalAlterConfigs).

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleIncrementalAlterConfigs(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	resp.Resources = changeEach(n, ctx, 30000, req.ValidateOnly, req.Resources,
		func(rr *kmsg.IncrementalAlterConfigsRequestResource) configResource {
			return configResource{rr.ResourceType, rr.ResourceName}
		}, errDuplicateResource,
		func(ctx context.Context, rr *kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
			if err := n.configDenied(rc, kmsg.ACLOperationAlterConfigs, rr.ResourceType, rr.ResourceName); err != nil {
				return err
			}
			return n.incrementalAlter(ctx, rr, validateOnly)
		},
		func(rr *kmsg.IncrementalAlterConfigsRequestResource, err error) kmsg.IncrementalAlterConfigsResponseResource {
			sr := kmsg.NewIncrementalAlterConfigsResponseResource()
			sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
			sr.ErrorCode, sr.ErrorMessage = errorCode(err), errorMessage(err)
			return sr
		})
	return resp, nil
}

// alterable checks, for AlterConfigs and IncrementalAlterConfigs, that a
// resource's configs can change here: a topic's, or a broker's named by
// this node's id or "" (the cluster-wide defaults), with Kafka's answers
// (ConfigAdminManager): a client sends a broker's change to that broker.
func (n *Node) alterable(rt kmsg.ConfigResourceType, name string) error {
	switch rt {
	case kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeClientMetrics:
		return nil
	case kmsg.ConfigResourceTypeBroker:
		if name == "" {
			return nil
		}
		id, err := strconv.ParseInt(name, 10, 32)
		if err != nil {
			return errmsg.Withf(fmt.Errorf("%w: broker resource %q is not a node id", kerr.InvalidRequest, name),
				"Node id must be an integer, but it is: %s", name)
		}
		if int32(id) != n.cfg.NodeID {
			return errmsg.Withf(fmt.Errorf("%w: broker %s's configs are changed on that broker", kerr.InvalidRequest, name),
				"Unexpected broker id, expected %d, but received %s", n.cfg.NodeID, name)
		}
		return nil
	}
	return fmt.Errorf("%w: klog changes the configs of topics (2), brokers (4) and client metrics (16) only", kerr.InvalidRequest)
}

// incrementalAlter applies one IncrementalAlterConfigs resource's
// operations to a topic's config overrides or a broker resource's dynamic
// configs.
func (n *Node) incrementalAlter(ctx context.Context, rr *kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	if err := n.alterable(rr.ResourceType, rr.ResourceName); err != nil {
		return err
	}
	if rr.ResourceType == kmsg.ConfigResourceTypeClientMetrics {
		set, err := incrementalChanges(rr.Configs, nil, false)
		if err != nil {
			return err
		}
		return n.ctrl.AlterClientMetricsConfigs(ctx, rr.ResourceName, set, true, validateOnly)
	}
	// The configs as the active controller has them, not as this node's
	// image may still lag behind it.
	if err := n.ctrl.CatchUp(ctx); err != nil {
		return err
	}
	current, err := n.currentConfig(n.ctrl.Image(), rr)
	if err != nil {
		return err
	}
	isBroker := rr.ResourceType == kmsg.ConfigResourceTypeBroker
	set, err := incrementalChanges(rr.Configs, current, isBroker)
	if err != nil {
		return err
	}
	if isBroker {
		return n.ctrl.AlterBrokerConfigs(ctx, rr.ResourceName, set, true, validateOnly)
	}
	return n.ctrl.AlterTopicConfigs(ctx, rr.ResourceName, set, true, validateOnly)
}

// currentConfigFunc looks up a config of one resource: its current value,
// its definition, and whether klog knows it.
type currentConfigFunc func(name string) (string, config.Def, bool)

// currentConfig looks up the configs of the topic or broker resource rr
// names, as img has them; a topic img lacks is UNKNOWN_TOPIC_OR_PARTITION.
func (n *Node) currentConfig(img *metadata.Image, rr *kmsg.IncrementalAlterConfigsRequestResource) (currentConfigFunc, error) {
	if rr.ResourceType == kmsg.ConfigResourceTypeBroker {
		b := n.brokerConfig(img)
		if rr.ResourceName == "" {
			// The default resource's list as the cluster default
			// makes it, not as this node's own values do.
			b, _ = n.static.WithDynamic(img.BrokerConfigs[""], nil)
		}
		return func(name string) (string, config.Def, bool) {
			v, ok := b.BrokerValue(name)
			d, _ := config.LookupBroker(name)
			return v.Value, d, ok
		}, nil
	}
	t, ok := img.Topic(rr.ResourceName)
	if !ok {
		return nil, errmsg.Withf(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", rr.ResourceName)
	}
	b := n.brokerConfig(img)
	return func(name string) (string, config.Def, bool) {
		v, ok := b.TopicValue(t.Configs, name)
		d, _ := config.LookupTopic(name)
		return v, d, ok
	}, nil
}

// incrementalChanges turns a resource's config operations into the values
// to set (nil: delete), each named once; append and subtract start from
// the current value of a list config.
func incrementalChanges(configs []kmsg.IncrementalAlterConfigsRequestResourceConfig, current currentConfigFunc, isBroker bool) (map[string]*string, error) {
	set := make(map[string]*string, len(configs))
	for _, c := range configs {
		if _, dup := set[c.Name]; dup {
			return nil, fmt.Errorf("%w: config %s appears more than once", kerr.InvalidRequest, c.Name)
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return nil, nullValue(c.Name)
			}
			v := *c.Value
			set[c.Name] = &v
		case kmsg.IncrementalAlterConfigOpDelete:
			set[c.Name] = nil
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			v, err := appendOrSubtract(c, current, isBroker)
			if err != nil {
				return nil, err
			}
			set[c.Name] = &v
		default:
			return nil, fmt.Errorf("%w: unknown config operation %d", kerr.InvalidRequest, c.Op)
		}
	}
	return set, nil
}

// appendOrSubtract applies an APPEND or SUBTRACT operation to the current
// value of a list config and returns the new value; a config klog knows
// that is not a list is INVALID_CONFIG, in Kafka's words. Without current
// (a client metrics resource) every config is refused so, as Kafka
// refuses them, its list configs too.
func appendOrSubtract(c kmsg.IncrementalAlterConfigsRequestResourceConfig, current currentConfigFunc, isBroker bool) (string, error) {
	var cur string
	d, known := config.Def{Type: config.TypeString}, true
	if current != nil {
		cur, d, known = current(c.Name)
	}
	if known && d.Type != config.TypeList {
		op := "APPEND"
		if c.Op == kmsg.IncrementalAlterConfigOpSubtract {
			op = "SUBTRACT"
		}
		err := fmt.Errorf("%w: %s is a %s config, not a list", kerr.InvalidConfig, c.Name, d.Type)
		if isBroker {
			// Kafka words it differently for a broker.
			return "", errmsg.Withf(err, "Config value %s is not allowed for config key: %s", strings.ToLower(op), c.Name)
		}
		return "", errmsg.Withf(err, "Can't %s to key %s because its type is not LIST.", op, c.Name)
	}
	items := splitList(cur)
	var arg []string
	if c.Value != nil {
		arg = splitList(*c.Value)
	}
	if c.Op == kmsg.IncrementalAlterConfigOpAppend {
		for _, a := range arg {
			if !slices.Contains(items, a) {
				items = append(items, a)
			}
		}
	} else {
		items = slices.DeleteFunc(items, func(it string) bool { return slices.Contains(arg, it) })
	}
	return strings.Join(items, ","), nil
}

// nullValue refuses a config set to null, in Kafka's code and words
// (ControllerApis), its spacing included.
func nullValue(name string) error {
	return errmsg.Withf(fmt.Errorf("%w: null value for %s", kerr.InvalidRequest, name), "Null value not supported for : %s", name)
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
