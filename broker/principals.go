package broker

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/klogdev/klog/broker/group"
)

// Who the clients are, for the admin API: the principal of each producer
// id and of each group member. No Kafka API tells either (DescribeGroups
// and DescribeProducers have no field for it), yet a developer looking at
// a group or a partition's producers asks which application, as which
// user, that is. Group members carry theirs in the group coordinator
// (group.WithPrincipal); producer ids are noted here, by the node that
// gave the id (InitProducerId) and by each leader the producer appends to.
// Both are kept in memory only.

// maxProducerPrincipals bounds the producer ids noted; past it they are
// forgotten together and noted again at their next produce.
const maxProducerPrincipals = 1 << 16

// producerPrincipals maps producer ids to the principal that got or used
// them. Produce notes on every append, so the common case, an id noted
// already with the same principal, is a lock-free load.
type producerPrincipals struct {
	m sync.Map // int64 → string
	n atomic.Int64
}

// note records that principal got or used producer id id.
func (p *producerPrincipals) note(id int64, principal string) {
	if id < 0 || principal == "" {
		return
	}
	if v, ok := p.m.Load(id); ok && v.(string) == principal {
		return
	}
	if _, loaded := p.m.Swap(id, principal); !loaded && p.n.Add(1) > maxProducerPrincipals {
		p.m.Clear()
		p.n.Store(0)
	}
}

// ProducerPrincipal is the principal that got or last used producer id
// id on this node, "" when it noted none.
func (n *Node) ProducerPrincipal(id int64) string {
	v, _ := n.producerPrincipals.m.Load(id)
	s, _ := v.(string)
	return s
}

// Group is a copy of group id, its members with their principals, if this
// node coordinates it.
func (n *Node) Group(ctx context.Context, id string) (group.GroupSnapshot, bool) {
	return n.groups.SnapshotGroup(ctx, id)
}
