package broker

// Metadata (key 3), versions 0-13.
//
// Answers from the controller's current metadata image: brokers, cluster
// id, controller, and for each requested topic (all topics when the list is
// null, or empty before v1) its id, partitions, leaders, leader epochs,
// replicas, ISR and offline replicas (on fenced or unregistered brokers).
// Topics can be asked for by id from v10.
//
// Auto-creation, as Kafka does it: a topic requested by name that does not
// exist is created with num.partitions and default.replication.factor when
// the request allows it (always before v4) and auto.create.topics.enable is
// true. Creation goes through the controller and the partitions are opened
// before the answer, so the client sees a ready topic at once instead of
// LEADER_NOT_AVAILABLE. Internal topics (names starting with "__") are never
// auto-created by clients. A topic deleted since it was last asked for is
// answered UNKNOWN_TOPIC_OR_PARTITION the first time, as Kafka's first
// answer is, and created by the next request (deletedtopics.go): a client
// that checks a deletion right after DeleteTopics does not see the topic
// made again.
//
// The requested topics are a set, as in Kafka: a topic named twice (even
// the empty name, answered INVALID_TOPIC_EXCEPTION) is answered once.
//
// Authorization, as Kafka's: a topic the principal may not DESCRIBE is
// left out of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED
// when named (with no id, so that its existence does not show; asked
// for by id, with the id). A missing topic is auto-created only with
// CREATE on the cluster or on the topic, else answered
// TOPIC_AUTHORIZATION_FAILED. The topics' authorized operations (and the
// cluster's, v8-10) are given when asked for.

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// autoCreateTimeout bounds the wait for a topic auto-created by Metadata.
const autoCreateTimeout = 10 * time.Second

// formingWait bounds how long an auto-creation that lacks brokers waits
// for the voters of a cluster still forming to register.
const formingWait = 5 * time.Second

func handleMetadata(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	img := n.ctrl.Image()

	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	allowAuto := (req.Version < 4 || req.AllowAutoTopicCreation) && n.settings().AutoCreateTopics
	requested, denied := n.authorizeMetadata(rc, img, distinct(req.Topics, metadataTopicKey), allowAuto)

	if !allTopics && allowAuto {
		img = n.autoCreateRequested(ctx, img, requested)
	}

	if !allTopics && n.lagsFor(img, requested) {
		// A topic unknown here may have been created through another
		// node a moment ago: a client that heard of it there must not be
		// told here that it does not exist. Catch up with the active
		// controller first (a no-op on the leader and a single node),
		// bounded, and answer from whatever this node then has.
		cctx, cancel := context.WithTimeout(ctx, metadataCatchUpTimeout)
		if err := n.ctrl.CatchUp(cctx); err == nil {
			img = n.ctrl.Image()
		}
		cancel()
	}

	resp.Brokers = metadataBrokers(img, rc)
	clusterID := img.ClusterID
	resp.ClusterID = &clusterID
	resp.ControllerID = n.controllerID(img)

	if allTopics {
		for _, name := range img.SortedTopicNames() {
			if n.visible(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name) {
				t, _ := img.Topic(name)
				resp.Topics = append(resp.Topics, metadataTopic(img, t))
			}
		}
	} else {
		for _, rt := range requested {
			resp.Topics = append(resp.Topics, requestedMetadataTopic(img, rt))
		}
		resp.Topics = append(resp.Topics, denied...)
	}
	n.metadataOperations(rc, req, resp)
	return resp, nil
}

// authorizeMetadata splits the topics a Metadata request names into
// those it answers and those it refuses (TOPIC_AUTHORIZATION_FAILED):
// topics the principal may not DESCRIBE, and, when the request may
// auto-create, missing topics it may not CREATE (on the cluster or the
// topic).
func (n *Node) authorizeMetadata(rc *wire.RequestContext, img *metadata.Image, requested []kmsg.MetadataRequestTopic, allowAuto bool) (allowed []kmsg.MetadataRequestTopic, denied []kmsg.MetadataResponseTopic) {
	refuse := func(name *string, id [16]byte) {
		st := kmsg.NewMetadataResponseTopic()
		st.Topic, st.TopicID, st.ErrorCode = name, id, kerr.TopicAuthorizationFailed.Code
		denied = append(denied, st)
	}
	mayCreateAll := -1 // unknown yet; CREATE on the cluster is asked once
	for _, rt := range requested {
		if rt.Topic == nil {
			if t, ok := img.TopicByID(rt.TopicID); ok && !n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Name) {
				refuse(nil, rt.TopicID)
				continue
			}
			allowed = append(allowed, rt)
			continue
		}
		name := *rt.Topic
		if !n.authorize(rc, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name) {
			refuse(rt.Topic, [16]byte{})
			continue
		}
		if _, ok := img.Topic(name); !ok && allowAuto {
			if mayCreateAll < 0 {
				mayCreateAll = 0
				if n.visible(rc, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeCluster, auth.ClusterName) {
					mayCreateAll = 1
				}
			}
			if mayCreateAll == 0 && !n.authorize(rc, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeTopic, name) {
				refuse(rt.Topic, [16]byte{})
				continue
			}
		}
		allowed = append(allowed, rt)
	}
	return allowed, denied
}

// metadataOperations fills the authorized operations a Metadata request
// asks for: each answered topic's and, in v8-10, the cluster's.
func (n *Node) metadataOperations(rc *wire.RequestContext, req *kmsg.MetadataRequest, resp *kmsg.MetadataResponse) {
	if req.Version < 8 {
		return
	}
	if req.IncludeClusterAuthorizedOperations && req.Version <= 10 {
		resp.AuthorizedOperations = 0
		if n.authorizeCluster(rc, kmsg.ACLOperationDescribe) {
			resp.AuthorizedOperations = n.authorizedOperations(rc, kmsg.ACLResourceTypeCluster, auth.ClusterName)
		}
	}
	if req.IncludeTopicAuthorizedOperations {
		for i := range resp.Topics {
			if t := resp.Topics[i].Topic; t != nil && resp.Topics[i].ErrorCode == 0 {
				resp.Topics[i].AuthorizedOperations = n.authorizedOperations(rc, kmsg.ACLResourceTypeTopic, *t)
			}
		}
	}
}

// autoCreateRequested creates the topics a Metadata request names that
// img lacks, except internal names ("__" prefix) and topics this node
// deleted a moment ago, and returns the image to answer from: img, or,
// once a topic was created, the image after it.
func (n *Node) autoCreateRequested(ctx context.Context, img *metadata.Image, requested []kmsg.MetadataRequestTopic) *metadata.Image {
	created := false
	for _, rt := range requested {
		if rt.Topic == nil || *rt.Topic == "" {
			continue
		}
		name := *rt.Topic
		if _, ok := img.Topic(name); ok || strings.HasPrefix(name, "__") || n.deleted.take(name) {
			continue
		}
		if err := n.autoCreate(ctx, name); err == nil {
			created = true
		}
	}
	if !created {
		return img
	}
	n.reconcile()
	return n.ctrl.Image()
}

// requestedMetadataTopic answers one topic a Metadata request names, by
// name or by id: its partitions, or why img does not hold it.
func requestedMetadataTopic(img *metadata.Image, rt kmsg.MetadataRequestTopic) kmsg.MetadataResponseTopic {
	var t *metadata.Topic
	var ok bool
	if rt.Topic != nil {
		t, ok = img.Topic(*rt.Topic)
	} else {
		t, ok = img.TopicByID(rt.TopicID)
	}
	if ok {
		return metadataTopic(img, t)
	}
	st := kmsg.NewMetadataResponseTopic()
	st.Topic, st.TopicID = rt.Topic, rt.TopicID
	switch {
	case rt.Topic == nil:
		st.ErrorCode = kerr.UnknownTopicID.Code
	case metadata.ValidateTopicName(*rt.Topic) != nil:
		st.ErrorCode = kerr.InvalidTopicException.Code
	default:
		st.ErrorCode = kerr.UnknownTopicOrPartition.Code
	}
	return st
}

// metadataCatchUpTimeout bounds the wait of a Metadata request for a topic
// this node does not know while it catches up with the active controller.
const metadataCatchUpTimeout = time.Second

// lagsFor reports whether a Metadata request names a topic that img does
// not hold: on a node of a cluster its image may lag the active
// controller's.
func (n *Node) lagsFor(img *metadata.Image, requested []kmsg.MetadataRequestTopic) bool {
	for _, rt := range requested {
		var ok bool
		if rt.Topic != nil {
			_, ok = img.Topic(*rt.Topic)
		} else {
			_, ok = img.TopicByID(rt.TopicID)
		}
		if !ok {
			return true
		}
	}
	return false
}

// requestedTopic tells two topics of a Metadata request apart: by name, or
// by id for a topic asked for by id.
type requestedTopic struct {
	byName bool
	name   string
	id     [16]byte
}

func metadataTopicKey(rt kmsg.MetadataRequestTopic) requestedTopic {
	k := requestedTopic{id: rt.TopicID}
	if rt.Topic != nil {
		k.byName, k.name = true, *rt.Topic
	}
	return k
}

func (n *Node) autoCreate(ctx context.Context, name string) error {
	if metadata.ValidateTopicName(name) != nil {
		return controller.ErrInvalidTopic
	}
	ctx, cancel := context.WithTimeout(ctx, autoCreateTimeout)
	defer cancel()
	spec := controller.TopicSpec{Name: name, Partitions: -1, ReplicationFactor: -1}
	_, err := n.ctrl.CreateTopic(ctx, spec, false)
	if errors.Is(err, controller.ErrInvalidReplicationFactor) && n.ctrl.AwaitForming(ctx, formingWait) {
		// A client that reached the first node of a cluster whose other
		// nodes are still registering: the replicas are there a moment
		// later, and the topic with them, rather than after the client's
		// retry backoff.
		_, err = n.ctrl.CreateTopic(ctx, spec, false)
	}
	if err != nil && !errors.Is(err, controller.ErrTopicExists) {
		n.logger.Warn("auto-create topic", "topic", name, "err", err)
		return err
	}
	return nil
}

// metadataBrokers are the live brokers at their endpoints of the
// listener rc came on; those without it are left out, as Kafka does.
func metadataBrokers(img *metadata.Image, rc *wire.RequestContext) []kmsg.MetadataResponseBroker {
	out := make([]kmsg.MetadataResponseBroker, 0, len(img.Brokers))
	for _, id := range img.SortedBrokerIDs() {
		b := img.Brokers[id]
		e, ok := brokerEndpoint(b, rc)
		if b.Fenced || !ok {
			continue
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = b.ID, e.Host, e.Port
		if b.Rack != "" {
			rack := b.Rack
			mb.Rack = &rack
		}
		out = append(out, mb)
	}
	return out
}

// offlineReplicas are the replicas on brokers that are fenced or not
// registered, as Kafka's KRaftMetadataCache lists them.
func offlineReplicas(img *metadata.Image, replicas []int32) []int32 {
	out := []int32{}
	for _, r := range replicas {
		if b, ok := img.Brokers[r]; !ok || b.Fenced {
			out = append(out, r)
		}
	}
	return out
}

func metadataTopic(img *metadata.Image, t *metadata.Topic) kmsg.MetadataResponseTopic {
	st := kmsg.NewMetadataResponseTopic()
	name := t.Name
	st.Topic = &name
	st.TopicID = t.ID
	st.IsInternal = t.Internal
	st.Partitions = make([]kmsg.MetadataResponseTopicPartition, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Partition = p.Index
		sp.Leader = p.Leader
		sp.LeaderEpoch = p.LeaderEpoch
		sp.Replicas = p.Replicas
		sp.ISR = p.ISR
		sp.OfflineReplicas = offlineReplicas(img, p.Replicas)
		if p.Leader < 0 {
			sp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}

// controllerID is the controller a client is told of, in Metadata and
// DescribeCluster: the Raft leader this node knows, which takes office
// before its SetController record reaches the image. A node that knows
// none (cut off from the quorum, or during an election) names a random
// active broker other than itself, as Kafka always does: every node
// forwards controller requests, and another one more likely reaches the
// leader than this one, whose image still names the last controller it
// heard of. -1 when it knows of no such broker.
func (n *Node) controllerID(img *metadata.Image) int32 {
	if id, ok := n.ctrl.Leader(); ok {
		return id
	}
	var alive []int32
	for id, b := range img.Brokers {
		if id != n.cfg.NodeID && b.Active() {
			alive = append(alive, id)
		}
	}
	if len(alive) == 0 {
		return -1
	}
	return alive[rand.IntN(len(alive))]
}
