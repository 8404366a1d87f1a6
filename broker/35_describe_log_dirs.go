package broker

// DescribeLogDirs (key 35), versions 1-5 (Kafka 4.0 removed 0).
//
// klog has one log directory, its data directory, answered as Kafka's
// ReplicaManager.describeLogDirs answers each of its log.dirs: the
// absolute path, the size and free space of its file system (TotalBytes,
// UsableBytes, v4+), and for each requested partition with a replica on
// this node (every one when Topics is null), leader or follower, its size
// in bytes and its offset lag, Kafka's ReplicaManager.getLogEndOffsetLag
// for a current replica: max(HW - LEO, 0) of this node's own replica,
// which is 0 as the high watermark never passes the log end (only a
// future replica, which klog does not have, would lag: IsFuture is
// false). Partitions the node does not hold are left out, and so are
// topics left with none; on several nodes each answers for its own
// replicas (kadm's DescribeAllLogDirs asks them all). The directory is
// never cordoned (v5).
//
// A node with --memory keeps its logs in memory, under the root of its
// in-memory file system: the directory is answered as "memory:" and that
// root, and TotalBytes and UsableBytes as -1, the protocol's "unknown",
// since no file system holds them. A file system klog cannot measure
// answers the directory with KAFKA_STORAGE_ERROR and no topics.

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/store/vfs"
)

func handleDescribeLogDirs(n *Node, _ context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationDescribe) {
		// Kafka answers no directory; v3+ says why.
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.TotalBytes, dir.UsableBytes = -1, -1
	dir.Dir = n.logDir()
	if n.mem == nil {
		total, usable, err := vfs.Space(dir.Dir)
		if err != nil {
			n.logger.Warn("describe log dirs: measure the data directory", "dir", dir.Dir, "err", err)
			dir.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, dir)
			return resp, nil
		}
		dir.TotalBytes, dir.UsableBytes = total, usable
	}

	var wanted map[partitionKey]bool // nil: every partition
	if req.Topics != nil {
		wanted = map[partitionKey]bool{}
		for _, rt := range req.Topics {
			for _, index := range rt.Partitions {
				wanted[partitionKey{rt.Topic, index}] = true
			}
		}
	}
	var parts []*partition.Partition
	n.mu.RLock()
	for key, p := range n.mu.parts {
		if wanted == nil || wanted[key] {
			parts = append(parts, p)
		}
	}
	n.mu.RUnlock()
	slices.SortFunc(parts, func(a, b *partition.Partition) int {
		return cmp.Or(cmp.Compare(a.Topic(), b.Topic()), cmp.Compare(a.Index(), b.Index()))
	})
	for _, p := range parts {
		if len(dir.Topics) == 0 || dir.Topics[len(dir.Topics)-1].Topic != p.Topic() {
			dt := kmsg.NewDescribeLogDirsResponseDirTopic()
			dt.Topic = p.Topic()
			dir.Topics = append(dir.Topics, dt)
		}
		dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		dp.Partition, dp.Size = p.Index(), p.Size()
		dp.OffsetLag = max(p.HighWatermark()-p.LogEndOffset(), 0)
		dt := &dir.Topics[len(dir.Topics)-1]
		dt.Partitions = append(dt.Partitions, dp)
	}
	resp.Dirs = append(resp.Dirs, dir)
	return resp, nil
}

// logDir is the node's one log directory as DescribeLogDirs names it and
// AlterReplicaLogDirs takes it: the data directory's absolute path, or
// "memory:" and the root of a --memory node's file system.
func (n *Node) logDir() string {
	if n.mem != nil {
		return "memory:" + n.dataDir
	}
	if abs, err := filepath.Abs(n.dataDir); err == nil {
		return abs
	}
	return n.dataDir
}
