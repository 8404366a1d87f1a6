package broker

// FindCoordinator (key 10), versions 0-6.
//
// Group keys (type 0) map to the leader of their __consumer_offsets
// partition, abs(hash(group)) % partitions with Kafka's hash, so a group's
// coordinator is the node holding its records. The first lookup creates
// __consumer_offsets (offsets.topic.num.partitions partitions, compacted),
// as Kafka does. Versions 4+ look up a batch of keys.
//
// Transactional ids (type 1) map the same way to __transaction_state,
// created on first use. Share groups (type 2) are not supported.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
)

func handleFindCoordinator(n *Node, ctx context.Context, _ *clientConn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = key
		c.NodeID, c.Port = -1, -1
		if err := n.findCoordinator(ctx, req.CoordinatorType, key, &c); err != nil {
			c.ErrorCode = errorCode(err)
			c.ErrorMessage = errorMessage(err)
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if req.Version < 4 {
		c := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
		resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
		resp.Coordinators = nil
	}
	return resp, nil
}

func (n *Node) findCoordinator(ctx context.Context, keyType int8, key string, c *kmsg.FindCoordinatorResponseCoordinator) error {
	var topic string
	var ensure func(context.Context) error
	switch keyType {
	case 0:
		topic, ensure = offsetsTopic, n.ensureOffsetsTopic
	case 1:
		topic, ensure = txnTopic, n.ensureTxnTopic
	default:
		return kerr.InvalidRequest
	}
	if err := ensure(ctx); err != nil {
		n.logger.Warn("find coordinator", "err", err)
		return kerr.CoordinatorNotAvailable
	}
	t, ok := n.ctrl.Image().Topic(topic)
	if !ok || len(t.Partitions) == 0 {
		return kerr.CoordinatorNotAvailable
	}
	p := t.Partitions[metadata.CoordinatorPartition(key, int32(len(t.Partitions)))]
	b, ok := n.ctrl.Image().Brokers[p.Leader]
	if !ok || p.Leader < 0 {
		return kerr.CoordinatorNotAvailable
	}
	c.NodeID, c.Host, c.Port = b.ID, b.Host, b.Port
	return nil
}
