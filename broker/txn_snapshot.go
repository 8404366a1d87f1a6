package broker

import (
	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/store/log"
)

// Producers is the producer state of the node's replica of
// topic/partition (leader or follower), by producer id; false when the
// node has no replica of it.
func (n *Node) Producers(topic string, partition int32) ([]log.ProducerState, bool) {
	p := n.partition(topic, partition)
	if p == nil {
		return nil, false
	}
	return p.Producers(), true
}

// Transactions is the state of every transactional id this node's
// transaction coordinator owns, by id.
func (n *Node) Transactions() []txn.TxnSnapshot { return n.txns.Snapshot() }
