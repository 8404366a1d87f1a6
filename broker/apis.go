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
// both built from it. Versions are what klog implements, capped by what
// kmsg can encode. Older versions that Kafka 4.0 removed (KIP-896) stay
// served where clients still send them.
func apiTable() []api {
	return []api{
		{kmsg.Produce, 3, 13, handleProduce},
		{kmsg.Fetch, 4, 18, handleFetch},
		{kmsg.ListOffsets, 0, 11, handleListOffsets},
		{kmsg.Metadata, 0, 13, handleMetadata},
		{kmsg.OffsetCommit, 0, 10, handleOffsetCommit},
		{kmsg.OffsetFetch, 0, 10, handleOffsetFetch},
		{kmsg.FindCoordinator, 0, 6, handleFindCoordinator},
		{kmsg.JoinGroup, 0, 9, handleJoinGroup},
		{kmsg.Heartbeat, 0, 4, handleHeartbeat},
		{kmsg.LeaveGroup, 0, 5, handleLeaveGroup},
		{kmsg.SyncGroup, 0, 5, handleSyncGroup},
		{kmsg.DescribeGroups, 0, 6, handleDescribeGroups},
		{kmsg.ListGroups, 0, 5, handleListGroups},
		{kmsg.ApiVersions, 0, 4, handleApiVersions},
		{kmsg.CreateTopics, 0, 7, handleCreateTopics},
		{kmsg.DeleteTopics, 0, 6, handleDeleteTopics},
		{kmsg.InitProducerID, 0, 5, handleInitProducerID},
		{kmsg.AddPartitionsToTxn, 0, 5, handleAddPartitionsToTxn},
		{kmsg.AddOffsetsToTxn, 0, 4, handleAddOffsetsToTxn},
		{kmsg.EndTxn, 0, 4, handleEndTxn},
		{kmsg.WriteTxnMarkers, 0, 1, handleWriteTxnMarkers},
		{kmsg.TxnOffsetCommit, 0, 3, handleTxnOffsetCommit},
		{kmsg.DescribeConfigs, 0, 4, handleDescribeConfigs},
		{kmsg.AlterConfigs, 0, 2, handleAlterConfigs},
		{kmsg.CreatePartitions, 0, 3, handleCreatePartitions},
		{kmsg.DeleteGroups, 0, 2, handleDeleteGroups},
		{kmsg.IncrementalAlterConfigs, 0, 1, handleIncrementalAlterConfigs},
		{kmsg.OffsetDelete, 0, 0, handleOffsetDelete},
		{kmsg.DescribeCluster, 0, 2, handleDescribeCluster},
		{kmsg.DescribeProducers, 0, 0, handleDescribeProducers},
		{kmsg.DescribeTransactions, 0, 0, handleDescribeTransactions},
		{kmsg.ListTransactions, 0, 2, handleListTransactions},
		{kmsg.ConsumerGroupHeartbeat, 0, 1, handleConsumerGroupHeartbeat},
		{kmsg.ConsumerGroupDescribe, 0, 1, handleConsumerGroupDescribe},
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
