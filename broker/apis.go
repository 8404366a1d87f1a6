package broker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// handlerFunc serves one decoded request; rc is its context (the
// connection's listener, address, client, principal). Its reply is the
// answer as a value: the response (nil sends nothing back), what to
// release once it is encoded, its size, or an answer deferred
// (wire.Reply). An error closes the connection.
type handlerFunc func(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (wire.Reply, error)

// responder is the handler of most APIs: its answer is a response alone,
// with nothing to release or defer.
type responder func(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, error)

// simple makes a responder a handlerFunc.
func simple(h responder) handlerFunc {
	return func(n *Node, ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		resp, err := h(n, ctx, rc, req)
		return wire.Reply{Response: resp}, err
	}
}

// api is one row of the registration table.
type api struct {
	key      kmsg.Key
	min, max int16
	handle   handlerFunc
}

// apiTable is the single registration table: dispatch and ApiVersions are
// both built from it. Versions are Kafka 4.4's, each implemented: the
// versions Kafka 4.0 removed (KIP-896) are neither listed nor served, but
// ListOffsets v0, kept for Burrow 1.2.1 (02_list_offsets.go); Produce
// v0-2, which Kafka 4 lists for old librdkafka but refuses, are listed and
// refused the same way (handleProduce).
func apiTable() []api {
	return []api{
		{kmsg.Produce, 0, 13, handleProduce},
		{kmsg.Fetch, 4, 18, handleFetch},
		{kmsg.ListOffsets, 0, 11, simple(handleListOffsets)},
		{kmsg.Metadata, 0, 13, simple(handleMetadata)},
		{kmsg.OffsetCommit, 2, 10, simple(handleOffsetCommit)},
		{kmsg.OffsetFetch, 1, 10, simple(handleOffsetFetch)},
		{kmsg.FindCoordinator, 0, 6, simple(handleFindCoordinator)},
		{kmsg.JoinGroup, 0, 9, simple(handleJoinGroup)},
		{kmsg.Heartbeat, 0, 4, simple(handleHeartbeat)},
		{kmsg.LeaveGroup, 0, 5, simple(handleLeaveGroup)},
		{kmsg.SyncGroup, 0, 5, simple(handleSyncGroup)},
		{kmsg.DescribeGroups, 0, 6, simple(handleDescribeGroups)},
		{kmsg.ListGroups, 0, 5, simple(handleListGroups)},
		{kmsg.SASLHandshake, 0, 1, handleSASLHandshake},
		{kmsg.ApiVersions, 0, 5, simple(handleApiVersions)},
		{kmsg.CreateTopics, 2, 7, simple(handleCreateTopics)},
		{kmsg.DeleteTopics, 1, 6, simple(handleDeleteTopics)},
		{kmsg.DeleteRecords, 0, 2, simple(handleDeleteRecords)},
		{kmsg.InitProducerID, 0, 5, simple(handleInitProducerID)},
		{kmsg.OffsetForLeaderEpoch, 2, 4, simple(handleOffsetForLeaderEpoch)},
		{kmsg.AddPartitionsToTxn, 0, 5, simple(handleAddPartitionsToTxn)},
		{kmsg.AddOffsetsToTxn, 0, 4, simple(handleAddOffsetsToTxn)},
		{kmsg.EndTxn, 0, 5, simple(handleEndTxn)},
		{kmsg.WriteTxnMarkers, 1, 2, simple(handleWriteTxnMarkers)},
		{kmsg.TxnOffsetCommit, 0, 6, simple(handleTxnOffsetCommit)},
		{kmsg.DescribeACLs, 1, 3, simple(handleDescribeACLs)},
		{kmsg.CreateACLs, 1, 3, simple(handleCreateACLs)},
		{kmsg.DeleteACLs, 1, 3, simple(handleDeleteACLs)},
		{kmsg.DescribeConfigs, 1, 4, simple(handleDescribeConfigs)},
		{kmsg.AlterConfigs, 0, 2, simple(handleAlterConfigs)},
		{kmsg.AlterReplicaLogDirs, 1, 2, simple(handleAlterReplicaLogDirs)},
		{kmsg.DescribeLogDirs, 1, 5, simple(handleDescribeLogDirs)},
		{kmsg.SASLAuthenticate, 0, 2, handleSASLAuthenticate},
		{kmsg.CreatePartitions, 0, 3, simple(handleCreatePartitions)},
		{kmsg.CreateDelegationToken, 1, 3, simple(handleCreateDelegationToken)},
		{kmsg.RenewDelegationToken, 1, 2, simple(handleRenewDelegationToken)},
		{kmsg.ExpireDelegationToken, 1, 2, simple(handleExpireDelegationToken)},
		{kmsg.DescribeDelegationToken, 1, 3, simple(handleDescribeDelegationToken)},
		{kmsg.DeleteGroups, 0, 3, simple(handleDeleteGroups)},
		{kmsg.ElectLeaders, 0, 2, simple(handleElectLeaders)},
		{kmsg.IncrementalAlterConfigs, 0, 1, simple(handleIncrementalAlterConfigs)},
		{kmsg.AlterPartitionAssignments, 0, 1, simple(handleAlterPartitionReassignments)},
		{kmsg.ListPartitionReassignments, 0, 0, simple(handleListPartitionReassignments)},
		{kmsg.OffsetDelete, 0, 0, simple(handleOffsetDelete)},
		{kmsg.DescribeUserSCRAMCredentials, 0, 0, simple(handleDescribeUserSCRAMCredentials)},
		{kmsg.AlterUserSCRAMCredentials, 0, 0, simple(handleAlterUserSCRAMCredentials)},
		{kmsg.DescribeClientQuotas, 0, 1, simple(handleDescribeClientQuotas)},
		{kmsg.AlterClientQuotas, 0, 1, simple(handleAlterClientQuotas)},
		{kmsg.DescribeQuorum, 0, 2, simple(handleDescribeQuorum)},
		{kmsg.UpdateFeatures, 0, 2, simple(handleUpdateFeatures)},
		{kmsg.DescribeCluster, 0, 2, simple(handleDescribeCluster)},
		{kmsg.DescribeProducers, 0, 0, simple(handleDescribeProducers)},
		{kmsg.UnregisterBroker, 0, 0, simple(handleUnregisterBroker)},
		{kmsg.DescribeTransactions, 0, 0, simple(handleDescribeTransactions)},
		{kmsg.ListTransactions, 0, 2, simple(handleListTransactions)},
		{kmsg.ConsumerGroupHeartbeat, 0, 1, simple(handleConsumerGroupHeartbeat)},
		{kmsg.ConsumerGroupDescribe, 0, 1, simple(handleConsumerGroupDescribe)},
		{kmsg.GetTelemetrySubscriptions, 0, 0, simple(handleGetTelemetrySubscriptions)},
		{kmsg.PushTelemetry, 0, 0, simple(handlePushTelemetry)},
		{kmsg.ListConfigResources, 0, 1, simple(handleListConfigResources)},
		{kmsg.DescribeTopicPartitions, 0, 0, simple(handleDescribeTopicPartitions)},
		{kmsg.ShareGroupHeartbeat, 1, 1, simple(handleShareGroupHeartbeat)},
		{kmsg.ShareGroupDescribe, 1, 1, simple(handleShareGroupDescribe)},
		{kmsg.ShareFetch, 1, 2, simple(handleShareFetch)},
		{kmsg.ShareAcknowledge, 1, 2, simple(handleShareAcknowledge)},
	}
}

var apiByKey = func() [kmsg.MaxKey + 1]*api {
	var t [kmsg.MaxKey + 1]*api
	table := apiTable()
	for i := range table {
		a := &table[i]
		t[a.key] = a // TestAPITableWithinKmsg checks every row against kmsg
	}
	return t
}()

func lookupAPI(key int16) (*api, bool) {
	if key < 0 || int(key) >= len(apiByKey) || apiByKey[key] == nil {
		return nil, false
	}
	return apiByKey[key], true
}

// APIVersion is one API key and the versions klog serves, for docs and the
// compatibility table of docs/compatibility.md.
type APIVersion struct {
	Key      int16
	Name     string
	Min, Max int16
}

// APIVersions lists the APIs klog serves, sorted by key.
func APIVersions() []APIVersion {
	table := apiTable()
	out := make([]APIVersion, 0, len(table))
	for _, a := range table {
		out = append(out, APIVersion{Key: a.key.Int16(), Name: a.key.Name(), Min: a.min, Max: a.max})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Feature is one feature flag klog knows, for docs/compatibility.md.
type Feature = metadata.Feature

// Features lists the feature flags klog knows (broker/metadata's table,
// which ApiVersions and UpdateFeatures both read), by name.
func Features() []Feature { return metadata.Features() }

// errUnsupported closes the connection: Kafka disconnects clients that send
// an API key or version it does not serve (other than ApiVersions, which
// gets an answer in version 0).
var errUnsupported = errors.New("unsupported API key or version")

// dispatcher serves the node's connections (wire.Handler) from apiTable.
type dispatcher struct{ n *Node }

// Serves reports whether apiTable lists key at version.
func (d dispatcher) Serves(key, version int16) bool {
	api, ok := lookupAPI(key)
	return ok && version >= api.min && version <= api.max
}

// Unserved answers an ApiVersions at a version klog does not serve in
// version 0 (18_api_versions.go) and closes the connection of any other
// request it does not serve.
func (d dispatcher) Unserved(rc *wire.RequestContext) (kmsg.Response, error) {
	if rc.Header.Key == kmsg.ApiVersions.Int16() {
		return d.n.apiVersionsUnsupported(), nil
	}
	return nil, fmt.Errorf("%w: key %d version %d", errUnsupported, rc.Header.Key, rc.Header.Version)
}

// Handle runs req's handler, after the node's RequestHook. Every request
// is timed here, from its decoding (rc.Start) to its handler's return, or
// to the end of its deferred answer (nodeStats.requestDone).
func (d dispatcher) Handle(ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (reply wire.Reply, err error) {
	n := d.n
	defer func() {
		later := reply.Later
		if later == nil {
			n.stats.requestDone(req.Key(), req, time.Since(rc.Start))
			return
		}
		reply.Later = func(ctx context.Context) kmsg.Response {
			defer func() { n.stats.requestDone(req.Key(), req, time.Since(rc.Start)) }()
			return later(ctx)
		}
	}()
	if p := n.cfg.Principal; p != nil {
		rc.Principal = p(rc)
	}
	if hook := n.cfg.RequestHook; hook != nil {
		if resp, handled, err := hook(ctx, rc, req); handled {
			return wire.Reply{Response: resp}, err
		}
	}
	api, _ := lookupAPI(req.Key())
	reply, err = api.handle(n, ctx, rc, req)
	if err == nil {
		n.throttleRequest(rc, req, &reply)
	}
	return reply, err
}
