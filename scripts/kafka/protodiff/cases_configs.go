package main

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's cases of dynamic broker configs and of the synonyms
// DescribeConfigs shows: per broker (resource "0", the node id on both
// sides) and cluster-wide (resource ""). A case that sets a config
// deletes it again, so that later cases see the brokers' own settings.

// brokerConfigNames are the broker configs the describe cases ask for:
// neither side sets them at start (scripts/kafka/kafka.sh and klog up
// set others, such as min.insync.replicas, which Kafka's storage format
// makes a cluster-level dynamic default).
var brokerConfigNames = []string{
	"log.retention.ms", "log.retention.minutes", "log.retention.hours",
	"log.segment.bytes", "log.cleanup.policy", "message.max.bytes", "compression.type",
	"log.flush.interval.ms", "log.flush.scheduler.interval.ms", "log.roll.ms", "log.roll.hours",
	"num.partitions", "auto.create.topics.enable",
	"max.connections", "max.connections.per.ip", "producer.id.expiration.ms",
}

// describeConfigsOf describes one resource's named configs with synonyms.
func describeConfigsOf(typ kmsg.ConfigResourceType, name string, configs ...string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, configs
	req.Resources = append(req.Resources, rr)
	return req
}

// alterOp is one IncrementalAlterConfigs operation.
type alterOp struct {
	op    kmsg.IncrementalAlterConfigOp
	name  string
	value *string
}

func setOp(name, value string) alterOp {
	return alterOp{kmsg.IncrementalAlterConfigOpSet, name, &value}
}
func deleteOp(name string) alterOp { return alterOp{kmsg.IncrementalAlterConfigOpDelete, name, nil} }

// incrementalAlterOf is an IncrementalAlterConfigs of one resource.
func incrementalAlterOf(typ kmsg.ConfigResourceType, name string, validateOnly bool, ops ...alterOp) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Op, c.Name, c.Value = o.op, o.name, o.value
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	return req
}

// alterConfigsOf is a legacy AlterConfigs of one resource: its configs
// become exactly pairs (name, value, ...).
func alterConfigsOf(typ kmsg.ConfigResourceType, name string, pairs ...string) *kmsg.AlterConfigsRequest {
	req := kmsg.NewPtrAlterConfigsRequest()
	rr := kmsg.NewAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	for i := 0; i+1 < len(pairs); i += 2 {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = pairs[i], kmsg.StringPtr(pairs[i+1])
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	return req
}

// waitBrokerConfig waits until broker resource resource ("0" or "")
// describes config name with value want, or, want nil, without a value of
// that resource's own (Kafka applies a committed change asynchronously,
// from its metadata log).
func (s *side) waitBrokerConfig(resource, name string, want *string) error {
	own := kmsg.ConfigSourceDynamicBrokerConfig
	if resource == "" {
		own = kmsg.ConfigSourceDynamicDefaultBrokerConfig
	}
	return s.waitConfig(kmsg.ConfigResourceTypeBroker, resource, name, own, want)
}

// waitConfig waits until a resource describes config name with a synonym
// of source own of value want (a sensitive one as "<sensitive>"), or,
// want nil, with none. 15 s at most.
func (s *side) waitConfig(typ kmsg.ConfigResourceType, resource, name string, own kmsg.ConfigSource, want *string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := s.do(describeConfigsOf(typ, resource, name))
		if err != nil {
			return err
		}
		var got *string
		for _, r := range resp.(*kmsg.DescribeConfigsResponse).Resources {
			for _, c := range r.Configs {
				for _, syn := range c.ConfigSynonyms {
					if syn.Name == name && syn.Source == own {
						got = syn.Value
						if got == nil {
							got = kmsg.StringPtr("<sensitive>")
						}
					}
				}
			}
		}
		if (want == nil && got == nil) || (want != nil && got != nil && *got == *want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s resource %q config %s never became %v", errSetup, s.name, resource, name, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// changeSteps runs each step in turn and collects the responses of those
// that send a request (await steps keep none).
func changeSteps(s *side, steps ...func(s *side) (kmsg.Response, error)) ([]kmsg.Response, error) {
	var out []kmsg.Response
	for _, step := range steps {
		resp, err := step(s)
		if err != nil {
			return out, err
		}
		if resp != nil {
			out = append(out, resp)
		}
	}
	return out, nil
}

// send is a step that sends req and keeps its response.
func send(req kmsg.Request) func(s *side) (kmsg.Response, error) {
	return func(s *side) (kmsg.Response, error) { return s.do(req) }
}

// await is a step that waits for a broker config, keeping no response.
func await(resource, name string, want *string) func(s *side) (kmsg.Response, error) {
	return func(s *side) (kmsg.Response, error) { return nil, s.waitBrokerConfig(resource, name, want) }
}

func configCases() []testCase {
	const broker = kmsg.ConfigResourceTypeBroker
	const topic = kmsg.ConfigResourceTypeTopic
	str := kmsg.StringPtr
	return []testCase{
		{"describeconfigs-broker-synonyms", noSetup(func(*side) kmsg.Request {
			return describeConfigsOf(broker, "0", brokerConfigNames...)
		})},
		{"describeconfigs-broker-default-none-set", noSetup(func(*side) kmsg.Request {
			return describeConfigsOf(broker, "", brokerConfigNames...)
		})},
		{"describeconfigs-broker-not-integer", noSetup(func(*side) kmsg.Request {
			return describeConfigsOf(broker, "x", "log.retention.ms")
		})},
		{"incrementalalter-broker-set-delete", func(s *side) ([]kmsg.Response, error) {
			return changeSteps(s,
				send(incrementalAlterOf(broker, "0", false, setOp("log.retention.ms", "5678"), setOp("log.cleanup.policy", "compact"))),
				await("0", "log.retention.ms", str("5678")),
				await("0", "log.cleanup.policy", str("compact")),
				send(describeConfigsOf(broker, "0", brokerConfigNames...)),
				send(describeConfigsOf(broker, "", brokerConfigNames...)),
				send(incrementalAlterOf(broker, "0", false, deleteOp("log.retention.ms"), deleteOp("log.cleanup.policy"))),
				await("0", "log.retention.ms", nil),
				await("0", "log.cleanup.policy", nil),
				send(describeConfigsOf(broker, "0", "log.retention.ms", "log.cleanup.policy")))
		}},
		{"incrementalalter-broker-default-set-delete", func(s *side) ([]kmsg.Response, error) {
			return changeSteps(s,
				send(incrementalAlterOf(broker, "", false, setOp("log.retention.ms", "1234"), setOp("log.segment.bytes", "2000000"))),
				await("", "log.retention.ms", str("1234")),
				await("", "log.segment.bytes", str("2000000")),
				await("0", "log.segment.bytes", nil),
				send(describeConfigsOf(broker, "", brokerConfigNames...)),
				send(describeConfigsOf(broker, "0", brokerConfigNames...)),
				send(incrementalAlterOf(broker, "", false, deleteOp("log.retention.ms"), deleteOp("log.segment.bytes"))),
				await("", "log.retention.ms", nil),
				await("", "log.segment.bytes", nil),
				send(describeConfigsOf(broker, "", brokerConfigNames...)))
		}},
		{"describeconfigs-topic-synonyms-after-broker-default", func(s *side) ([]kmsg.Response, error) {
			t := s.topic("dc-syn")
			if err := s.createTopic(t, 1, "segment.ms", "3600000"); err != nil {
				return nil, err
			}
			return changeSteps(s,
				send(describeConfigsOf(topic, t, "retention.ms", "segment.bytes", "segment.ms", "cleanup.policy", "flush.ms")),
				send(incrementalAlterOf(broker, "", false, setOp("log.retention.ms", "1234"), setOp("log.segment.bytes", "2000000"), setOp("log.roll.ms", "7200000"))),
				send(incrementalAlterOf(broker, "0", false, setOp("log.retention.ms", "5678"))),
				await("", "log.retention.ms", str("1234")),
				await("", "log.segment.bytes", str("2000000")),
				await("", "log.roll.ms", str("7200000")),
				await("0", "log.retention.ms", str("5678")),
				send(describeConfigsOf(topic, t, "retention.ms", "segment.bytes", "segment.ms", "cleanup.policy", "flush.ms")),
				send(incrementalAlterOf(broker, "0", false, deleteOp("log.retention.ms"))),
				send(incrementalAlterOf(broker, "", false, deleteOp("log.retention.ms"), deleteOp("log.segment.bytes"), deleteOp("log.roll.ms"))),
				await("0", "log.retention.ms", nil),
				await("", "log.retention.ms", nil),
				await("", "log.segment.bytes", nil),
				await("", "log.roll.ms", nil),
				send(describeConfigsOf(topic, t, "retention.ms", "segment.bytes", "segment.ms")))
		}},
		{"incrementalalter-broker-read-only", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "0", false, setOp("broker.id", "5"))
		})},
		{"incrementalalter-broker-default-read-only", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "", false, setOp("log.retention.hours", "5"))
		})},
		{"incrementalalter-broker-invalid-value", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "0", false, setOp("log.retention.ms", "abc"))
		})},
		{"incrementalalter-broker-default-invalid-value", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "", false, setOp("min.insync.replicas", "0"))
		})},
		{"incrementalalter-broker-validate-only", func(s *side) ([]kmsg.Response, error) {
			return changeSteps(s,
				send(incrementalAlterOf(broker, "", true, setOp("log.retention.ms", "1234"))),
				send(describeConfigsOf(broker, "", "log.retention.ms")))
		}},
		{"incrementalalter-broker-unknown-name", func(s *side) ([]kmsg.Response, error) {
			return changeSteps(s,
				send(incrementalAlterOf(broker, "0", false, setOp("no.such.config", "1"))),
				await("0", "no.such.config", str("<sensitive>")),
				send(describeConfigsOf(broker, "0", "no.such.config")),
				send(incrementalAlterOf(broker, "0", false, deleteOp("no.such.config"))),
				await("0", "no.such.config", nil))
		}},
		{"incrementalalter-broker-delete-read-only", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "0", false, deleteOp("broker.id"))
		})},
		{"incrementalalter-broker-other-id", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "7", false, setOp("log.retention.ms", "5"))
		})},
		{"incrementalalter-broker-not-integer", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "x", false, setOp("log.retention.ms", "5"))
		})},
		{"incrementalalter-broker-subtract-not-list", noSetup(func(*side) kmsg.Request {
			return incrementalAlterOf(broker, "0", false, alterOp{kmsg.IncrementalAlterConfigOpSubtract, "log.retention.ms", str("5")})
		})},
		{"incrementalalter-topic-append-not-list", withTopic("iac-app", func(_ *side, t string) kmsg.Request {
			return incrementalAlterOf(topic, t, false, alterOp{kmsg.IncrementalAlterConfigOpAppend, "retention.ms", str("5")})
		})},
		{"incrementalalter-topic-append-subtract-list", one(func(s *side) (kmsg.Request, error) {
			t := s.topic("iac-list")
			if err := s.createTopic(t, 1); err != nil {
				return nil, err
			}
			if _, err := s.do(incrementalAlterOf(topic, t, false, alterOp{kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", str("compact")})); err != nil {
				return nil, err
			}
			if err := s.waitConfig(topic, t, "cleanup.policy", kmsg.ConfigSourceDynamicTopicConfig, str("delete,compact")); err != nil {
				return nil, err
			}
			if _, err := s.do(incrementalAlterOf(topic, t, false, alterOp{kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", str("delete")})); err != nil {
				return nil, err
			}
			if err := s.waitConfig(topic, t, "cleanup.policy", kmsg.ConfigSourceDynamicTopicConfig, str("compact")); err != nil {
				return nil, err
			}
			return describeConfigsOf(topic, t, "cleanup.policy"), nil
		})},
		{"alterconfigs-broker-read-only", noSetup(func(*side) kmsg.Request {
			return alterConfigsOf(broker, "0", "broker.id", "5")
		})},
		{"alterconfigs-broker-invalid-value", noSetup(func(*side) kmsg.Request {
			return alterConfigsOf(broker, "", "log.retention.ms", "abc")
		})},
		// On the node's own resource: clearing the cluster-wide one
		// would also clear Kafka's min.insync.replicas default.
		{"alterconfigs-broker-set-clear", func(s *side) ([]kmsg.Response, error) {
			return changeSteps(s,
				send(alterConfigsOf(broker, "0", "log.retention.ms", "1234", "compression.type", "zstd")),
				await("0", "log.retention.ms", str("1234")),
				await("0", "compression.type", str("zstd")),
				send(describeConfigsOf(broker, "0", brokerConfigNames...)),
				send(alterConfigsOf(broker, "0")),
				await("0", "log.retention.ms", nil),
				await("0", "compression.type", nil))
		}},
		{"alterconfigs-topic-null-value", withTopic("ac-null", func(_ *side, t string) kmsg.Request {
			req := alterConfigsOf(topic, t, "retention.ms", "")
			req.Resources[0].Configs[0].Value = nil
			return req
		})},
		{"alterconfigs-broker-null-value", noSetup(func(*side) kmsg.Request {
			req := alterConfigsOf(broker, "0", "log.retention.ms", "")
			req.Resources[0].Configs[0].Value = nil
			return req
		})},
		{"alterconfigs-topic-unknown-config", withTopic("ac-unk", func(_ *side, t string) kmsg.Request {
			return alterConfigsOf(topic, t, "no.such.config", "1")
		})},
	}
}
