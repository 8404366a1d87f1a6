package broker

import (
	"context"
	"errors"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/share"
	"github.com/klogdev/klog/store/log"
)

// NextFetchEpoch is the fetch session epoch a client sends after e.
var NextFetchEpoch = nextFetchEpoch

// PartitionForTest is the node's replica of a partition, for the tests of
// package broker_test that set its leader state (a follower out of sync),
// which one node cannot reach by itself; nil if the node has none.
func (n *Node) PartitionForTest(topic string, index int32) *partition.Partition {
	return n.partition(topic, index)
}

// PeerConnectionsForTest is the number of other nodes' connections open
// on the node's listener name.
func (n *Node) PeerConnectionsForTest(listener string) int {
	for _, l := range n.listeners {
		if l.Name == listener {
			return l.srv.PeerConnections()
		}
	}
	return 0
}

// PeerRequestsForTest is the number of requests the node sent to other
// nodes (WriteTxnMarkers, AddPartitionsToTxn).
func (n *Node) PeerRequestsForTest() int64 { return n.peers.Sent() }

// RequestsWaitingForTest is the number of large request frames waiting
// for the request pool (queued.max.request.bytes): it is exhausted.
func (n *Node) RequestsWaitingForTest() int { return n.requestPool.Waiting() }

// FollowingForTest reports how many partitions the node fetches as a
// follower, from how many leaders (fetcher goroutines).
func (n *Node) FollowingForTest() (partitions, fetchers int) { return n.replicas.Following() }

// ISRProposal is one ISR change a node proposed, for tests.
type ISRProposal struct {
	Topic                       string
	Partition                   int32
	LeaderEpoch, PartitionEpoch int32
	ISR                         []int32
}

// recordISR is an isrProposer that records every proposal and refuses it.
type recordISR chan ISRProposal

func (r recordISR) AlterPartition(_ context.Context, topic string, partition int32, leaderEpoch, partitionEpoch int32, isr []int32) error {
	select {
	case r <- ISRProposal{topic, partition, leaderEpoch, partitionEpoch, isr}:
	default:
	}
	return errRecordedISR
}

// errRecordedISR is recordISR's answer: the proposal is recorded, not made.
var errRecordedISR = errors.New("broker: ISR proposal recorded for a test, not sent")

// RecordISRForTest makes the node send its ISR proposals to the channel
// returned (refusing them), in place of the controller. Call it before the node leads a partition with followers.
func (n *Node) RecordISRForTest() <-chan ISRProposal {
	ch := make(recordISR, 64)
	n.isrMu.Lock()
	n.isr = ch
	n.isrMu.Unlock()
	return ch
}

// LogConfigForTest is the settings the node's log of a partition runs
// with; false if the node has no such log.
func (n *Node) LogConfigForTest(topic string, index int32) (log.Config, bool) {
	l := n.logs.Get(topic, index)
	if l == nil {
		return log.Config{}, false
	}
	return l.Config(), true
}

// DrainingForTest reports whether Close has begun draining the node's
// client connections.
func (n *Node) DrainingForTest() bool { return n.listeners[0].srv.Draining() }

// SnapshotMetadataForTest has the node's Raft take a snapshot of the
// metadata image now.
func (n *Node) SnapshotMetadataForTest() error { return n.ctrl.Snapshot() }

// CredentialsForTest is the CredentialSource the node's SASL mechanisms
// check.
func (n *Node) CredentialsForTest() auth.CredentialSource { return n.credentials() }

// HoldReconcileForTest keeps the node from putting metadata images in
// effect (a reconcile pass as slow as thousands of new partitions on a
// loaded machine) until release is called.
func (n *Node) HoldReconcileForTest() (release func()) {
	n.reconcileMu.Lock()
	return n.reconcileMu.Unlock
}

// SharePartitionForTest reports group's share-partition of a partition
// this node leads: its start and end offsets; ok is false when the node
// has none.
func (n *Node) SharePartitionForTest(group, topic string, index int32) (start, end int64, ok bool) {
	t, found := n.ctrl.Image().Topic(topic)
	if !found {
		return 0, 0, false
	}
	ok = n.shares.Lookup(shareKey(group, share.TopicPartition{TopicID: t.ID, Partition: index}), func(p *share.Partition) {
		start, end = p.Start(), p.End()
	})
	return start, end, ok
}
