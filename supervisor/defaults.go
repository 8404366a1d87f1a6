package supervisor

import (
	"maps"
	"strconv"
)

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
//
// The liveness timings are shortened for nodes on one machine, talking
// over loopback (LocalTimings): Kafka's are sized for a network and a data
// centre's machines.
func Defaults(n int) map[string]string {
	if n < 2 {
		return nil
	}
	rf := strconv.Itoa(min(n, 3))
	minISR := strconv.Itoa(min(n-1, 2))
	d := map[string]string{
		"default.replication.factor":               rf,
		"min.insync.replicas":                      minISR,
		"offsets.topic.replication.factor":         rf,
		"transaction.state.log.replication.factor": rf,
		"transaction.state.log.min.isr":            minISR,
	}
	maps.Copy(d, LocalTimings)
	return d
}

// LocalTimings are the liveness configs of a local cluster's nodes, in
// Kafka's names, against Kafka's defaults of 2000, 9000 and 30000 ms. A
// node heartbeats the active controller every 250 ms and is fenced after
// 1.5 s without one (six heartbeats missed), so a hung or cut-off node's
// partitions get new leaders within about 2 s; one that exits is fenced
// at once on the supervisor's notice (exited.go). A follower that has
// not caught up for 3 s leaves the ISR. They leave room for a loaded
// machine: the quorum's own Raft heartbeat timeout is 300 ms.
var LocalTimings = map[string]string{
	"broker.heartbeat.interval.ms": "250",
	"broker.session.timeout.ms":    "1500",
	"replica.lag.time.max.ms":      "3000",
}
