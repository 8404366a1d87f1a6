package broker

// DescribeQuorum (key 55), versions 0-2.
//
// Served from any node, as Kafka's brokers forward it to the active
// controller: the metadata quorum's leader and term (leader epoch), its
// commit index as high watermark, and the voters and observers (the
// broker-only nodes) with their log end offsets and last fetch and
// caught-up times (controller.DescribeQuorum says where klog takes them
// from; offsets are Raft log indexes). Version 2 adds each voter's
// CONTROLLER endpoint: its controller.quorum.voters address (none for the
// single-node quorum, which has no network address). The request must
// name __cluster_metadata partition 0 alone, else every partition named
// gets UNKNOWN_TOPIC_OR_PARTITION; a quorum without a leader answers
// NOT_LEADER_OR_FOLLOWER, as Kafka's raft client does on a non-leader.
// Replica directory IDs are zero: klog has no KIP-858 directories.

import (
	"context"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/wire"
)

// clusterMetadataLog is the topic name of Kafka's metadata log.
const clusterMetadataLog = "__cluster_metadata"

func handleDescribeQuorum(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeQuorumRequest)
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationDescribe) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, errorMessage(kerr.ClusterAuthorizationFailed)
		return resp, nil
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != clusterMetadataLog || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		for _, rt := range req.Topics {
			st := kmsg.NewDescribeQuorumResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewDescribeQuorumResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.UnknownTopicOrPartition.Code
				sp.ErrorMessage = kmsg.StringPtr(kerr.UnknownTopicOrPartition.Description)
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	st := kmsg.NewDescribeQuorumResponseTopic()
	st.Topic = clusterMetadataLog
	sp := kmsg.NewDescribeQuorumResponseTopicPartition()
	qs, err := n.ctrl.DescribeQuorum(ctx)
	if err != nil {
		sp.ErrorCode = kerr.NotLeaderForPartition.Code
		sp.ErrorMessage = kmsg.StringPtr(kerr.NotLeaderForPartition.Description)
		sp.LeaderID, sp.LeaderEpoch, sp.HighWatermark = -1, -1, -1
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
		return resp, nil
	}
	sp.LeaderID, sp.LeaderEpoch, sp.HighWatermark = qs.LeaderID, qs.LeaderEpoch, qs.HighWatermark
	// Kafka's answer carries empty messages, not null, when all is well.
	resp.ErrorMessage, sp.ErrorMessage = kmsg.StringPtr(""), kmsg.StringPtr("")
	sp.CurrentVoters = replicaStates(qs.Voters)
	sp.Observers = replicaStates(qs.Observers)
	st.Partitions = append(st.Partitions, sp)
	resp.Topics = append(resp.Topics, st)
	addrs := n.ctrl.VoterAddrs()
	for _, v := range qs.Voters {
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = v.ID
		node.Listeners = []kmsg.DescribeQuorumResponseNodeListener{}
		if host, port, err := net.SplitHostPort(addrs[v.ID]); err == nil {
			if p, err := strconv.ParseUint(port, 10, 16); err == nil {
				l := kmsg.NewDescribeQuorumResponseNodeListener()
				l.Name, l.Host, l.Port = "CONTROLLER", host, uint16(p)
				node.Listeners = append(node.Listeners, l)
			}
		}
		resp.Nodes = append(resp.Nodes, node)
	}
	return resp, nil
}

func replicaStates(rs []controller.ReplicaState) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(rs))
	for _, r := range rs {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID, s.LogEndOffset, s.LastFetchTimestamp, s.LastCaughtUpTimestamp = r.ID, r.LogEndOffset, r.LastFetch, r.LastCaughtUp
		out = append(out, s)
	}
	return out
}
