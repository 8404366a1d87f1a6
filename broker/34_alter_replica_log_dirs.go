package broker

// AlterReplicaLogDirs (key 34), versions 1-2 (Kafka 4.0 removed 0).
//
// Kafka moves a replica between the directories of its log.dirs. A klog
// node has one log directory (logDir, the one DescribeLogDirs names), so
// every replica is already where a request for that directory wants it:
// the partition is answered as Kafka's ReplicaManager.alterReplicaLogDirs
// answers a replica already in its destination, with no error and no
// move. Any other directory is LOG_DIR_NOT_FOUND, as Kafka answers a
// directory not in its log.dirs, checked first; then a partition of a
// topic this node has no replica of is REPLICA_NOT_AVAILABLE and one of no
// topic UNKNOWN_TOPIC_OR_PARTITION; a topic whose name is too long for
// the directory a move would create, INVALID_TOPIC_EXCEPTION. Without
// ALTER on the cluster every partition is CLUSTER_AUTHORIZATION_FAILED.
// A partition named twice, for two directories or the same, is answered
// once, for the last, as Kafka keys the request by partition; refused,
// Kafka echoes each directory's entries instead, twice for a partition
// named twice, which klog does not (duplicates.go: no answer holds more
// than the request names).
//
// Several log directories per node are deliberately not supported:
// docs/compatibility.md says why.

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// maxLogDirName is the longest directory name a file system takes; Kafka
// refuses to move a partition whose future directory's name ("TOPIC-N."
// then 32 hex digits and "-future") would be longer.
const maxLogDirName = 255

func handleAlterReplicaLogDirs(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterReplicaLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	var order []partitionKey
	dirOf := map[partitionKey]string{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				key := partitionKey{t.Topic, p}
				if _, seen := dirOf[key]; !seen {
					order = append(order, key)
				}
				dirOf[key] = d.Dir
			}
		}
	}
	authorized := n.authorizeCluster(rc, kmsg.ACLOperationAlter)
	img := n.ctrl.Image()
	topicAt := map[string]int{}
	for _, key := range order {
		code := int16(0)
		switch {
		case !authorized:
			code = kerr.ClusterAuthorizationFailed.Code
		case dirOf[key] != n.logDir():
			code = kerr.LogDirNotFound.Code
		case len(key.topic)+len(strconv.Itoa(int(key.partition)))+len("-.-future")+32 > maxLogDirName:
			code = kerr.InvalidTopicException.Code
		default:
			if _, err := n.localReplica(img, key.topic, key.partition); err == kerr.NotLeaderForPartition {
				// This API answers Kafka's NOT_LEADER_OR_FOLLOWER as
				// REPLICA_NOT_AVAILABLE.
				code = kerr.ReplicaNotAvailable.Code
			} else if err != nil {
				code = err.Code
			}
		}
		i, ok := topicAt[key.topic]
		if !ok {
			i = len(resp.Topics)
			topicAt[key.topic] = i
			rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
			rt.Topic = key.topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
		rp.Partition, rp.ErrorCode = key.partition, code
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp, nil
}
