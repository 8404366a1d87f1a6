package broker

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

// Snapshots of the node for inspection (the admin API's cluster,
// partition, segment and index views): each is a plain value taken at
// once, under the lock of what it copies and for no longer.

// ClusterState is the cluster as this node sees it.
type ClusterState struct {
	NodeID    int32
	ClusterID string
	// Controller is the active controller as this node's metadata image
	// records it; -1 when unknown.
	Controller int32
	Raft       controller.RaftState
	// Brokers are the registered brokers, by ID.
	Brokers []metadata.Broker
}

// ClusterState returns this node's view of the cluster: its metadata
// image's brokers and controller, and its own Raft state.
func (n *Node) ClusterState() ClusterState {
	img := n.ctrl.Image()
	out := ClusterState{NodeID: n.ID(), ClusterID: img.ClusterID, Controller: img.Controller, Raft: n.ctrl.RaftState(),
		Brokers: make([]metadata.Broker, 0, len(img.Brokers))}
	for _, b := range img.Brokers {
		out.Brokers = append(out.Brokers, b)
	}
	slices.SortFunc(out.Brokers, func(a, b metadata.Broker) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// PartitionStates returns a snapshot of every local replica (of topic
// alone unless topic is ""), by topic and partition.
func (n *Node) PartitionStates(topic string) []partition.Snapshot {
	n.mu.RLock()
	parts := make([]*partition.Partition, 0, len(n.mu.parts))
	for key, p := range n.mu.parts {
		if topic == "" || key.topic == topic {
			parts = append(parts, p)
		}
	}
	n.mu.RUnlock()
	out := make([]partition.Snapshot, 0, len(parts))
	for _, p := range parts {
		out = append(out, p.Snapshot())
	}
	slices.SortFunc(out, func(a, b partition.Snapshot) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Index, b.Index))
	})
	return out
}

// PartitionState returns a snapshot of the local replica of
// topic/partition; false when the node has none.
func (n *Node) PartitionState(topic string, index int32) (partition.Snapshot, bool) {
	p := n.partition(topic, index)
	if p == nil {
		return partition.Snapshot{}, false
	}
	return p.Snapshot(), true
}

// Segments describes the segments of the local log of topic/partition,
// oldest first; false when the node has no such log.
func (n *Node) Segments(topic string, index int32) ([]log.SegmentInfo, bool) {
	l := n.logs.Get(topic, index)
	if l == nil {
		return nil, false
	}
	return l.Segments(), true
}

// ErrNoSegment: the local log has no segment at the base offset asked
// for (OffsetIndex, TimeIndex).
var ErrNoSegment = errors.New("no segment at base offset")

// OffsetIndex returns a page of the offset index of the segment at base
// of the local log of topic/partition (log.Log.OffsetIndex): ErrUnknownTopic
// when the node has no such log, ErrNoSegment when it has no such segment.
func (n *Node) OffsetIndex(topic string, index int32, base int64, from, limit int) (log.IndexPage[log.OffsetIndexEntry], error) {
	return indexPage(n, topic, index, base, func(l *log.Log) (log.IndexPage[log.OffsetIndexEntry], bool) { return l.OffsetIndex(base, from, limit) })
}

// TimeIndex is OffsetIndex for the time index.
func (n *Node) TimeIndex(topic string, index int32, base int64, from, limit int) (log.IndexPage[log.TimeIndexEntry], error) {
	return indexPage(n, topic, index, base, func(l *log.Log) (log.IndexPage[log.TimeIndexEntry], bool) { return l.TimeIndex(base, from, limit) })
}

func indexPage[E any](n *Node, topic string, index int32, base int64, read func(*log.Log) (log.IndexPage[E], bool)) (log.IndexPage[E], error) {
	l := n.logs.Get(topic, index)
	if l == nil {
		return log.IndexPage[E]{}, fmt.Errorf("%w: %s", ErrUnknownTopic, topicPartitionName(topic, index))
	}
	pg, ok := read(l)
	if !ok {
		return pg, fmt.Errorf("%s: %w %d", topicPartitionName(topic, index), ErrNoSegment, base)
	}
	return pg, nil
}

// ErrNoBatch: the local log has no batch holding the offset asked for
// (BatchAt): it is below the log start or at or past the log end.
var ErrNoBatch = errors.New("no batch holds offset")

// BatchAt returns a copy of the batch of the local log of topic/partition
// that holds offset (the first batch past it when offset is in a gap
// that cleaning left), as written: ErrUnknownTopic when the node has no
// such log, ErrNoBatch when no batch holds it.
func (n *Node) BatchAt(topic string, index int32, offset int64) ([]byte, error) {
	l := n.logs.Get(topic, index)
	if l == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTopic, topicPartitionName(topic, index))
	}
	b, err := l.Read(nil, offset, 1, l.EndOffset(), true)
	if errors.Is(err, log.ErrOffsetOutOfRange) || err == nil && len(b) == 0 {
		return nil, fmt.Errorf("%s: %w %d (log %d to %d)", topicPartitionName(topic, index), ErrNoBatch, offset, l.StartOffset(), l.EndOffset())
	}
	if err != nil {
		return nil, err
	}
	size := record.Batch(b).Size()
	return b[:min(size, len(b))], nil
}
