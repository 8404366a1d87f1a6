package supervisor

import "strconv"

// Defaults are the broker configs klog up -n gives every node of a cluster
// of n nodes unless the user sets them (-X): the durability Kafka's
// production defaults ask for, capped at the cluster's size. With three
// nodes or more a topic created without a replication factor has three
// replicas and acks=all needs two of them in sync, so one node can fail
// without losing an acknowledged write or stopping acks=all producers; two
// nodes give two replicas and one in sync. The coordinators' internal
// topics (__consumer_offsets, __transaction_state) take the same
// replication factor and minimum. A single node (klog up without -n, or -n
// 1) keeps the broker's own defaults of one.
func Defaults(n int) map[string]string {
	if n < 2 {
		return nil
	}
	rf := strconv.Itoa(min(n, 3))
	minISR := strconv.Itoa(min(n-1, 2))
	return map[string]string{
		"default.replication.factor":               rf,
		"min.insync.replicas":                      minISR,
		"offsets.topic.replication.factor":         rf,
		"transaction.state.log.replication.factor": rf,
		"transaction.state.log.min.isr":            minISR,
	}
}
