package metadata

import (
	"fmt"
	"maps"
	"slices"
)

// MaxPartitions bounds the partition count of one topic, so a request can
// never make the image grow without bound.
const MaxPartitions = 1 << 16

// MaxProducerIDBlock bounds the size of one producer-ID block.
const MaxProducerIDBlock = 1 << 20

// Apply returns the image with r applied. It never modifies img, it is
// deterministic (the result depends only on img and r), and on error it
// returns nil and the image is unchanged. Index is not changed; see
// ApplyEntry.
func (img *Image) Apply(r Record) (*Image, error) {
	if err := checkPayload(r); err != nil {
		return nil, err
	}
	return r.apply(img)
}

// ApplyEntry applies the record at Raft log index index. An index at or
// below img.Index was applied already, so img is returned unchanged (replay
// is idempotent). Otherwise the result has Index set to index; when the
// record is rejected the result is img with only Index advanced, and the
// rejection is returned as the error.
func (img *Image) ApplyEntry(index uint64, r Record) (*Image, error) {
	if index <= img.Index {
		return img, nil
	}
	next, err := img.Apply(r)
	if err != nil {
		next = img.shallowCopy()
	}
	next.Index = index
	return next, err
}

// shallowCopy copies the image's top level; maps and topics stay shared.
func (img *Image) shallowCopy() *Image {
	n := *img
	return &n
}

// checkNewPartitions validates partitions to be added at index first and
// returns copies with fresh epochs.
func (img *Image) checkNewPartitions(topic string, first int, ps []Partition) ([]Partition, error) {
	if first+len(ps) > MaxPartitions {
		return nil, fmt.Errorf("%w: topic %q would have %d partitions, more than %d", ErrInvalidRecord, topic, first+len(ps), MaxPartitions)
	}
	out := make([]Partition, len(ps))
	for i, p := range ps {
		if int(p.Index) != first+i {
			return nil, fmt.Errorf("%w: topic %q partition %d at position %d", ErrInvalidRecord, topic, p.Index, first+i)
		}
		np := Partition{
			Index:    p.Index,
			Leader:   p.Leader,
			Replicas: slices.Clone(p.Replicas),
			ISR:      slices.Clone(p.ISR),
		}
		if err := img.checkPartition(topic, np, nil); err != nil {
			return nil, err
		}
		out[i] = np
	}
	return out, nil
}

// checkPartition validates one partition's replica state: replicas are
// distinct, the ISR a subset of them, and the leader in the ISR (or -1
// when there is none). The replicas not among was (all of them when was is
// nil) must be registered brokers: one that was a replica stays one when
// its broker is unregistered (UnregisterBrokerRecord), offline.
func (img *Image) checkPartition(topic string, p Partition, was []int32) error {
	if len(p.Replicas) == 0 {
		return fmt.Errorf("%w: %s-%d has no replicas", ErrInvalidRecord, topic, p.Index)
	}
	seen := make(map[int32]bool, len(p.Replicas))
	for _, id := range p.Replicas {
		if seen[id] {
			return fmt.Errorf("%w: %s-%d lists replica %d twice", ErrInvalidRecord, topic, p.Index, id)
		}
		seen[id] = true
		if _, ok := img.Brokers[id]; !ok && !slices.Contains(was, id) {
			return fmt.Errorf("%w: %s-%d replica %d is not a registered broker", ErrInvalidRecord, topic, p.Index, id)
		}
	}
	inISR := make(map[int32]bool, len(p.ISR))
	for _, id := range p.ISR {
		if !seen[id] || inISR[id] {
			return fmt.Errorf("%w: %s-%d isr %v is not a set of replicas %v", ErrInvalidRecord, topic, p.Index, p.ISR, p.Replicas)
		}
		inISR[id] = true
	}
	if p.Leader != -1 && !inISR[p.Leader] {
		return fmt.Errorf("%w: %s-%d leader %d not in isr %v", ErrInvalidRecord, topic, p.Index, p.Leader, p.ISR)
	}
	moving := make(map[int32]bool, len(p.AddingReplicas)+len(p.RemovingReplicas))
	for _, id := range slices.Concat(p.AddingReplicas, p.RemovingReplicas) {
		if !seen[id] || moving[id] {
			return fmt.Errorf("%w: %s-%d adding %v and removing %v are not disjoint sets of replicas %v",
				ErrInvalidRecord, topic, p.Index, p.AddingReplicas, p.RemovingReplicas, p.Replicas)
		}
		moving[id] = true
	}
	if len(p.RemovingReplicas) >= len(p.Replicas) {
		return fmt.Errorf("%w: %s-%d would remove all its replicas %v", ErrInvalidRecord, topic, p.Index, p.Replicas)
	}
	return nil
}

// nilIfEmpty returns a copy of s, or nil for an empty s.
func nilIfEmpty(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// liveTopic returns the topic named name, checking a non-zero id matches.
func (img *Image) liveTopic(name string, id UUID) (*Topic, error) {
	t, ok := img.Topics[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTopic, name)
	}
	if id != (UUID{}) && [16]byte(id) != t.ID {
		return nil, fmt.Errorf("%w: %q has id %v, not %v", ErrUnknownTopic, name, UUID(t.ID), id)
	}
	return t, nil
}

// withTopic returns a copy of the image in which t replaces the topic of
// the same name.
func (img *Image) withTopic(t *Topic) *Image {
	n := img.shallowCopy()
	n.Topics = maps.Clone(img.Topics)
	n.Topics[t.Name] = t
	return n
}

// cloneOrNew clones m, or makes an empty map when m is nil.
func cloneOrNew[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return make(map[K]V)
	}
	return maps.Clone(m)
}
