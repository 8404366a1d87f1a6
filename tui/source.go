package tui

import (
	"context"
	"errors"
	"time"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
)

// Source is everything the TUI reads of a cluster. Its values are plain:
// no client library's types reach the screens, so a screen can be tested
// with a fake Source and the cluster can be any Kafka-compatible one.
//
// Each method is called from a tea.Cmd, never from Update or View, and is
// bounded by its context. A method may return a partial answer together
// with an error (some nodes or items could not be read): the screen shows
// both.
//
// The methods reading a klog node's admin API (today Cleaner) return an
// error wrapping ErrNoAdminAPI when the cluster has none, or it was not
// found; their screens then say so. New admin endpoints add methods here.
type Source interface {
	// Overview is the cluster's brokers and partition health from the
	// freshest metadata, every node known and whether it is up, and how
	// current the counts are.
	Overview(ctx context.Context) (ClusterState, error)
	// Nodes is each node's Raft state and traffic counters (admin API).
	Nodes(ctx context.Context) ([]NodeState, error)
	// Topics lists the topics, internal ones included, sorted by name.
	Topics(ctx context.Context) ([]inspect.TopicListing, error)
	// Topic describes one topic's partitions with their offsets.
	Topic(ctx context.Context, name string) (TopicDetail, error)
	// Groups lists the consumer groups, sorted by name.
	Groups(ctx context.Context) ([]inspect.GroupListing, error)
	// Group describes one group: members, committed offsets and lag.
	Group(ctx context.Context, name string) (inspect.GroupDescription, error)
	// Transactions describes every transactional id, sorted.
	Transactions(ctx context.Context) ([]inspect.Transaction, error)
	// Cleaner is the log cleaner's state on each node (admin API).
	Cleaner(ctx context.Context) ([]NodeCleaner, error)
	// Telemetry is what clients pushed to each node (KIP-714, admin
	// API).
	Telemetry(ctx context.Context) ([]NodeTelemetry, error)
	// Partition is one partition over the Kafka protocol and, with the
	// admin API, its leader's state of every replica.
	Partition(ctx context.Context, topic string, partition int32) (PartitionDetail, error)
	// Tail is the last n records of each partition of topic, newest
	// first (inspect.Tail).
	Tail(ctx context.Context, topic string, n int) ([]inspect.TailRecord, error)
	// Configs is every config of topic, or with topic "" of broker, by
	// key (DescribeConfigs).
	Configs(ctx context.Context, topic string, broker int32) ([]inspect.ConfigDescription, error)
	// TxnPartitions describes producerID's transaction on each of its
	// partitions: where it started, the LSO and HW.
	TxnPartitions(ctx context.Context, producerID int64, parts []inspect.TopicPartitions) ([]TxnPartition, error)
	// TxnMarkers is the outcome of the markers of transactionalID's
	// last or current end, per partition, from its coordinator's admin
	// API; none before the first end that coordinator ran.
	TxnMarkers(ctx context.Context, transactionalID string) ([]nodeapi.TransactionMarker, error)
	// Hanging finds the hanging transactions: open longer than maxAge
	// with no coordinator finishing them (inspect.HangingTransactions).
	Hanging(ctx context.Context, maxAge time.Duration) ([]inspect.HangingTransaction, error)
	// AbortTransaction writes an abort marker for a hanging transaction
	// (inspect.AbortTransaction); the one call that changes the cluster.
	AbortTransaction(ctx context.Context, t inspect.HangingTransaction) error
	// Users lists the users with SCRAM credentials, their mechanisms
	// and iterations, never a secret (inspect.ListUsers).
	Users(ctx context.Context) ([]inspect.User, error)
	// ACLs lists every ACL, sorted by resource (inspect.ListACLs).
	ACLs(ctx context.Context) ([]inspect.ACL, error)
	// Quotas lists every client quota (inspect.ListClientQuotas).
	Quotas(ctx context.Context) ([]inspect.ClientQuota, error)
	// Events is the nodes' recent events merged by time, oldest first,
	// the last maxEvents of each node (admin API).
	Events(ctx context.Context) ([]nodeapi.Event, error)
	// Batch is the batch holding offset in the partition's log on its
	// leader (admin API).
	Batch(ctx context.Context, topic string, partition int32, offset int64) (nodeapi.Batch, error)
	// Segments is a partition's log on its leader (admin API).
	Segments(ctx context.Context, topic string, partition int32) (PartitionSegments, error)
	// Index is the first page of the offset index (kind
	// nodeapi.IndexOffset) or time index (nodeapi.IndexTime) of the
	// partition's segment at base, on its leader (admin API).
	Index(ctx context.Context, topic string, partition int32, base int64, kind string) (nodeapi.Index, error)
}

// ClusterState is the cluster as the nodes answering describe it now.
type ClusterState struct {
	// Overview is the freshest metadata among the nodes' answers
	// (brokers listed are the live ones); From is the node it is from,
	// -1 when unknown.
	Overview inspect.ClusterOverview
	From     int32
	// Nodes is every node known, up or not, sorted by id: listed in
	// some node's metadata or registrations, a voter or observer of the
	// metadata quorum, or seen before.
	Nodes []NodeHealth
	// Stale says why Overview's counts may be out of date ("" when they
	// are current): the metadata quorum has no leader, so no node's
	// metadata moves, or the node answering lags the quorum.
	Stale string
}

// NodeHealth is one node: whether the TUI reached it now, how the
// controller has it registered, and its progress in the metadata quorum.
type NodeHealth struct {
	NodeID  int32
	Address string // "" when unknown
	Rack    string
	// Reachable: the node answered now; Err is why it did not.
	Reachable bool
	Err       string
	// Listed: the freshest metadata lists it among the live brokers.
	// Fenced: the controller fenced it (its heartbeats stopped).
	Listed, Fenced bool
	// InQuorum: it is a voter or observer of the metadata quorum, with
	// when it last fetched the metadata log (zero when unknown).
	InQuorum, Voter bool
	LastFetch       time.Time
}

// Down reports whether the node is down as the cluster sees it: fenced,
// or not answering.
func (n NodeHealth) Down() bool { return n.Fenced || !n.Reachable }

// NodeState is one node's state in the metadata quorum and its traffic
// counters, from its admin API.
type NodeState struct {
	NodeID     int32
	Raft       nodeapi.Raft
	Throughput nodeapi.Throughput
}

// TxnPartition is one partition of a transaction: StartOffset is the
// first offset of the producer's open transaction there (-1 when none is
// open), where the partition's LSO stops while it is.
type TxnPartition struct {
	Topic            string
	Partition        int32
	StartOffset      int64
	LastStableOffset int64
	HighWatermark    int64
	LastSequence     int32
	Error            string
}

// PartitionDetail is one partition: Kafka as Metadata and ListOffsets
// give it, Leader as its leader's admin API does (nil without one;
// AdminErr says why).
type PartitionDetail struct {
	Topic    string
	Kafka    TopicPartition
	Leader   *nodeapi.Partition
	AdminErr string
	// Timeline is the partition's ISR and leader changes among the
	// nodes' recent events, oldest first (admin API).
	Timeline []nodeapi.Event
}

// PartitionSegments is a partition's log on one node: the node's replica
// state and its segments.
type PartitionSegments struct {
	Node      int32
	Partition nodeapi.Partition
	Segments  nodeapi.Segments
}

// ErrNoAdminAPI reports that the cluster's admin API is not available:
// the cluster is not klog, runs without it, or its address is unknown.
var ErrNoAdminAPI = errors.New("admin API not available")

// TopicDetail is one topic and its partitions.
type TopicDetail struct {
	Name              string
	Internal          bool
	ReplicationFactor int
	Partitions        []TopicPartition
}

// TopicPartition is one partition of a topic. The offsets are -1 when they
// could not be listed; Error says why.
type TopicPartition struct {
	Partition        int32
	Leader           int32
	LeaderEpoch      int32
	Replicas         []int32
	ISR              []int32
	OfflineReplicas  []int32
	LogStartOffset   int64
	LastStableOffset int64
	HighWatermark    int64
	Error            string
}

// NodeTelemetry is one node's answer to GET /v1/telemetry: Telemetry, or
// Error when the node could not be asked.
type NodeTelemetry struct {
	Addr      string
	Telemetry nodeapi.Telemetry
	Error     string
}

// NodeCleaner is one node's answer to GET /v1/cleaner: Cleaner, or Error
// when the node could not be asked.
type NodeCleaner struct {
	Addr    string
	Cleaner nodeapi.Cleaner
	Error   string
}
