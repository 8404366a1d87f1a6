package broker

// CreateTopics (key 19), versions 2-7 (v0-1 were removed in Kafka 4,
// KIP-896).
//
// Each topic goes through the controller (validated against Kafka's name
// rules, partition and replication factor limits and config definitions,
// then committed to the metadata log). -1 partitions or replication factor
// take num.partitions / default.replication.factor; a manual replica
// assignment is honoured. ValidateOnly (v1+) checks without creating. From
// v5 the response carries the resolved partition count, replication factor
// and configs (an empty list, not null, for a topic refused, as Kafka's);
// v7 adds the topic id, a random one for a validate-only creation. A name
// repeated in one request is answered once, with INVALID_REQUEST, and not
// created, as in Kafka (ControllerApis.createTopics).
//
// As in Kafka (ControllerApis.createTopics), __cluster_metadata is refused
// with INVALID_REQUEST, while a client may create __consumer_offsets or
// __transaction_state itself, with any partition count: the coordinators
// hash over the count the topic has. A creation that would put more than
// klog.max.partitions partition replicas on a node is refused with
// POLICY_VIOLATION (Kafka's answer to a creation too large for one
// controller batch) before its partitions are placed.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleCreateTopics(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	ctx, cancel := requestContext(ctx, req.TimeoutMillis)
	defer cancel()

	names := make(occurrences[string], len(req.Topics))
	for _, rt := range req.Topics {
		names.add(rt.Topic)
	}
	created := false
	// CREATE on the cluster, or on each topic (TOPIC_AUTHORIZATION_FAILED).
	createAll := n.visible(rc, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeCluster, auth.ClusterName)
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		switch names.next(rt.Topic) {
		case repeated:
			continue
		case firstOfMany:
			st.ErrorCode, st.ErrorMessage = errorCode(errDuplicateTopic), errorMessage(errDuplicateTopic)
			st.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
			resp.Topics = append(resp.Topics, st)
			continue
		}
		spec := controller.TopicSpec{
			Name:              rt.Topic,
			Partitions:        rt.NumPartitions,
			ReplicationFactor: rt.ReplicationFactor,
			Configs:           make(map[string]string, len(rt.Configs)),
		}
		for _, a := range rt.ReplicaAssignment {
			spec.Assignment = append(spec.Assignment, controller.PartitionReplicas{Partition: a.Partition, Replicas: a.Replicas})
		}
		for _, c := range rt.Configs {
			if c.Value != nil {
				spec.Configs[c.Name] = *c.Value
			} else {
				spec.NullConfigs = append(spec.NullConfigs, c.Name)
			}
		}
		var t *metadata.Topic
		err := error(kerr.TopicAuthorizationFailed)
		if createAll || n.authorize(rc, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeTopic, rt.Topic) {
			t, err = n.ctrl.CreateTopic(ctx, spec, req.ValidateOnly)
		}
		if err != nil {
			st.ErrorCode = errorCode(err)
			st.ErrorMessage = errorMessage(err)
			st.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
			resp.Topics = append(resp.Topics, st)
			continue
		}
		created = created || !req.ValidateOnly
		n.describeCreated(rc, t, &st)
		resp.Topics = append(resp.Topics, st)
	}
	if created {
		n.settle(ctx)
	}
	return resp, nil
}

// requestContext bounds an admin request by its timeout field, at least one
// second and at most a minute.
func requestContext(ctx context.Context, timeoutMillis int32) (context.Context, context.CancelFunc) {
	d := time.Duration(timeoutMillis) * time.Millisecond
	if d < time.Second {
		d = time.Second
	}
	if d > time.Minute {
		d = time.Minute
	}
	return context.WithTimeout(ctx, d)
}

// changeEach is the frame of the admin requests that change metadata one
// resource at a time (AlterConfigs, CreatePartitions,
// IncrementalAlterConfigs): bounded by the request's timeout, it runs
// change for each resource and puts its error in the response's shape with
// answer. A resource whose key appears more than once is not changed and
// answered once, with dup (an INVALID_REQUEST), as Kafka's ControllerApis
// answers them. When any resource changed (never in a validate-only
// request) the node settles, once, before the request answers, so that
// the change is in effect when the client learns of it.
func changeEach[Req, Resp any, K comparable](n *Node, ctx context.Context, timeoutMillis int32, validateOnly bool, resources []Req,
	key func(r *Req) K, dup error,
	change func(ctx context.Context, r *Req, validateOnly bool) error, answer func(r *Req, err error) Resp) []Resp {
	ctx, cancel := requestContext(ctx, timeoutMillis)
	defer cancel()
	keys := make(occurrences[K], len(resources))
	for i := range resources {
		keys.add(key(&resources[i]))
	}
	var out []Resp
	changed := false
	for i := range resources {
		switch keys.next(key(&resources[i])) {
		case repeated:
			continue
		case firstOfMany:
			out = append(out, answer(&resources[i], dup))
			continue
		}
		err := change(ctx, &resources[i], validateOnly)
		if err == nil && !validateOnly {
			changed = true
		}
		out = append(out, answer(&resources[i], err))
	}
	if changed {
		n.settle(ctx)
	}
	return out
}

// describeCreated fills a created topic's answer: its id, partitions,
// replication factor and configs, these only when rc's principal may
// DESCRIBE_CONFIGS it (otherwise -1 partitions and replication factor,
// and TOPIC_AUTHORIZATION_FAILED in ConfigErrorCode, as Kafka answers).
func (n *Node) describeCreated(rc *wire.RequestContext, t *metadata.Topic, st *kmsg.CreateTopicsResponseTopic) {
	st.TopicID = t.ID
	st.NumPartitions = int32(len(t.Partitions))
	if len(t.Partitions) > 0 {
		st.ReplicationFactor = int16(len(t.Partitions[0].Replicas))
	}
	st.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
	if !n.visible(rc, kmsg.ACLOperationDescribeConfigs, kmsg.ACLResourceTypeTopic, t.Name) {
		// Nothing of what was created is told, as Kafka answers.
		st.NumPartitions, st.ReplicationFactor = -1, -1
		st.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
		return
	}
	for _, v := range n.brokerConfig(n.ctrl.Image()).TopicValues(t.Configs) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = v.Name
		if !v.Null && !v.Sensitive {
			value := v.Value
			c.Value = &value
		}
		c.ReadOnly = v.ReadOnly
		c.Source = int8(v.Source)
		c.IsSensitive = v.Sensitive
		st.Configs = append(st.Configs, c)
	}
}
