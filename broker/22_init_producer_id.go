package broker

// InitProducerID (key 22), versions 0-5.
//
// Non-transactional (idempotent) producers get a fresh producer id at epoch
// 0. Ids come from blocks the controller allocates through the metadata
// log, so they are unique across restarts (and, later, across nodes).
//
// Not implemented yet (the transactions issue): transactional ids (answered
// with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which clients treat as fatal,
// rather than a half-working coordinator), epoch bumps
// for an existing producer id (KIP-360), and broker-side sequence checks.

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
)

// producerIDBlock is how many producer ids one controller allocation hands
// to a node.
const producerIDBlock = 1000

// producerIDs hands out producer ids from controller-allocated blocks.
type producerIDs struct {
	mu   sync.Mutex
	next int64
	end  int64 // exclusive
}

func handleInitProducerID(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	switch {
	case req.TransactionalID != nil && !n.authorize(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	case req.TransactionalID != nil:
		got := n.txns.InitProducerID(ctx, req)
		n.producerPrincipals.note(got.ProducerID, rc.Principal)
		return got, nil
	case !n.visible(rc, kmsg.ACLOperationIdempotentWrite, kmsg.ACLResourceTypeCluster, auth.ClusterName) &&
		!n.authorizeAny(rc, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic):
		// An idempotent producer needs IDEMPOTENT_WRITE on the cluster
		// or WRITE on some topic (KIP-679).
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	if req.Version >= 3 && req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < math.MaxInt16-1 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		n.producerPrincipals.note(req.ProducerID, rc.Principal)
		return resp, nil
	}
	id, err := n.nextProducerID(ctx)
	if err != nil {
		resp.ErrorCode = errorCode(err)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	n.producerPrincipals.note(id, rc.Principal)
	return resp, nil
}

func (n *Node) nextProducerID(ctx context.Context) (int64, error) {
	p := &n.producerIDs
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := n.refillProducerIDsLocked(ctx); err != nil {
		return 0, err
	}
	id := p.next
	p.next++
	return id, nil
}

// prefetchProducerIDs allocates the first block when the node starts, so
// that a producer's first InitProducerID does not wait for a Raft commit.
func (n *Node) prefetchProducerIDs() {
	defer n.wg.Done()
	n.producerIDs.mu.Lock()
	defer n.producerIDs.mu.Unlock()
	if err := n.refillProducerIDsLocked(n.ctx); err != nil && n.ctx.Err() == nil {
		n.logger.Warn("allocate producer ids", "err", err)
	}
}

func (n *Node) refillProducerIDsLocked(ctx context.Context) error {
	p := &n.producerIDs
	if p.next < p.end {
		return nil
	}
	ctx, cancel := requestContext(ctx, 10000)
	defer cancel()
	first, err := n.ctrl.AllocateProducerIDs(ctx, producerIDBlock)
	if err != nil {
		return fmt.Errorf("allocate producer ids: %w", err)
	}
	p.next, p.end = first, first+producerIDBlock
	return nil
}
