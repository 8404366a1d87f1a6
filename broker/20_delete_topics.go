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

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleDeleteTopics(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	ctx, cancel := requestContext(ctx, req.TimeoutMillis)
	defer cancel()

	targets := deleteTargets(req)
	counts := countDeleteTargets(targets)
	// Topic ids resolved as the active controller has them; without a
	// controller to catch up with, each DeleteTopic below answers so.
	_ = n.ctrl.CatchUp(ctx)
	img := n.ctrl.Image()
	deleted := false
	for _, tg := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = tg.name, tg.id
		switch seen, dup := counts.next(tg); seen {
		case repeated:
			continue
		case firstOfMany:
			st.ErrorCode, st.ErrorMessage = errorCode(dup), errorMessage(dup)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if n.deleteTopic(ctx, rc, img, tg, &st) {
			deleted = true
		}
		resp.Topics = append(resp.Topics, st)
	}
	if deleted {
		n.settle(ctx)
	}
	return resp, nil
}

// deleteTarget is one topic a DeleteTopics request names: by name, or,
// with name nil, by id.
type deleteTarget struct {
	name *string
	id   [16]byte
}

// deleteTargets lists the topics req names, in request order: its Topics
// from v6, its TopicNames before.
func deleteTargets(req *kmsg.DeleteTopicsRequest) []deleteTarget {
	// One per item, allocated once: growing it would allocate several
	// times its size, for a request of many items.
	targets := make([]deleteTarget, 0, len(req.Topics)+len(req.TopicNames))
	if req.Version >= 6 {
		for _, t := range req.Topics {
			targets = append(targets, deleteTarget{t.Topic, t.TopicID})
		}
	} else {
		for i := range req.TopicNames {
			targets = append(targets, deleteTarget{name: &req.TopicNames[i]})
		}
	}
	return targets
}

// deleteCounts counts how often a DeleteTopics request names each topic
// name and each topic id.
type deleteCounts struct {
	names occurrences[string]
	ids   occurrences[[16]byte]
}

// countDeleteTargets counts the names and ids of targets.
func countDeleteTargets(targets []deleteTarget) deleteCounts {
	// Sized as it grows: a request may name one topic a million times.
	c := deleteCounts{names: make(occurrences[string]), ids: make(occurrences[[16]byte])}
	for _, tg := range targets {
		if tg.name != nil {
			c.names.add(*tg.name)
		} else {
			c.ids.add(tg.id)
		}
	}
	return c
}

// next says how this appearance of tg's name or id stands among its
// repeats, and the error that answers a repeated one.
func (c deleteCounts) next(tg deleteTarget) (occurrence, error) {
	if tg.name != nil {
		return c.names.next(*tg.name), errDuplicateTopic
	}
	return c.ids.next(tg.id), errDuplicateTopicID
}

// deleteTopic deletes the topic tg names, as img resolves its name or
// id, and answers it in st; it reports whether the topic was deleted.
func (n *Node) deleteTopic(ctx context.Context, rc *wire.RequestContext, img *metadata.Image, tg deleteTarget, st *kmsg.DeleteTopicsResponseTopic) bool {
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
		return false
	}
	_, exists := img.Topic(name)
	var err error
	switch {
	case !n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name),
		exists && !n.authorize(rc, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeTopic, name):
		// Kafka tells a topic the principal may not see from one it may
		// not delete by neither: both are TOPIC_AUTHORIZATION_FAILED,
		// answered with only what the request named (no id for a name,
		// no name for an id).
		st.Topic, st.TopicID = tg.name, tg.id
		err = kerr.TopicAuthorizationFailed
	case !n.settings().DeleteTopicEnable:
		err = kerr.TopicDeletionDisabled
	default:
		err = n.ctrl.DeleteTopic(ctx, name)
	}
	if err != nil {
		st.ErrorCode = errorCode(err)
		st.ErrorMessage = errorMessage(err)
		return false
	}
	return true
}
