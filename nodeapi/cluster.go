package nodeapi

import (
	"context"
	"net/http"
	"time"
)

// PathCluster is GET: the cluster as the node sees it (Cluster).
const PathCluster = "/v1/cluster"

// Cluster is GET /v1/cluster: the node's metadata image (brokers, active
// controller) and its own view of the metadata quorum, asking no other
// node. Its lists hold the cluster's brokers and quorum members.
type Cluster struct {
	NodeID    int32  `json:"node_id"`
	ClusterID string `json:"cluster_id"`
	// Controller is the active controller as the node's metadata
	// records it; -1 when unknown.
	Controller int32    `json:"controller"`
	Raft       Raft     `json:"raft"`
	Brokers    []Broker `json:"brokers"`
	// Voters are the metadata quorum's voters, Observers its broker-only
	// nodes, as the node's Raft configuration has them.
	Voters    []QuorumMember `json:"voters"`
	Observers []QuorumMember `json:"observers"`
}

// Raft is the node's own state in the metadata quorum (Raft indexes).
type Raft struct {
	// Role is leader, follower, candidate, observer (a broker-only node)
	// or shutdown.
	Role string `json:"role"`
	Term uint64 `json:"term"`
	// Leader is the Raft leader the node knows of; -1 when none.
	Leader int32 `json:"leader"`
	// CommitIndex is the last index the node knows committed,
	// AppliedIndex the last it applied, LastLogIndex the last in its log,
	// and MetadataOffset the index of the metadata image it serves.
	CommitIndex    uint64 `json:"commit_index"`
	AppliedIndex   uint64 `json:"applied_index"`
	LastLogIndex   uint64 `json:"last_log_index"`
	MetadataOffset uint64 `json:"metadata_offset"`
	// LastContact is when a follower last heard from the leader; absent
	// on the leader and before any contact.
	LastContact *time.Time `json:"last_contact,omitempty"`
}

// Broker is a registered broker as the metadata image has it.
type Broker struct {
	ID int32 `json:"id"`
	// Kafka is its Kafka listener, host:port.
	Kafka string `json:"kafka"`
	Rack  string `json:"rack,omitempty"`
	// Fenced is set while its session is expired (no heartbeat within
	// broker.session.timeout.ms), ShuttingDown during a controlled
	// shutdown; Alive is neither: it may lead and be in an ISR.
	Fenced       bool `json:"fenced"`
	ShuttingDown bool `json:"shutting_down"`
	Alive        bool `json:"alive"`
}

// QuorumMember is a member of the metadata quorum: its node ID and quorum
// address (none for the single-node quorum).
type QuorumMember struct {
	ID      int32  `json:"id"`
	Address string `json:"address,omitempty"`
}

// Cluster is GET /v1/cluster.
func (c *Client) Cluster(ctx context.Context) (Cluster, error) {
	var out Cluster
	return out, c.call(ctx, http.MethodGet, PathCluster, nil, &out)
}

// PathThroughput is GET: the node's traffic counters since it started
// (Throughput); a reader's rates are the differences between two reads.
const PathThroughput = "/v1/throughput"

// Throughput is GET /v1/throughput: totals over every topic the node
// serves. BytesIn and MessagesIn count what producers wrote to its
// leaders, BytesOut what consumers fetched (not followers), Requests every
// request it answered.
type Throughput struct {
	NodeID     int32  `json:"node_id"`
	BytesIn    uint64 `json:"bytes_in"`
	BytesOut   uint64 `json:"bytes_out"`
	MessagesIn uint64 `json:"messages_in"`
	Requests   uint64 `json:"requests"`
}

// Throughput is GET /v1/throughput.
func (c *Client) Throughput(ctx context.Context) (Throughput, error) {
	var out Throughput
	return out, c.call(ctx, http.MethodGet, PathThroughput, nil, &out)
}
