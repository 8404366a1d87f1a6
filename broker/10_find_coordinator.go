package broker

// FindCoordinator (key 10), versions 0-6.
//
// Group keys (type 0) map to the leader of their __consumer_offsets
// partition, abs(hash(group)) % partitions with Kafka's hash, so a group's
// coordinator is the node holding its records; any node answers with that
// leader, COORDINATOR_NOT_AVAILABLE while the partition has no live
// leader. As in Kafka (KafkaApis.getCoordinator) the answer comes from the
// metadata alone: a coordinator still loading its partition answers the
// group's own requests COORDINATOR_LOAD_IN_PROGRESS, and a node asked for
// a group it does not coordinate answers NOT_COORDINATOR. The first lookup creates
// __consumer_offsets (offsets.topic.num.partitions partitions, compacted),
// as Kafka does. Versions 4+ look up a batch of keys, each distinct key
// answered once (Kafka answers every repetition; see duplicates.go).
//
// Transactional ids (type 1) map the same way to __transaction_state,
// created on first use. Share groups (type 2) are not supported. The
// coordinator is named at its endpoint of the listener the request came
// on.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleFindCoordinator(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := distinct(req.CoordinatorKeys, identity[string])
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = key
		c.NodeID, c.Port = -1, -1
		if err := n.authorizeCoordinatorKey(rc, req.CoordinatorType, key); err != nil {
			c.ErrorCode, c.ErrorMessage = errorCode(err), errorMessage(err)
		} else if err := n.findCoordinator(ctx, rc, req.CoordinatorType, key, &c); err != nil {
			c.ErrorCode = errorCode(err)
			c.ErrorMessage = errorMessage(err)
		} else {
			empty := "" // Kafka's answer: Errors.NONE's message
			c.ErrorMessage = &empty
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

// Coordinator key types of FindCoordinator (kmsg names none).
const (
	coordinatorKeyGroup       int8 = 0
	coordinatorKeyTransaction int8 = 1
)

func (n *Node) findCoordinator(ctx context.Context, rc *wire.RequestContext, keyType int8, key string, c *kmsg.FindCoordinatorResponseCoordinator) error {
	var it *internalTopic
	switch keyType {
	case coordinatorKeyGroup:
		it = n.offsets
	case coordinatorKeyTransaction:
		it = n.txnState
	default:
		return kerr.InvalidRequest
	}
	if err := n.ensureInternalTopic(ctx, it); err != nil {
		n.logger.Warn("find coordinator", "err", err)
		return kerr.CoordinatorNotAvailable
	}
	img := n.ctrl.Image()
	t, ok := img.Topic(it.name)
	if !ok || len(t.Partitions) == 0 {
		return kerr.CoordinatorNotAvailable
	}
	p := t.Partitions[it.partitionFor(img, n.settings(), key)]
	b, ok := img.Brokers[p.Leader]
	e, hasListener := brokerEndpoint(b, rc)
	if !ok || p.Leader < 0 || b.Fenced || !hasListener {
		// As Kafka's metadata cache, which finds no endpoint for a leader
		// that is not alive, or without the request's listener.
		return kerr.CoordinatorNotAvailable
	}
	c.NodeID, c.Host, c.Port = b.ID, e.Host, e.Port
	return nil
}

// authorizeCoordinatorKey checks that rc's principal may DESCRIBE the
// group or transactional id whose coordinator it looks for.
func (n *Node) authorizeCoordinatorKey(rc *wire.RequestContext, typ int8, key string) error {
	switch typ {
	case 0:
		if !n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, key) {
			return kerr.GroupAuthorizationFailed
		}
	case 1:
		if !n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, key) {
			return kerr.TransactionalIDAuthorizationFailed
		}
	}
	return nil
}
