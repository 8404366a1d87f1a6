package controller

// Forwarding: a proposal made on a voter that is not the active controller
// goes to the active controller over the quorum address (see quorumNet),
// as one request on a connection of its own:
//
//	request:  length uint32 | kind uint8 | payload
//	response: length uint32 | status uint8 | payload
//
// length counts the bytes after it, big-endian. A propose request's
// payload is an encoded metadata record; its response carries the Raft
// index the record was committed at (uint64). An index request (no
// payload) is answered with the index of the leader's image, which a node
// waits for before it checks a request against its own image (CatchUp).
// A join request (a broker-only node's ID and address) adds that node to
// the Raft configuration as a non-voter (observer.go). The forwarding node then
// waits until its own state machine applies that index and takes the
// result from there: the state machine is deterministic, so the verdict
// and the images before and after are the same as the leader's.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/hashicorp/raft"

	"github.com/klogdev/klog/broker/metadata"
)

const (
	forwardPropose   byte = 1
	forwardHeartbeat byte = 2
	forwardIndex     byte = 3
	forwardJoin      byte = 4 // observer.go
	// forwardDescribeQuorum (no payload) is answered with the leader's
	// QuorumState as JSON (describequorum.go).
	forwardDescribeQuorum byte = 5

	statusOK        byte = 0
	statusNotLeader byte = 1
	statusError     byte = 2
)

const (
	// maxForwardBytes bounds one forwarded request or response.
	maxForwardBytes = 64 << 20
	// maxForwardInFlight bounds the forwarded requests one node sends, and
	// those it serves, at a time.
	maxForwardInFlight = 64
	// forwardDialTimeout bounds connecting to the active controller.
	forwardDialTimeout = 2 * time.Second
	// forwardIdleTimeout closes a forwarding connection that sends nothing.
	forwardIdleTimeout = 30 * time.Second
)

// serveForward answers forwarded requests on one connection until it
// closes or stays idle.
func (c *Controller) serveForward(conn net.Conn) {
	defer conn.Close()
	for {
		_ = conn.SetReadDeadline(time.Now().Add(forwardIdleTimeout))
		kind, payload, err := readFrame(conn)
		if err != nil {
			return
		}
		var status byte
		var out []byte
		select {
		case c.serving <- struct{}{}:
			status, out = c.handleForward(kind, payload)
			<-c.serving
		case <-c.stop:
			return
		}
		_ = conn.SetWriteDeadline(time.Now().Add(c.cfg.ApplyTimeout))
		if err := writeFrame(conn, status, out); err != nil {
			return
		}
	}
}

// handleForward serves one forwarded request on the active controller.
func (c *Controller) handleForward(kind byte, payload []byte) (byte, []byte) {
	select {
	case <-c.raftStarted:
	default:
		return statusNotLeader, nil
	}
	if c.raft.State() != raft.Leader {
		return statusNotLeader, nil
	}
	switch kind {
	case forwardPropose:
		f := c.raft.Apply(payload, c.cfg.ApplyTimeout)
		if status, out := c.awaitServed(f); status != statusOK {
			return status, out
		}
		return statusOK, binary.BigEndian.AppendUint64(nil, f.Index())
	case forwardJoin:
		return c.handleJoin(payload)
	case forwardIndex:
		return statusOK, binary.BigEndian.AppendUint64(nil, c.Image().Index)
	case forwardHeartbeat:
		// Node ID, applied index and, from nodes that have one, the
		// incarnation.
		if len(payload) != 12 && len(payload) != 12+16 {
			return statusError, []byte("heartbeat: bad payload")
		}
		id := int32(binary.BigEndian.Uint32(payload))
		var inc metadata.UUID
		copy(inc[:], payload[12:])
		c.noteProgress(id, binary.BigEndian.Uint64(payload[4:12]), time.Now())
		c.heartbeat(id, inc)
		return statusOK, nil
	case forwardDescribeQuorum:
		qs, err := c.quorumState()
		if err != nil {
			return statusError, []byte(err.Error())
		}
		b, err := json.Marshal(qs)
		if err != nil {
			return statusError, []byte(err.Error())
		}
		return statusOK, b
	}
	return statusError, []byte(fmt.Sprintf("unknown forwarded request kind %d", kind))
}

// awaitServed waits for a future a forwarded request started on the
// leader and turns its error into a response status.
func (c *Controller) awaitServed(f raft.Future) (byte, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ApplyTimeout)
	defer cancel()
	if err := c.await(ctx, f); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return statusNotLeader, nil
		}
		return statusError, []byte(err.Error())
	}
	return statusOK, nil
}

// leaderlessWait bounds how long forward waits while this node knows no
// leader. An election takes well under a second; a node that knows none
// for longer is most likely cut off from the quorum, and holding a
// client's request until its timeout (15 s and more) would only delay the
// client's retry through another node, which Metadata now names (see the
// broker's controllerID). Callers with a loop of their own (heartbeats,
// registration) simply try again.
const leaderlessWait = 3 * time.Second

// errLeaderIsSelf tells the caller of forward that this node leads now
// and should act locally.
var errLeaderIsSelf = errors.New("this node is the leader")

// forward sends one request to the active controller, retrying with
// backoff while there is no leader, the leader cannot be reached or says
// it no longer leads, until ctx ends. It never retries a request that
// reached the controller and then failed in transit: its outcome is
// unknown.
func (c *Controller) forward(ctx context.Context, kind byte, payload []byte) ([]byte, error) {
	select {
	case c.forwarding <- struct{}{}:
		defer func() { <-c.forwarding }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting to forward: %w", ErrNotController, ctx.Err())
	case <-c.stop:
		return nil, ErrClosed
	}
	backoff := 10 * time.Millisecond
	var last error
	var leaderless time.Time // since when no leader has been known
	for {
		if c.closed.Load() {
			return nil, ErrClosed
		}
		addr, id := c.raft.LeaderWithID()
		switch {
		case addr == "":
			last = errors.New("no active controller known")
			if leaderless.IsZero() {
				leaderless = time.Now()
			} else if time.Since(leaderless) > leaderlessWait {
				return nil, fmt.Errorf("%w: no active controller known for %s", ErrNotController, leaderlessWait)
			}
		case id == c.raftID():
			return nil, errLeaderIsSelf
		default:
			out, retry, err := c.forwardOnce(ctx, string(addr), kind, payload)
			if !retry {
				if err != nil {
					return nil, fmt.Errorf("%w: forward to node %s: %w", ErrNotController, id, err)
				}
				return out, nil
			}
			last = fmt.Errorf("node %s: %w", id, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: forward: %w (last: %v)", ErrNotController, ctx.Err(), last)
		case <-c.stop:
			t.Stop()
			return nil, ErrClosed
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

// forwardOnce makes one attempt; retry reports that the request certainly
// did not take effect and may be sent again.
func (c *Controller) forwardOnce(ctx context.Context, addr string, kind byte, payload []byte) (out []byte, retry bool, err error) {
	deadline := time.Now().Add(c.cfg.ApplyTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn, err := c.net.dialForward(addr, min(forwardDialTimeout, max(time.Until(deadline), time.Millisecond)))
	if err != nil {
		return nil, true, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	_ = conn.SetDeadline(deadline)
	if err := writeFrame(conn, kind, payload); err != nil {
		return nil, false, err
	}
	status, out, err := readFrame(conn)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, false, err
	}
	switch status {
	case statusOK:
		return out, false, nil
	case statusNotLeader:
		return nil, true, errors.New("no longer the active controller")
	}
	return nil, false, errors.New(string(out))
}

// proposeForwarded forwards an encoded record and waits until this node
// has applied it, returning this node's result for its index.
func (c *Controller) proposeForwarded(ctx context.Context, rec metadata.Record, b []byte) (applyResult, error) {
	c.mu.Lock()
	c.mu.forwardWaiters++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.mu.forwardWaiters--; c.mu.forwardWaiters == 0 {
			clear(c.mu.results)
		}
		c.mu.Unlock()
	}()
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.cfg.ApplyTimeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.ApplyTimeout)
		defer cancel()
	}
	out, err := c.forward(ctx, forwardPropose, b)
	if err != nil {
		return applyResult{}, err
	}
	if len(out) != 8 {
		return applyResult{}, fmt.Errorf("controller: %v: bad forwarded response", rec.Type())
	}
	index := binary.BigEndian.Uint64(out)
	for {
		ch := c.Changed()
		c.mu.Lock()
		res, ok := c.mu.results[index]
		c.mu.Unlock()
		if ok {
			return res, nil
		}
		if c.Image().Index >= index {
			// Applied through a snapshot: the verdict is not known here.
			return applyResult{}, fmt.Errorf("%w: %v committed at index %d, applied here from a snapshot", ErrNotController, rec.Type(), index)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return applyResult{}, fmt.Errorf("%w: %v committed at index %d, not yet applied here: %w", ErrNotController, rec.Type(), index, ctx.Err())
		case <-c.stop:
			return applyResult{}, ErrClosed
		}
	}
}

// spreadTimeout bounds spread.
const spreadTimeout = time.Second

// spread is called on a topic change just applied. On the active
// controller it appends a Raft barrier and waits (bounded) until it is
// applied: the barrier's AppendEntries tell the followers that the change
// is committed, so by the time the client hears of it the other nodes
// know of it too, where they would otherwise learn of it only after
// CommitTimeout, and a client that asks another node at once would be
// told the topic does not exist. It costs one more Raft round trip per
// admin change; elsewhere (a follower, whose proposal was forwarded, or a
// single node) it does nothing. A barrier that does not finish in time
// leaves the answer as it is: the change is committed either way.
func (c *Controller) spread(ctx context.Context) {
	if c.net == nil || !c.IsLeader() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, spreadTimeout)
	defer cancel()
	if err := c.await(ctx, c.raft.Barrier(spreadTimeout)); err != nil {
		c.log.Debug("barrier after a topic change", "err", err)
	}
}

// CatchUp waits until this node has applied everything the active
// controller had applied when asked, so that checks made against this
// node's image see at least what any finished proposal changed: Kafka's
// brokers forward admin requests to the controller, which checks them
// against its own state, and a follower that checked its lagging image
// would call a topic just created elsewhere unknown. The leader itself
// and the single-node quorum are always caught up.
func (c *Controller) CatchUp(ctx context.Context) error {
	if c.net == nil || c.IsLeader() {
		return nil
	}
	out, err := c.forward(ctx, forwardIndex, nil)
	if errors.Is(err, errLeaderIsSelf) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(out) != 8 {
		return fmt.Errorf("controller: bad index response")
	}
	index := binary.BigEndian.Uint64(out)
	for {
		ch := c.Changed()
		if c.Image().Index >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w: index %d not yet applied here: %w", ErrNotController, index, ctx.Err())
		case <-c.stop:
			return ErrClosed
		}
	}
}

// keepResult records an applied entry's result while forwarded proposals
// wait for theirs.
func (c *Controller) keepResult(index uint64, res applyResult) {
	c.mu.Lock()
	if c.mu.forwardWaiters > 0 {
		c.mu.results[index] = res
	}
	c.mu.Unlock()
}

func writeFrame(w io.Writer, kind byte, payload []byte) error {
	if len(payload)+1 > maxForwardBytes {
		return fmt.Errorf("forwarded frame of %d bytes is over %d", len(payload)+1, maxForwardBytes)
	}
	b := make([]byte, 5, 5+len(payload))
	binary.BigEndian.PutUint32(b, uint32(len(payload)+1))
	b[4] = kind
	_, err := w.Write(append(b, payload...))
	return err
}

func readFrame(r io.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n < 1 || n > maxForwardBytes {
		return 0, nil, fmt.Errorf("forwarded frame of %d bytes", n)
	}
	b := make([]byte, n-1)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, err
	}
	return hdr[4], b, nil
}
