package txn

import "github.com/klogdev/klog/broker/metadata"

// PartitionFor returns the __transaction_state partition that holds
// transactionalID, as Kafka computes it: the Java String.hashCode of the id
// (over UTF-16 code units, int32 overflow), made non-negative with Kafka's
// Utils.abs (math.MinInt32 maps to 0, every other value to its absolute
// value), modulo partitions.
func PartitionFor(transactionalID string, partitions int32) int32 {
	return metadata.CoordinatorPartition(transactionalID, partitions)
}
