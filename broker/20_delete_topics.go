package broker

// DeleteTopics (key 20), versions 1-6 (v0 was removed in Kafka 4, KIP-896).
//
// Topics are named (v0-5) or, from v6, named or identified by topic id.
// Deletion is committed to the metadata log; every node then removes the
// topic's partition directories. delete.topic.enable=false refuses with
// TOPIC_DELETION_DISABLED. Internal topics are deleted like any other, as
// Kafka's controller does (ReplicationControlManager.deleteTopic has no
// exception for them; only an authorizer can refuse): their coordinator
// unloads them, and the next FindCoordinator creates them afresh with the
// configured partitions. A name, or an id, named more than once is answered
// once, with INVALID_REQUEST, and not deleted (ControllerApis.deleteTopics);
// a topic named both by name and by id is deleted once, and its other entry
// answers that it is unknown.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

func handleDeleteTopics(n *Node, ctx context.Context, _ *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	ctx, cancel := requestContext(ctx, req.TimeoutMillis)
	defer cancel()

	type target struct {
		name *string
		id   [16]byte
	}
	// One per item, allocated once: growing it would allocate several
	// times its size, for a request of many items.
	targets := make([]target, 0, len(req.Topics)+len(req.TopicNames))
	if req.Version >= 6 {
		for _, t := range req.Topics {
			targets = append(targets, target{t.Topic, t.TopicID})
		}
	} else {
		for i := range req.TopicNames {
			targets = append(targets, target{name: &req.TopicNames[i]})
		}
	}
	// Sized as it grows: a request may name one topic a million times.
	names := make(occurrences[string])
	ids := make(occurrences[[16]byte])
	for _, tg := range targets {
		if tg.name != nil {
			names.add(*tg.name)
		} else {
			ids.add(tg.id)
		}
	}
	// Topic ids resolved as the active controller has them; without a
	// controller to catch up with, each DeleteTopic below answers so.
	_ = n.ctrl.CatchUp(ctx)
	img := n.ctrl.Image()
	deleted := false
	for _, tg := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = tg.name, tg.id
		var seen occurrence
		var dup error
		if tg.name != nil {
			seen, dup = names.next(*tg.name), errDuplicateTopic
		} else {
			seen, dup = ids.next(tg.id), errDuplicateTopicID
		}
		switch seen {
		case repeated:
			continue
		case firstOfMany:
			st.ErrorCode, st.ErrorMessage = errorCode(dup), errorMessage(dup)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		name := ""
		if tg.name != nil {
			name = *tg.name
			if t, ok := img.Topic(name); ok {
				st.TopicID = t.ID
			}
		} else if t, ok := img.TopicByID(tg.id); ok {
			name = t.Name
			st.Topic = &t.Name
		} else {
			st.ErrorCode, st.ErrorMessage = kerr.UnknownTopicID.Code, errorMessage(kerr.UnknownTopicID)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		var err error
		switch {
		case !n.settings().DeleteTopicEnable:
			err = kerr.TopicDeletionDisabled
		default:
			err = n.ctrl.DeleteTopic(ctx, name)
		}
		if err != nil {
			st.ErrorCode = errorCode(err)
			st.ErrorMessage = errorMessage(err)
		} else {
			deleted = true
		}
		resp.Topics = append(resp.Topics, st)
	}
	if deleted {
		n.reconcile()
	}
	return resp, nil
}
