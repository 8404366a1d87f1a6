package broker

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handlerFunc serves one decoded request. A nil response sends nothing back;
// an error closes the connection.
type handlerFunc func(n *Node, ctx context.Context, cc *clientConn, req kmsg.Request) (kmsg.Response, error)

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
		{kmsg.ListOffsets, 0, 11, handleListOffsets},
		{kmsg.Metadata, 0, 13, handleMetadata},
		{kmsg.OffsetCommit, 2, 10, handleOffsetCommit},
		{kmsg.OffsetFetch, 1, 10, handleOffsetFetch},
		{kmsg.FindCoordinator, 0, 6, handleFindCoordinator},
		{kmsg.JoinGroup, 0, 9, handleJoinGroup},
		{kmsg.Heartbeat, 0, 4, handleHeartbeat},
		{kmsg.LeaveGroup, 0, 5, handleLeaveGroup},
		{kmsg.SyncGroup, 0, 5, handleSyncGroup},
		{kmsg.DescribeGroups, 0, 6, handleDescribeGroups},
		{kmsg.ListGroups, 0, 5, handleListGroups},
		{kmsg.ApiVersions, 0, 5, handleApiVersions},
		{kmsg.CreateTopics, 2, 7, handleCreateTopics},
		{kmsg.DeleteTopics, 1, 6, handleDeleteTopics},
		{kmsg.DeleteRecords, 0, 2, handleDeleteRecords},
		{kmsg.InitProducerID, 0, 5, handleInitProducerID},
		{kmsg.OffsetForLeaderEpoch, 2, 4, handleOffsetForLeaderEpoch},
		{kmsg.AddPartitionsToTxn, 0, 5, handleAddPartitionsToTxn},
		{kmsg.AddOffsetsToTxn, 0, 4, handleAddOffsetsToTxn},
		{kmsg.EndTxn, 0, 5, handleEndTxn},
		{kmsg.WriteTxnMarkers, 1, 2, handleWriteTxnMarkers},
		{kmsg.TxnOffsetCommit, 0, 6, handleTxnOffsetCommit},
		{kmsg.DescribeConfigs, 1, 4, handleDescribeConfigs},
		{kmsg.AlterConfigs, 0, 2, handleAlterConfigs},
		{kmsg.DescribeLogDirs, 1, 5, handleDescribeLogDirs},
		{kmsg.CreatePartitions, 0, 3, handleCreatePartitions},
		{kmsg.DeleteGroups, 0, 3, handleDeleteGroups},
		{kmsg.ElectLeaders, 0, 2, handleElectLeaders},
		{kmsg.IncrementalAlterConfigs, 0, 1, handleIncrementalAlterConfigs},
		{kmsg.AlterPartitionAssignments, 0, 1, handleAlterPartitionReassignments},
		{kmsg.ListPartitionReassignments, 0, 0, handleListPartitionReassignments},
		{kmsg.OffsetDelete, 0, 0, handleOffsetDelete},
		{kmsg.DescribeQuorum, 0, 2, handleDescribeQuorum},
		{kmsg.DescribeCluster, 0, 2, handleDescribeCluster},
		{kmsg.DescribeProducers, 0, 0, handleDescribeProducers},
		{kmsg.DescribeTransactions, 0, 0, handleDescribeTransactions},
		{kmsg.ListTransactions, 0, 2, handleListTransactions},
		{kmsg.ConsumerGroupHeartbeat, 0, 1, handleConsumerGroupHeartbeat},
		{kmsg.ConsumerGroupDescribe, 0, 1, handleConsumerGroupDescribe},
		{kmsg.DescribeTopicPartitions, 0, 0, handleDescribeTopicPartitions},
	}
}

// feature is one feature flag (KIP-584) klog implements: the levels it
// supports and the level it has finalized, the one in effect.
type feature struct {
	name      string
	min, max  int16
	finalized int16
	enables   string // what the finalized level turns on, for the README
}

// featureTable is the features ApiVersions v3+ advertises, with the levels
// Kafka 4.4 gives them; each level's behaviour is implemented. klog's
// features are fixed by its release (no UpdateFeatures), so one epoch,
// featuresEpoch, stands for them; a release that changes this table bumps
// it, so that clients reload what they cached.
//
// Not advertised: metadata.version and kraft.version describe Kafka's
// own metadata log (__cluster_metadata records, the KRaft voter
// protocol), which klog does not speak — its controller is its own Raft —
// and no client acts on them; share.version (KIP-932 share groups),
// streams.version (KIP-1071 streams groups) and
// eligible.leader.replicas.version (KIP-966): klog has none of them.
func featureTable() []feature {
	return []feature{
		{"group.version", 0, 1, 1, "KIP-848 consumer groups: ConsumerGroupHeartbeat, ConsumerGroupDescribe"},
		{"transaction.version", 0, 2, 2, "KIP-890 part 2: produce v12+ and TxnOffsetCommit v5+ add to the transaction, EndTxn v5 bumps the epoch"},
	}
}

// featuresEpoch is the epoch of featureTable's finalized levels.
const featuresEpoch = 1

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
// README's compatibility table.
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

// Feature is one feature flag klog advertises, for docs and the README.
type Feature struct {
	Name      string
	Min, Max  int16
	Finalized int16
	Enables   string
}

// Features lists the feature flags klog advertises in ApiVersions.
func Features() []Feature {
	table := featureTable()
	out := make([]Feature, 0, len(table))
	for _, f := range table {
		out = append(out, Feature{Name: f.name, Min: f.min, Max: f.max, Finalized: f.finalized, Enables: f.enables})
	}
	return out
}
