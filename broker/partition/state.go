package partition

import "slices"

// LeaderState is who leads the partition, at which epochs and with which
// replicas in sync: the partition's entry of the metadata image, held as one
// value. SetLeaderState keeps its own copy; the slices of a LeaderState the
// partition hands out are shared and must not be modified.
type LeaderState struct {
	// Leader is the broker id of the leader; -1 when there is none.
	Leader int32
	// Epoch is the leader epoch, stamped on every batch the leader appends
	// and checked against the epoch clients send.
	Epoch int32
	// PartitionEpoch counts every change of the partition's leader, ISR or
	// replicas; ISR changes will be proposed to the controller at it.
	PartitionEpoch int32
	// Replicas are the assigned replicas, the preferred leader first.
	Replicas []int32
	// ISR are the in-sync replicas, the leader among them.
	ISR []int32
	// Ineligible are the replicas on brokers that are fenced, shutting
	// down or not registered: they may not join the ISR, and from outside
	// it they do not hold the high watermark back however recently they
	// caught up (Kafka's Partition.isReplicaIsrEligible).
	Ineligible []int32
}

// noLeader is the state of a partition before its first SetLeaderState.
var noLeader = LeaderState{Leader: -1, Epoch: -1, PartitionEpoch: -1}

// clone returns a copy that shares no memory with s.
func (s LeaderState) clone() LeaderState {
	s.Replicas = slices.Clone(s.Replicas)
	s.ISR = slices.Clone(s.ISR)
	s.Ineligible = slices.Clone(s.Ineligible)
	return s
}
