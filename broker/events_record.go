package broker

import (
	"slices"

	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/broker/group"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
)

// The node's recent events (package events): what it saw happen to its
// replicas and the groups it coordinates, for GET /v1/events and klog
// events. Each is recorded where it happens: leader changes and ISR
// changes as reconcile applies a metadata image (recordLeaderState), rolls
// from store/log's OnRoll hook, cleaning passes from the cleaner, and
// rebalances from the group coordinator's OnRebalance hook.

// Events is the node's ring of recent events.
func (n *Node) Events() *events.Ring { return n.events }

// recordLeaderState records what a new leader state of a local replica
// changed: its leader or leader epoch, on every replica (each node tells
// the role it took), and its ISR, on the leader only, which proposed the
// change (or, at a leader change, took the ISR the controller left), so
// that the events of all nodes together tell each ISR change once. A
// replica's first state records its role only.
func (n *Node) recordLeaderState(part *partition.Partition, prev, next partition.LeaderState) {
	first := prev.PartitionEpoch < 0
	if first || prev.Leader != next.Leader || prev.Epoch != next.Epoch {
		role := "follower"
		switch next.Leader {
		case n.cfg.NodeID:
			role = "leader"
		case -1:
			role = "none"
		}
		n.events.Append(events.Event{
			Kind: events.LeaderChange, Topic: part.Topic(), Partition: part.Index(),
			Detail: map[string]any{"leader": next.Leader, "old_leader": prev.Leader, "leader_epoch": next.Epoch, "role": role},
		})
	}
	if first || next.Leader != n.cfg.NodeID {
		return
	}
	var removed, added []int32
	for _, id := range prev.ISR {
		if !slices.Contains(next.ISR, id) {
			removed = append(removed, id)
		}
	}
	for _, id := range next.ISR {
		if !slices.Contains(prev.ISR, id) {
			added = append(added, id)
		}
	}
	isrEvent := func(kind events.Kind, key string, ids []int32) {
		n.events.Append(events.Event{
			Kind: kind, Topic: part.Topic(), Partition: part.Index(),
			Detail: map[string]any{
				"old_isr": slices.Clone(prev.ISR), "new_isr": slices.Clone(next.ISR), key: ids,
				"leader_epoch": next.Epoch, "partition_epoch": next.PartitionEpoch,
			},
		})
	}
	if len(removed) > 0 {
		isrEvent(events.ISRShrink, "removed", removed)
	}
	if len(added) > 0 {
		isrEvent(events.ISRExpand, "added", added)
	}
}

// recordRoll records a roll of a local log's active segment (store/log's
// OnRoll, called under the log's lock).
func (n *Node) recordRoll(tp log.TopicPartition, r log.Roll) {
	n.events.Append(events.Event{
		Time: r.Time, Kind: events.SegmentRoll, Topic: tp.Topic, Partition: tp.Partition,
		Detail: map[string]any{"reason": r.Reason, "old_base": r.OldBase, "new_base": r.NewBase},
	})
}

// recordCleaning records a cleaning pass that cleaned; trigger says who
// asked: the background cleaner, or a request (klog topic compact).
func (n *Node) recordCleaning(tp log.TopicPartition, res log.CleanResult, trigger string) {
	if !res.Cleaned {
		return
	}
	n.events.Append(events.Event{
		Kind: events.Cleaning, Topic: tp.Topic, Partition: tp.Partition,
		Detail: map[string]any{
			"trigger": trigger, "first_dirty": res.FirstDirty, "end": res.End,
			"bytes_removed": res.BytesRemoved, "records_removed": res.RecordsRemoved,
			"segments_before": res.SegmentsBefore, "segments_after": res.SegmentsAfter,
		},
	})
}

// recordRebalance records a rebalance of a group this node coordinates
// (group.Config.OnRebalance).
func (n *Node) recordRebalance(r group.Rebalance) {
	d := map[string]any{
		"group_protocol": r.GroupProtocol, "state": r.State, "generation": r.Generation,
		"members": r.Members, "reason": r.Reason,
	}
	if r.Protocol != "" {
		d["protocol"] = r.Protocol
	}
	n.events.Append(events.Event{Kind: events.Rebalance, Partition: -1, Group: r.Group, Detail: d})
}
