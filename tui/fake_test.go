package tui

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/recordjson"
)

var update = flag.Bool("update", false, "rewrite the golden files of View()")

// clock is the fixed time of every test.
var clock = time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)

// fakeSource is a Source of fixed data; a test changes its fields between
// refreshes. It counts the calls, and how many run at once.
type fakeSource struct {
	mu       sync.Mutex
	calls    map[string]int
	running  int
	overlaps int

	cluster ClusterState
	// clusterErr fails the overview.
	clusterErr error
	topics     []inspect.TopicListing
	topic      map[string]TopicDetail
	groups     []inspect.GroupListing
	group      map[string]inspect.GroupDescription
	txns       []inspect.Transaction
	markers    map[string][]nodeapi.TransactionMarker // by transactional id
	cleaner    []NodeCleaner
	telemetry  []NodeTelemetry
	segments   map[string]PartitionSegments // by "topic/partition"
	index      map[int64]nodeapi.Index      // by segment base
	leaders    map[string]nodeapi.Partition // by "topic/partition"
	events     []nodeapi.Event
	traffic    uint64 // Nodes calls, for the fake counters
	hanging    []inspect.HangingTransaction
	aborted    []inspect.HangingTransaction
	abortErr   error
	noAdmin    bool
	users      []inspect.User
	acls       []inspect.ACL
	aclsErr    error
	quotas     []inspect.ClientQuota
}

func (f *fakeSource) enter(name string) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[name]++
	f.running++
	if f.running > 1 {
		f.overlaps++
	}
	return func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}
}

func (f *fakeSource) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

func (f *fakeSource) Overview(context.Context) (ClusterState, error) {
	defer f.enter("overview")()
	if f.clusterErr != nil {
		return ClusterState{}, f.clusterErr
	}
	return f.cluster, nil
}

func (f *fakeSource) Nodes(context.Context) ([]NodeState, error) {
	defer f.enter("quorum")()
	if f.noAdmin {
		return nil, ErrNoAdminAPI
	}
	contact := clock.Add(-40 * time.Millisecond)
	f.mu.Lock()
	f.traffic++
	n := f.traffic
	f.mu.Unlock()
	return []NodeState{
		{NodeID: 0, Raft: nodeapi.Raft{Role: "follower", Term: 3, Leader: 1, MetadataOffset: 118, LastContact: &contact},
			Throughput: nodeapi.Throughput{NodeID: 0, BytesIn: n * 2048, BytesOut: n * n * 1024}},
		{NodeID: 1, Raft: nodeapi.Raft{Role: "leader", Term: 3, Leader: 1, MetadataOffset: 118}},
	}, nil
}

func (f *fakeSource) Topics(context.Context) ([]inspect.TopicListing, error) {
	defer f.enter("topics")()
	return f.topics, nil
}

func (f *fakeSource) Topic(_ context.Context, name string) (TopicDetail, error) {
	defer f.enter("topic")()
	d, ok := f.topic[name]
	if !ok {
		return TopicDetail{}, inspect.ErrTopicNotFound
	}
	return d, nil
}

func (f *fakeSource) Groups(context.Context) ([]inspect.GroupListing, error) {
	defer f.enter("groups")()
	return f.groups, nil
}

func (f *fakeSource) Group(_ context.Context, name string) (inspect.GroupDescription, error) {
	defer f.enter("group")()
	return f.group[name], nil
}

func (f *fakeSource) Transactions(context.Context) ([]inspect.Transaction, error) {
	defer f.enter("txns")()
	return f.txns, nil
}

func (f *fakeSource) Cleaner(context.Context) ([]NodeCleaner, error) {
	defer f.enter("cleaner")()
	if f.noAdmin {
		return nil, ErrNoAdminAPI
	}
	return f.cleaner, nil
}

func (f *fakeSource) Telemetry(context.Context) ([]NodeTelemetry, error) {
	defer f.enter("telemetry")()
	if f.noAdmin {
		return nil, ErrNoAdminAPI
	}
	return f.telemetry, nil
}

func (f *fakeSource) Partition(_ context.Context, topic string, partition int32) (PartitionDetail, error) {
	defer f.enter("partition")()
	d, ok := f.topic[topic]
	if !ok || int(partition) >= len(d.Partitions) {
		return PartitionDetail{}, inspect.ErrTopicNotFound
	}
	out := PartitionDetail{Topic: topic, Kafka: d.Partitions[partition], AdminErr: "admin API not available"}
	if p, ok := f.leaders[topic+"/"+strconv.Itoa(int(partition))]; ok && !f.noAdmin {
		out.Leader, out.AdminErr = &p, ""
		for _, e := range f.events {
			if e.Topic == topic && e.Partition == partition {
				out.Timeline = append(out.Timeline, e)
			}
		}
	}
	return out, nil
}

func (f *fakeSource) Tail(_ context.Context, topic string, _ int) ([]inspect.TailRecord, error) {
	defer f.enter("tail")()
	if _, ok := f.topic[topic]; !ok {
		return nil, inspect.ErrTopicNotFound
	}
	at := func(d time.Duration) int64 { return clock.Add(-d).UnixMilli() }
	return []inspect.TailRecord{
		{Partition: 1, Offset: 97, Timestamp: at(time.Second), Key: []byte("order-17"), Value: []byte(`{"id":17,"total":12.5}`),
			Headers: []inspect.RecordHeader{{Key: "trace", Value: []byte("abc")}}, Compression: "zstd", ProducerID: 4000, ProducerEpoch: 3, Transactional: true},
		{Partition: 0, Offset: 119, Timestamp: at(2 * time.Second), Key: []byte("order-16"), Value: []byte{0, 1, 2, 0xff, 'h', 'i'}, Compression: "none", ProducerID: -1, ProducerEpoch: -1},
		{Partition: 0, Offset: 118, Timestamp: at(3 * time.Second), Key: []byte("order-15"), Compression: "none", ProducerID: -1, ProducerEpoch: -1},
	}, nil
}

func (f *fakeSource) Configs(_ context.Context, topic string, broker int32) ([]inspect.ConfigDescription, error) {
	defer f.enter("configs")()
	if topic == "" {
		return []inspect.ConfigDescription{
			{Key: "log.retention.hours", Value: new("168"), Source: "DEFAULT_CONFIG"},
			{Key: "min.insync.replicas", Value: new("2"), Source: "DYNAMIC_BROKER_CONFIG"},
			{Key: "node.id", Value: new(strconv.Itoa(int(broker))), Source: "STATIC_BROKER_CONFIG"},
		}, nil
	}
	if _, ok := f.topic[topic]; !ok {
		return nil, fmt.Errorf("describe configs of %s: UNKNOWN_TOPIC_OR_PARTITION", topic)
	}
	return []inspect.ConfigDescription{
		{Key: "cleanup.policy", Value: new("delete"), Source: "DEFAULT_CONFIG"},
		{Key: "min.insync.replicas", Value: new("2"), Source: "DYNAMIC_BROKER_CONFIG"},
		{Key: "retention.ms", Value: new("3600000"), Source: "DYNAMIC_TOPIC_CONFIG"},
		{Key: "segment.bytes", Value: new("1073741824"), Source: "DEFAULT_CONFIG"},
	}, nil
}

func (f *fakeSource) TxnPartitions(_ context.Context, producerID int64, parts []inspect.TopicPartitions) ([]TxnPartition, error) {
	defer f.enter("txnparts")()
	start, lso := int64(40), int64(40)
	for _, tx := range f.txns {
		if tx.ProducerID == producerID && strings.HasPrefix(tx.State, "Complete") {
			start, lso = -1, 57 // no transaction open
		}
	}
	var out []TxnPartition
	for _, tp := range parts {
		for _, p := range tp.Partitions {
			out = append(out, TxnPartition{Topic: tp.Topic, Partition: p, StartOffset: start, LastStableOffset: lso, HighWatermark: 57, LastSequence: int32(producerID % 10)})
		}
	}
	return out, nil
}

func (f *fakeSource) TxnMarkers(_ context.Context, transactionalID string) ([]nodeapi.TransactionMarker, error) {
	defer f.enter("txnmarkers")()
	if f.noAdmin {
		return nil, ErrNoAdminAPI
	}
	return f.markers[transactionalID], nil
}

func (f *fakeSource) Hanging(context.Context, time.Duration) ([]inspect.HangingTransaction, error) {
	defer f.enter("hanging")()
	return f.hanging, nil
}

func (f *fakeSource) AbortTransaction(_ context.Context, t inspect.HangingTransaction) error {
	defer f.enter("abort")()
	if f.abortErr != nil {
		return f.abortErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aborted = append(f.aborted, t)
	return nil
}

func (f *fakeSource) Events(context.Context) ([]nodeapi.Event, error) {
	defer f.enter("events")()
	if f.noAdmin {
		return nil, ErrNoAdminAPI
	}
	return f.events, nil
}

func (f *fakeSource) Users(context.Context) ([]inspect.User, error) {
	defer f.enter("users")()
	return f.users, nil
}

func (f *fakeSource) ACLs(context.Context) ([]inspect.ACL, error) {
	defer f.enter("acls")()
	return f.acls, f.aclsErr
}

func (f *fakeSource) Quotas(context.Context) ([]inspect.ClientQuota, error) {
	defer f.enter("quotas")()
	return f.quotas, nil
}

func (f *fakeSource) Segments(_ context.Context, topic string, partition int32) (PartitionSegments, error) {
	defer f.enter("segments")()
	if f.noAdmin {
		return PartitionSegments{}, ErrNoAdminAPI
	}
	d, ok := f.segments[topic+"/"+strconv.Itoa(int(partition))]
	if !ok {
		return d, fmt.Errorf("no node has a replica of %s/%d", topic, partition)
	}
	return d, nil
}

func (f *fakeSource) Batch(_ context.Context, topic string, partition int32, offset int64) (nodeapi.Batch, error) {
	defer f.enter("batch")()
	v := func(s string) *string { return &s }
	return nodeapi.Batch{NodeID: 0, Topic: topic, Partition: partition, BaseOffset: offset - 2, LastOffset: offset, Size: 190, Count: 3,
		CRCValid: true, Codec: "lz4", TimestampType: "create", ProducerID: 4000, ProducerEpoch: 3, BaseSequence: 40,
		BaseTimestamp: clock.Add(-time.Hour).UnixMilli(), MaxTimestamp: clock.Add(-time.Hour).UnixMilli(),
		Records: []recordjson.Record{
			{Offset: new(offset - 2), Timestamp: new(clock.Add(-time.Hour).UnixMilli()), Key: v("order-1"), Value: v(`{"id":1}`), Headers: []recordjson.Header{{Key: "trace", Value: v("a")}}},
			{Offset: new(offset - 1), Timestamp: new(clock.Add(-time.Hour).UnixMilli()), Key: v("order-2"), Value: v("/wA="), ValueEncoding: "base64", Headers: []recordjson.Header{}},
			{Offset: new(offset), Timestamp: new(clock.Add(-time.Hour).UnixMilli()), Key: v("order-1"), Headers: []recordjson.Header{}},
		}}, nil
}

func (f *fakeSource) Index(_ context.Context, _ string, _ int32, base int64, kind string) (nodeapi.Index, error) {
	defer f.enter("index")()
	if kind == nodeapi.IndexTime {
		return nodeapi.Index{BaseOffset: base, Kind: kind, Total: 2, Times: []nodeapi.TimeEntry{
			{Timestamp: clock.Add(-49 * time.Minute).UnixMilli(), Offset: 60}, {Timestamp: clock.Add(-30 * time.Minute).UnixMilli(), Offset: 71},
		}}, nil
	}
	return f.index[base], nil
}

func i64(v int64) *int64 { return &v }

// newFakeSource returns a three-broker cluster with a bit of everything.
func newFakeSource() *fakeSource {
	lastRun := clock.Add(-90 * time.Second)
	written := clock.Add(-3 * time.Second)
	return &fakeSource{
		cluster: ClusterState{
			Overview: inspect.ClusterOverview{
				ClusterID: "klog-test", Controller: 1,
				Brokers: []inspect.Broker{
					{NodeID: 0, Address: "127.0.0.1:9092"},
					{NodeID: 1, Address: "127.0.0.1:9093", Controller: true},
					{NodeID: 2, Address: "127.0.0.1:9094", Rack: "b"},
				},
				Topics: 3, Partitions: 54, UnderReplicated: 1,
			},
			From: 1,
			Nodes: []NodeHealth{
				{NodeID: 0, Address: "127.0.0.1:9092", Reachable: true, Listed: true, InQuorum: true, Voter: true, LastFetch: clock},
				{NodeID: 1, Address: "127.0.0.1:9093", Reachable: true, Listed: true, InQuorum: true, Voter: true, LastFetch: clock},
				{NodeID: 2, Address: "127.0.0.1:9094", Rack: "b", Reachable: true, Listed: true, InQuorum: true, Voter: true, LastFetch: clock},
			},
		},
		topics: []inspect.TopicListing{
			{Name: "__consumer_offsets", Partitions: 50, ReplicationFactor: 3, Internal: true},
			{Name: "orders", Partitions: 3, ReplicationFactor: 3},
			{Name: "payments", Partitions: 1, ReplicationFactor: 3},
		},
		topic: map[string]TopicDetail{
			"orders": {Name: "orders", ReplicationFactor: 3, Partitions: []TopicPartition{
				{Partition: 0, Leader: 0, LeaderEpoch: 2, Replicas: []int32{0, 1, 2}, ISR: []int32{0, 1, 2}, LogStartOffset: 0, LastStableOffset: 120, HighWatermark: 120},
				{Partition: 1, Leader: 1, LeaderEpoch: 1, Replicas: []int32{1, 2, 0}, ISR: []int32{1, 2}, LogStartOffset: 10, LastStableOffset: 98, HighWatermark: 98},
				{Partition: 2, Leader: 2, LeaderEpoch: 1, Replicas: []int32{2, 0, 1}, ISR: []int32{2, 0, 1}, LogStartOffset: 0, LastStableOffset: 40, HighWatermark: 57},
			}},
		},
		groups: []inspect.GroupListing{
			{Group: "billing", Type: "classic", State: "Stable", ProtocolType: "consumer", Protocol: "cooperative-sticky", Members: 2, Coordinator: 0},
			{Group: "audit", Type: "consumer", State: "Empty", ProtocolType: "consumer", Protocol: "uniform", Coordinator: 2},
		},
		group: map[string]inspect.GroupDescription{
			"billing": {Group: "billing", Type: "classic", State: "Stable", Protocol: "cooperative-sticky", Coordinator: 0,
				Members: []inspect.GroupMember{{MemberID: "m-1", Principal: "User:billing"}, {MemberID: "m-2"}}, TotalLag: 25,
				Partitions: []inspect.GroupPartition{
					{Topic: "orders", Partition: 0, Committed: i64(110), LastStableOffset: 120, HighWatermark: 120, Lag: i64(10), MemberID: "m-1"},
					{Topic: "orders", Partition: 1, Committed: i64(83), LastStableOffset: 98, HighWatermark: 105, Lag: i64(15), MemberID: "m-2"},
					{Topic: "orders", Partition: 2, LastStableOffset: -1, HighWatermark: -1, Error: "NOT_LEADER_OR_FOLLOWER"},
				}},
		},
		txns: []inspect.Transaction{
			{TransactionalID: "pay-1", Coordinator: 1, State: "Ongoing", ProducerID: 4000, ProducerEpoch: 3, Principal: "User:payments", TimeoutMs: 60000,
				StartTime: i64(clock.Add(-15 * time.Second).UnixMilli()), Partitions: []inspect.TopicPartitions{{Topic: "orders", Partitions: []int32{2}}, {Topic: "payments", Partitions: []int32{0}}}},
			{TransactionalID: "pay-2", Coordinator: 0, State: "Ongoing", ProducerID: 4001, ProducerEpoch: 0, TimeoutMs: 10000,
				StartTime: i64(clock.Add(-12 * time.Second).UnixMilli()), Partitions: []inspect.TopicPartitions{{Topic: "orders", Partitions: []int32{0}}}},
			{TransactionalID: "pay-3", Coordinator: 1, State: "PrepareAbort", ProducerID: 4003, ProducerEpoch: 2, TimeoutMs: 60000,
				StartTime: i64(clock.Add(-70 * time.Second).UnixMilli()), Partitions: []inspect.TopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}, {Topic: "payments", Partitions: []int32{1}}}},
			{TransactionalID: "ship-1", Coordinator: 2, State: "CompleteCommit", ProducerID: 4002, ProducerEpoch: 7, TimeoutMs: 60000, Partitions: []inspect.TopicPartitions{}},
		},
		markers: map[string][]nodeapi.TransactionMarker{
			"pay-3": {
				{Topic: "orders", Partition: 0, Type: nodeapi.MarkerAbort, State: nodeapi.MarkerWritten, Attempts: 1, WrittenAt: &written},
				{Topic: "orders", Partition: 1, Type: nodeapi.MarkerAbort, State: nodeapi.MarkerPending, Attempts: 4, Error: "orders-1: NOT_LEADER_OR_FOLLOWER"},
				{Topic: "payments", Partition: 1, Type: nodeapi.MarkerAbort, State: nodeapi.MarkerFailed, Attempts: 1, Error: "payments-1: marker fenced by the partition"},
			},
			"ship-1": {
				{Topic: "orders", Partition: 1, Type: nodeapi.MarkerCommit, State: nodeapi.MarkerWritten, Attempts: 1, WrittenAt: &written},
				{Topic: "payments", Partition: 0, Type: nodeapi.MarkerCommit, State: nodeapi.MarkerWritten, Attempts: 2, Error: "payments-0: REQUEST_TIMED_OUT", WrittenAt: &written},
			},
		},
		telemetry: []NodeTelemetry{
			{Addr: "127.0.0.1:9644", Telemetry: nodeapi.Telemetry{NodeID: 0, Count: 2, Clients: []nodeapi.TelemetryClient{
				{InstanceID: "Y1DYZgxwR8G6bBVWhC4txw", ClientID: "billing", SoftwareName: "apache-kafka-java", SoftwareVersion: "4.4.0",
					Metrics: []string{"org.apache.kafka.producer."}, PushIntervalMs: 10000, Pushes: 12, Series: []nodeapi.TelemetrySeries{
						{Name: "org.apache.kafka.producer.record.queue.time.avg", Kind: "gauge", Value: 3.25, At: clock.Add(-4 * time.Second)},
						{Name: "org.apache.kafka.producer.topic.record.send.total", Attrs: "{topic=orders}", Kind: "counter", Value: 1200, At: clock.Add(-4 * time.Second)},
						{Name: "org.apache.kafka.producer.node.request.latency.max", Attrs: "{node_id=2}", Kind: "gauge", Value: 41, At: clock.Add(-35 * time.Second)},
					}},
				{InstanceID: "aGOUsZ8LSOqJCK3TZv0wsg", ClientID: "rdkafka", SoftwareName: "confluent-kafka-python", SoftwareVersion: "2.16.1",
					PushIntervalMs: 300000},
			}}},
			{Addr: "127.0.0.1:9645", Error: "Get \"http://127.0.0.1:9645/v1/telemetry\": dial tcp 127.0.0.1:9645: connect: connection refused"},
		},
		cleaner: []NodeCleaner{
			{Addr: "127.0.0.1:9644", Cleaner: nodeapi.Cleaner{NodeID: 0, Partitions: []nodeapi.CleanerPartition{
				{Topic: "users", Partition: 0, DirtyRatio: 0.62, MinCleanableDirtyRatio: 0.5, FirstDirtyOffset: 1200, FirstUncleanableOffset: 3400,
					CleanBytes: 40 << 10, DirtyBytes: 66 << 10, LastRun: &lastRun, RecordsRemoved: 800, BytesRemoved: 3 << 20, Runs: 4},
				{Topic: "users", Partition: 1, DirtyRatio: 0.1, MinCleanableDirtyRatio: 0.5, FirstDirtyOffset: 0, FirstUncleanableOffset: 20},
				{Topic: "__consumer_offsets", Partition: 7, DirtyRatio: 0.3, MinCleanableDirtyRatio: 0.5, FirstDirtyOffset: 40, FirstUncleanableOffset: 90},
			}}},
			{Addr: "127.0.0.1:9645", Error: "admin API 127.0.0.1:9645: connection refused"},
		},
		segments: map[string]PartitionSegments{
			"orders/0": {Node: 0,
				Partition: nodeapi.Partition{Topic: "orders", Partition: 0, Role: "leader", LogStartOffset: 0, HighWatermark: 120, LogEndOffset: 120},
				Segments: nodeapi.Segments{NodeID: 0, Topic: "orders", Partition: 0, Total: 3, Segments: []nodeapi.Segment{
					{BaseOffset: 0, LastOffset: 49, NextOffset: 50, Size: 1 << 20, FirstTimestamp: clock.Add(-time.Hour).UnixMilli(), MaxTimestamp: clock.Add(-50 * time.Minute).UnixMilli(), IndexEntries: 250, TimeIndexEntries: 250},
					{BaseOffset: 50, LastOffset: 99, NextOffset: 100, Size: 1 << 20, FirstTimestamp: clock.Add(-50 * time.Minute).UnixMilli(), MaxTimestamp: clock.Add(-10 * time.Minute).UnixMilli(), IndexEntries: 250, TimeIndexEntries: 250, AbortedTxns: 1},
					{BaseOffset: 100, LastOffset: 119, NextOffset: 120, Size: 9000, FirstTimestamp: clock.Add(-10 * time.Minute).UnixMilli(), MaxTimestamp: clock.Add(-time.Minute).UnixMilli(), IndexEntries: 2, TimeIndexEntries: 2, Active: true},
				}}},
		},
		leaders: map[string]nodeapi.Partition{
			"orders/2": {Topic: "orders", Partition: 2, Role: "leader", Leader: 2, LeaderEpoch: 1, Replicas: []int32{2, 0, 1}, ISR: []int32{2, 0, 1},
				LogStartOffset: 0, LastStableOffset: 40, HighWatermark: 57, LogEndOffset: 63, Followers: []nodeapi.Follower{
					{ID: 0, LogEndOffset: 63, Lag: 0, LastCaughtUp: &lastRun, LastFetch: &lastRun, CaughtUp: true, InISR: true},
					{ID: 1, LogEndOffset: 57, Lag: 6, LastCaughtUp: &lastRun, LastFetch: &lastRun, CaughtUp: true, InISR: true},
				}},
		},
		hanging: []inspect.HangingTransaction{
			{Topic: "orders", Partition: 2, ProducerID: 3999, ProducerEpoch: 1, CoordinatorEpoch: 4, StartOffset: 40, LastTimestamp: clock.Add(-40 * time.Minute).UnixMilli()},
			{Topic: "payments", Partition: 0, ProducerID: 4002, ProducerEpoch: 7, CoordinatorEpoch: 2, StartOffset: 12, LastTimestamp: clock.Add(-20 * time.Minute).UnixMilli(),
				TransactionalID: new("ship-1"), CoordinatorState: "CompleteCommit"},
		},
		events: []nodeapi.Event{
			{Seq: 5, Time: clock.Add(-4 * time.Minute), NodeID: 1, Kind: nodeapi.EventLeaderChange, Topic: "__consumer_offsets", Partition: 3,
				Detail: map[string]any{"leader": 1.0, "old_leader": -1.0, "leader_epoch": 0.0, "role": "leader"}},
			{Seq: 7, Time: clock.Add(-3 * time.Minute), NodeID: 0, Kind: nodeapi.EventLeaderChange, Topic: "orders", Partition: 0,
				Detail: map[string]any{"leader": 0.0, "old_leader": -1.0, "leader_epoch": 2.0, "role": "leader"}},
			{Seq: 8, Time: clock.Add(-2 * time.Minute), NodeID: 1, Kind: nodeapi.EventISRShrink, Topic: "orders", Partition: 1,
				Detail: map[string]any{"old_isr": []any{1.0, 2.0, 0.0}, "new_isr": []any{1.0, 2.0}, "removed": []any{0.0}}},
			{Seq: 3, Time: clock.Add(-150 * time.Second), NodeID: 2, Kind: nodeapi.EventISRShrink, Topic: "orders", Partition: 2,
				Detail: map[string]any{"old_isr": []any{2.0, 0.0, 1.0}, "new_isr": []any{2.0, 0.0}, "removed": []any{1.0}}},
			{Seq: 4, Time: clock.Add(-100 * time.Second), NodeID: 2, Kind: nodeapi.EventISRExpand, Topic: "orders", Partition: 2,
				Detail: map[string]any{"old_isr": []any{2.0, 0.0}, "new_isr": []any{2.0, 0.0, 1.0}, "added": []any{1.0}}},
			{Seq: 9, Time: clock.Add(-time.Minute), NodeID: 0, Kind: nodeapi.EventRebalance, Partition: -1, Group: "billing",
				Detail: map[string]any{"generation": 4.0, "members": 2.0, "reason": "member joined", "state": "CompletingRebalance"}},
			{Seq: 10, Time: clock.Add(-30 * time.Second), NodeID: 0, Kind: nodeapi.EventAuthorizationDenied, Topic: "payments", Partition: -1,
				Detail: map[string]any{"principal": "User:app", "client_id": "billing-1", "address": "10.0.0.7:51234", "api": "Produce",
					"operation": "WRITE", "resource_type": "TOPIC", "resource_name": "payments", "pattern_type": "LITERAL", "rule": "MatchingAcl", "repeats": 41.0}},
			{Seq: 11, Time: clock.Add(-20 * time.Second), NodeID: 1, Kind: nodeapi.EventAuthenticationFailed, Partition: -1,
				Detail: map[string]any{"principal": "User:app", "client_id": "billing-1", "address": "10.0.0.7:51240", "listener": "SASL_SSL",
					"api": "SASLAuthenticate", "mechanism": "SCRAM-SHA-512", "reason": "wrong proof"}},
		},
		users: []inspect.User{
			{User: "admin", Credentials: []inspect.UserCredential{{Mechanism: "SCRAM-SHA-512", Iterations: 8192}}},
			{User: "app", Credentials: []inspect.UserCredential{{Mechanism: "SCRAM-SHA-256", Iterations: 4096}, {Mechanism: "SCRAM-SHA-512", Iterations: 8192}}},
		},
		acls: []inspect.ACL{
			{ResourceType: "GROUP", ResourceName: "*", PatternType: "LITERAL", Principal: "User:app", Host: "*", Operation: "READ", Permission: "ALLOW"},
			{ResourceType: "TOPIC", ResourceName: "*", PatternType: "LITERAL", Principal: "User:app", Host: "*", Operation: "ALL", Permission: "ALLOW"},
			{ResourceType: "TOPIC", ResourceName: "orders", PatternType: "PREFIXED", Principal: "User:alice", Host: "*", Operation: "WRITE", Permission: "ALLOW"},
			{ResourceType: "TOPIC", ResourceName: "payments", PatternType: "LITERAL", Principal: "User:app", Host: "10.0.0.0/8", Operation: "WRITE", Permission: "DENY"},
		},
		quotas: []inspect.ClientQuota{
			{Entity: inspect.QuotaEntity{{Type: "user", Name: "app"}}, Values: map[string]float64{"producer_byte_rate": 1048576, "consumer_byte_rate": 2097152}},
			{Entity: inspect.QuotaEntity{{Type: "user", Default: true}, {Type: "client-id", Name: "loader"}}, Values: map[string]float64{"request_percentage": 50}},
		},
		index: map[int64]nodeapi.Index{
			50: {NodeID: 0, Topic: "orders", Partition: 0, BaseOffset: 50, Kind: nodeapi.IndexOffset, Total: 3,
				Offsets: []nodeapi.OffsetEntry{{Offset: 52, Position: 0}, {Offset: 60, Position: 4180}, {Offset: 71, Position: 8377}}},
		},
	}
}

// driver runs a model as the program would, synchronously: it runs the
// commands Update returns and feeds their messages back, except the
// refresh timer, which it records for the test to fire.
type driver struct {
	t     *testing.T
	m     *model
	ticks []tickMsg
	quit  bool
}

func newDriver(t *testing.T, src Source, opts Options) *driver {
	t.Helper()
	opts.Now = func() time.Time { return clock }
	opts.Brokers = "127.0.0.1:9092"
	d := &driver{t: t, m: newModel(src, opts)}
	d.m.schedule = func(_ time.Duration, msg tea.Msg) tea.Cmd {
		d.ticks = append(d.ticks, msg.(tickMsg))
		return nil
	}
	d.send(tea.WindowSizeMsg{Width: 110, Height: 16})
	d.run(d.m.Init())
	return d
}

// run runs cmd and what follows from it until nothing is left to run.
func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			d.run(c)
		}
	case tea.QuitMsg:
		d.quit = true
	default:
		d.send(msg)
	}
}

func (d *driver) send(msg tea.Msg) {
	_, cmd := d.m.Update(msg)
	d.run(cmd)
}

// press sends keys: single characters, or names (enter, esc, tab,
// backspace).
func (d *driver) press(keys ...string) {
	for _, k := range keys {
		d.send(keyMsg(k))
	}
}

// typeText sends each character of s as a key.
func (d *driver) typeText(s string) {
	for _, r := range s {
		d.send(keyMsg(string(r)))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// tick fires the last refresh timer armed.
func (d *driver) tick() {
	d.t.Helper()
	if len(d.ticks) == 0 {
		d.t.Fatal("no refresh timer armed")
	}
	d.send(d.ticks[len(d.ticks)-1])
}

// screen returns the window as text, ANSI stripped, trailing blanks cut.
func (d *driver) screen() string {
	lines := strings.Split(ansi.Strip(d.m.render()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// golden compares the window with testdata/name.golden, or rewrites it
// with -update.
func (d *driver) golden(name string) {
	d.t.Helper()
	got := d.screen()
	for i, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > d.m.width {
			d.t.Errorf("%s: line %d is %d cells wide, the window %d: it would wrap", name, i+1, w, d.m.width)
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			d.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		d.t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		d.t.Errorf("%s differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}
