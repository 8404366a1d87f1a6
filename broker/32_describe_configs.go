package broker

// DescribeConfigs (key 32), versions 1-4 (v0 was removed in Kafka 4,
// KIP-896).
//
// Topics (resource type 2) list every topic config, resolved as topic
// override > dynamic per-broker value > dynamic cluster default > static
// broker value (-X at start) > Kafka's default, with its source. A broker
// (type 4) named by this node's id lists every broker config so resolved;
// the empty name lists the cluster-wide dynamic defaults that are set, as
// Kafka does. Synonyms (v1+) show the chain behind a config in Kafka's
// order (ConfigHelper), and types and documentation come with v3+. A
// client metrics resource (type 16) lists interval.ms, match and metrics,
// those set with source CLIENT_METRICS_CONFIG, the others at their
// defaults, whether the resource exists or not, as Kafka does. Broker
// loggers (type 8) are not supported and answer with an error for that
// resource.
//
// A resource named more than once is described once (Kafka's ConfigHelper
// describes every repetition; see duplicates.go), and each config name once.

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/wire"
)

func handleDescribeConfigs(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	img := n.ctrl.Image()
	resources := distinct(req.Resources, func(rr kmsg.DescribeConfigsRequestResource) configResource {
		return configResource{rr.ResourceType, rr.ResourceName}
	})
	for _, rr := range resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		// Kafka's ConfigHelper answers an empty message, not a null
		// one, for a resource described and for an unknown topic.
		empty := ""
		sr.ErrorMessage = &empty
		var values []config.Value
		if err := n.configDenied(rc, kmsg.ACLOperationDescribeConfigs, rr.ResourceType, rr.ResourceName); err != nil {
			sr.ErrorCode, sr.ErrorMessage = errorCode(err), errorMessage(err)
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			t, ok := img.Topic(rr.ResourceName)
			if !ok {
				sr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				break
			}
			values = n.brokerConfig(img).TopicValues(t.Configs)
		case kmsg.ConfigResourceTypeBroker:
			if rr.ResourceName == "" {
				values = n.brokerConfig(img).DefaultValues()
				break
			}
			if _, err := strconv.ParseInt(rr.ResourceName, 10, 32); err != nil {
				sr.ErrorCode = kerr.InvalidRequest.Code
				msg := "Broker id must be an integer, but it is: " + rr.ResourceName
				sr.ErrorMessage = &msg
				break
			}
			if rr.ResourceName != strconv.Itoa(int(n.cfg.NodeID)) {
				sr.ErrorCode = kerr.InvalidRequest.Code
				msg := "Unexpected broker id, expected " + strconv.Itoa(int(n.cfg.NodeID)) + " or empty string, but received " + rr.ResourceName
				sr.ErrorMessage = &msg
				break
			}
			values = n.brokerConfig(img).BrokerValues()
		case kmsg.ConfigResourceTypeClientMetrics:
			if rr.ResourceName == "" {
				sr.ErrorCode = kerr.InvalidRequest.Code
				msg := "Client metrics subscription name must not be empty"
				sr.ErrorMessage = &msg
				break
			}
			values = config.ClientMetricsValues(img.ClientMetrics[rr.ResourceName])
		default:
			sr.ErrorCode = kerr.InvalidRequest.Code
			msg := "klog describes topic (2), broker (4) and client metrics (16) resources only"
			sr.ErrorMessage = &msg
		}
		var wanted map[string]bool
		if rr.ConfigNames != nil {
			wanted = make(map[string]bool, len(rr.ConfigNames))
			for _, name := range rr.ConfigNames {
				wanted[name] = true
			}
		}
		for _, v := range values {
			if wanted != nil && !wanted[v.Name] {
				continue
			}
			sr.Configs = append(sr.Configs, describeConfig(req, v))
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

func describeConfig(req *kmsg.DescribeConfigsRequest, v config.Value) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name = v.Name
	if !v.Sensitive && !v.Null {
		value := v.Value
		c.Value = &value
	}
	c.ReadOnly = v.ReadOnly
	c.IsSensitive = v.Sensitive
	c.Source = kmsg.ConfigSource(v.Source)
	c.IsDefault = v.Source == config.SourceDefaultConfig
	c.ConfigType = kmsg.ConfigType(v.Type)
	if req.IncludeDocumentation && v.Doc != "" {
		doc := v.Doc
		c.Documentation = &doc
	}
	if req.IncludeSynonyms {
		for _, s := range v.Synonyms {
			cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			cs.Name = s.Name
			if !v.Sensitive {
				value := s.Value
				cs.Value = &value
			}
			cs.Source = kmsg.ConfigSource(s.Source)
			c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
		}
	}
	return c
}

// configResource is a config resource as Kafka's ConfigResource compares
// them: by type and name. DescribeConfigs, AlterConfigs and
// IncrementalAlterConfigs find the resources a request names twice by it.
type configResource struct {
	typ  kmsg.ConfigResourceType
	name string
}
