package inspect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// NodeAnswer is what one node says of the cluster when asked directly,
// not through a client's cached metadata: its own metadata, the brokers
// registered with the controller (fenced ones too) and the metadata
// quorum. A part the node did not answer is nil with its error.
type NodeAnswer struct {
	Addr string
	// Overview is the node's metadata (Metadata of every topic);
	// LeaderEpochs sums its partitions' leader epochs, which only grow:
	// of two nodes' answers the one with the higher sum is the newer.
	Overview     *ClusterOverview
	LeaderEpochs int64
	MetadataErr  error
	// Registered is DescribeCluster v2 with its fenced brokers.
	Registered    []RegisteredBroker
	RegisteredErr error
	// Quorum is DescribeQuorum as the node answers it.
	Quorum    *Quorum
	QuorumErr error
}

// RegisteredBroker is a broker as the controller has it registered: a
// fenced one stopped heartbeating (or shut down) and leads nothing.
type RegisteredBroker struct {
	NodeID  int32
	Address string
	Rack    string
	Fenced  bool
}

// Quorum is the metadata quorum (KRaft's __cluster_metadata): its leader
// and epoch, the offset committed (high watermark), and each voter's and
// observer's progress.
type Quorum struct {
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Replicas      []QuorumReplica
}

// QuorumReplica is a voter's or observer's progress as the quorum's
// leader sees it; the times are zero when unknown.
type QuorumReplica struct {
	NodeID       int32
	Voter        bool
	LogEndOffset int64
	LastFetch    time.Time
	LastCaughtUp time.Time
}

// Replica returns node id's progress in the quorum.
func (q *Quorum) Replica(id int32) (QuorumReplica, bool) {
	i := slices.IndexFunc(q.Replicas, func(r QuorumReplica) bool { return r.NodeID == id })
	if i < 0 {
		return QuorumReplica{}, false
	}
	return q.Replicas[i], true
}

// AskNode asks the node b (of a client whose only broker is at addr) for
// its metadata, registered brokers and quorum. A node that does not
// answer the metadata is not asked the rest.
func AskNode(ctx context.Context, b *kgo.Broker, addr string) NodeAnswer {
	a := NodeAnswer{Addr: addr}
	md := kmsg.NewPtrMetadataRequest()
	resp, err := b.Request(ctx, md)
	if err != nil {
		a.MetadataErr = err
		return a
	}
	o, epochs := overviewOfResponse(resp.(*kmsg.MetadataResponse))
	a.Overview, a.LeaderEpochs = &o, epochs
	a.Registered, a.RegisteredErr = registeredBrokers(ctx, b)
	a.Quorum, a.QuorumErr = describeQuorum(ctx, b)
	return a
}

// overviewOfResponse counts what Overview reports in one node's Metadata
// answer, and sums its leader epochs.
func overviewOfResponse(resp *kmsg.MetadataResponse) (ClusterOverview, int64) {
	md := kadm.Metadata{Controller: resp.ControllerID, Topics: kadm.TopicDetails{}}
	if resp.ClusterID != nil {
		md.Cluster = *resp.ClusterID
	}
	for _, b := range resp.Brokers {
		md.Brokers = append(md.Brokers, kadm.BrokerDetail{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	var epochs int64
	for _, t := range resp.Topics {
		name := fmt.Sprintf("%x", t.TopicID) // a topic named by id only
		if t.Topic != nil {
			name = *t.Topic
		}
		td := kadm.TopicDetail{Topic: name, IsInternal: t.IsInternal, Partitions: kadm.PartitionDetails{}, Err: kerr.ErrorForCode(t.ErrorCode)}
		for _, p := range t.Partitions {
			td.Partitions[p.Partition] = kadm.PartitionDetail{Topic: name, Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
				Replicas: p.Replicas, ISR: p.ISR, OfflineReplicas: p.OfflineReplicas, Err: kerr.ErrorForCode(p.ErrorCode)}
			if td.Err == nil {
				epochs += int64(max(p.LeaderEpoch, 0))
			}
		}
		md.Topics[name] = td
	}
	return overviewOf(md), epochs
}

// registeredBrokers asks b for the registered brokers, fenced ones
// included (DescribeCluster v2; older versions list the unfenced only).
func registeredBrokers(ctx context.Context, b *kgo.Broker) ([]RegisteredBroker, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.EndpointType = 1
	req.IncludeFencedBrokers = true
	r, err := b.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := r.(*kmsg.DescribeClusterResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	out := make([]RegisteredBroker, 0, len(resp.Brokers))
	for _, rb := range resp.Brokers {
		br := RegisteredBroker{NodeID: rb.NodeID, Address: net.JoinHostPort(rb.Host, strconv.Itoa(int(rb.Port))), Fenced: rb.IsFenced}
		if rb.Rack != nil {
			br.Rack = *rb.Rack
		}
		out = append(out, br)
	}
	return out, nil
}

// ErrNoQuorumLeader is DescribeQuorum's error when the node knows no
// leader of the metadata quorum: the quorum lost its majority, or the
// node is cut off from it.
var ErrNoQuorumLeader = errors.New("no metadata quorum leader")

// describeQuorum asks b for the metadata quorum.
func describeQuorum(ctx context.Context, b *kgo.Broker) (*Quorum, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	r, err := b.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := r.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("describe quorum: %d topics in the answer", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); errors.Is(err, kerr.NotLeaderForPartition) || err == nil && p.LeaderID < 0 {
		return nil, ErrNoQuorumLeader
	} else if err != nil {
		return nil, err
	}
	q := &Quorum{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark}
	for i, rs := range append(slices.Clip(p.CurrentVoters), p.Observers...) {
		q.Replicas = append(q.Replicas, QuorumReplica{
			NodeID: rs.ReplicaID, Voter: i < len(p.CurrentVoters), LogEndOffset: rs.LogEndOffset,
			LastFetch: millis(rs.LastFetchTimestamp), LastCaughtUp: millis(rs.LastCaughtUpTimestamp),
		})
	}
	return q, nil
}

// millis is a protocol timestamp in milliseconds, zero when -1.
func millis(ms int64) time.Time {
	if ms < 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
