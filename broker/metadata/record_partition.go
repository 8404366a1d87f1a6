package metadata

import (
	"fmt"
	"math"
	"slices"
)

// PartitionChangeRecord changes a partition's leader, ISR or replicas; nil
// fields are unchanged. A leader change bumps the leader epoch; any change
// bumps the partition epoch (Kafka's PartitionChangeRecord semantics).
//
// IfLeaderEpoch and IfPartitionEpoch, when set, are preconditions: the
// record is rejected (ErrStaleLeaderEpoch, ErrStalePartitionEpoch) unless
// the partition still has those epochs when it is applied. Kafka's
// controller needs none, being one thread that checks and commits; klog's
// proposers check against the image they see, which the log may have
// moved past by the time the record commits, so the state machine checks
// again.
type PartitionChangeRecord struct {
	Topic     string  `json:"topic"`
	ID        UUID    `json:"id"`
	Partition int32   `json:"partition"`
	Leader    *int32  `json:"leader,omitempty"`
	ISR       []int32 `json:"isr"`      // null: unchanged; []: empty
	Replicas  []int32 `json:"replicas"` // null: unchanged
	// AddingReplicas and RemovingReplicas set the reassignment's (null:
	// unchanged; []: none, the reassignment is over or cancelled).
	AddingReplicas   []int32 `json:"addingReplicas"`
	RemovingReplicas []int32 `json:"removingReplicas"`
	// BumpLeaderEpoch bumps the leader epoch even when the leader stays,
	// as Kafka does when replicas leave the partition: their fetches at
	// the old epoch are then fenced.
	BumpLeaderEpoch  bool   `json:"bumpLeaderEpoch,omitempty"`
	IfLeaderEpoch    *int32 `json:"ifLeaderEpoch,omitempty"`
	IfPartitionEpoch *int32 `json:"ifPartitionEpoch,omitempty"`
}

// Type returns "PartitionChange".
func (*PartitionChangeRecord) Type() string { return "PartitionChange" }

// apply applies the record to img (see Image.Apply).
func (r *PartitionChangeRecord) apply(img *Image) (*Image, error) {
	t, err := img.liveTopic(r.Topic, r.ID)
	if err != nil {
		return nil, err
	}
	old, ok := t.Partition(r.Partition)
	if !ok {
		return nil, fmt.Errorf("%w: %s-%d does not exist", ErrInvalidRecord, r.Topic, r.Partition)
	}
	if r.IfLeaderEpoch != nil && *r.IfLeaderEpoch != old.LeaderEpoch {
		return nil, fmt.Errorf("%w: %s-%d has leader epoch %d, not %d", ErrStaleLeaderEpoch, r.Topic, r.Partition, old.LeaderEpoch, *r.IfLeaderEpoch)
	}
	if r.IfPartitionEpoch != nil && *r.IfPartitionEpoch != old.PartitionEpoch {
		return nil, fmt.Errorf("%w: %s-%d has partition epoch %d, not %d", ErrStalePartitionEpoch, r.Topic, r.Partition, old.PartitionEpoch, *r.IfPartitionEpoch)
	}
	p := old
	if r.Replicas != nil {
		p.Replicas = slices.Clone(r.Replicas)
	}
	if r.ISR != nil {
		p.ISR = slices.Clone(r.ISR)
	}
	if r.Leader != nil {
		p.Leader = *r.Leader
	}
	if r.AddingReplicas != nil {
		p.AddingReplicas = nilIfEmpty(r.AddingReplicas)
	}
	if r.RemovingReplicas != nil {
		p.RemovingReplicas = nilIfEmpty(r.RemovingReplicas)
	}
	if err := img.checkPartition(t.Name, p, old.Replicas); err != nil {
		return nil, err
	}
	changed := false
	if p.Leader != old.Leader || r.BumpLeaderEpoch {
		if old.LeaderEpoch == math.MaxInt32 {
			return nil, fmt.Errorf("%w: %s-%d leader epoch exhausted", ErrInvalidRecord, r.Topic, r.Partition)
		}
		p.LeaderEpoch++
		changed = true
	}
	if changed || !slices.Equal(p.ISR, old.ISR) || !slices.Equal(p.Replicas, old.Replicas) ||
		!slices.Equal(p.AddingReplicas, old.AddingReplicas) || !slices.Equal(p.RemovingReplicas, old.RemovingReplicas) {
		if old.PartitionEpoch == math.MaxInt32 {
			return nil, fmt.Errorf("%w: %s-%d partition epoch exhausted", ErrInvalidRecord, r.Topic, r.Partition)
		}
		p.PartitionEpoch++
	}
	nt := *t
	nt.Partitions = slices.Clone(t.Partitions)
	nt.Partitions[r.Partition] = p
	return img.withTopic(&nt), nil
}
