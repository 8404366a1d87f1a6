package group

import "github.com/klogdev/klog/broker/metadata"

// PartitionFor returns the __consumer_offsets partition that holds group,
// as Kafka computes it (see metadata.CoordinatorPartition).
func PartitionFor(group string, partitions int32) int32 {
	return metadata.CoordinatorPartition(group, partitions)
}
