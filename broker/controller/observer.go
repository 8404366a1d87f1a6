package controller

// Broker-only nodes (Kafka's process.roles=broker): a node whose node.id
// is not among controller.quorum.voters follows the metadata log as a
// Raft non-voter. It listens on its advertised host at a port of its own
// choosing, bootstraps nothing, and asks the voters, one after another,
// to add it (a join request over forwarding); the active controller adds
// it with AddNonvoter, or updates its address after a restart. From then
// on the leader replicates the log to it like to any follower (snapshots
// included) and it applies the same records through the same state
// machine, registers and heartbeats through forwarding like a voter, and
// is ready once its registration is in its image. It never votes, so it
// neither counts towards a majority nor can lead.
//
// Why a Raft learner rather than fetching committed records from the
// active controller over the forwarding connection (which is nearer to
// Kafka's observers, which Fetch the metadata log): hashicorp/raft already
// sends a follower its log from the right index, snapshots when the log
// was compacted, and the leader's address, and the node applies entries on
// the same path as the voters, so forwarded proposals wait for their
// index exactly as on a voter. A fetch protocol of klog's own would need
// all of that again. The cost: each broker is an entry in the Raft
// configuration, which keeps a stopped broker's address (the leader keeps
// trying it, logged as a warning) until it comes back under another one.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// checkObserver refuses to run a broker-only node on a data directory
// whose Raft configuration makes it a voter, or holds other voters.
func checkObserver(id raft.ServerID, stored, want raft.Configuration, dir string) error {
	for _, s := range stored.Servers {
		if s.ID == id && s.Suffrage == raft.Voter {
			return fmt.Errorf("controller: node %s is not among controller.quorum.voters=%s, but the data directory %s holds it as a voter; start it with the voters it was created with, or on a fresh data directory",
				id, describeVoters(want), dir)
		}
	}
	if len(stored.Servers) > 0 && !sameVoters(stored, want) {
		return fmt.Errorf("controller: the data directory %s holds a metadata quorum of voters %s, not the configured controller.quorum.voters=%s; start the node with the voters it was created with, or on a fresh data directory",
			dir, describeVoters(stored), describeVoters(want))
	}
	return nil
}

// joined reports whether the latest Raft configuration this node knows
// holds it as a non-voter at its current address.
func (c *Controller) joined() bool {
	f := c.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	addr := raft.ServerAddress(c.net.Addr().String())
	for _, s := range f.Configuration().Servers {
		if s.ID == c.raftID() {
			return s.Suffrage == raft.Nonvoter && s.Address == addr
		}
	}
	return false
}

// joinLoop asks the voters to add this node until its configuration says
// it was, with a bounded backoff. Once added it stays: only this node's
// next start, at a new address, needs another join.
func (c *Controller) joinLoop() {
	defer c.wg.Done()
	payload := binary.BigEndian.AppendUint32(nil, uint32(c.cfg.NodeID))
	payload = append(payload, c.net.Addr().String()...)
	backoff := 20 * time.Millisecond
	next := 0
	for !c.joined() {
		v := c.cfg.Voters[next%len(c.cfg.Voters)]
		next++
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ApplyTimeout)
		_, retry, err := c.forwardOnce(ctx, v.Addr(), forwardJoin, payload)
		cancel()
		switch {
		case err == nil:
			backoff = 20 * time.Millisecond
		case retry:
			// Not the leader, or unreachable: try the next voter.
		default:
			c.log.Debug("join the metadata quorum failed; retrying", "voter", v.ID, "err", err, "backoff", backoff)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-c.stop:
			t.Stop()
			return
		}
		backoff = min(backoff*2, time.Second)
	}
	c.log.Debug("joined the metadata quorum as a non-voter", "addr", c.net.Addr().String())
}

// errJoinVoter refuses a join under a voter's ID, which would move that
// voter's address.
var errJoinVoter = errors.New("a voter cannot join as a broker-only node")

// handleJoin adds a broker-only node as a non-voter, on the leader.
func (c *Controller) handleJoin(payload []byte) (byte, []byte) {
	if len(payload) < 5 {
		return statusError, []byte("join: bad payload")
	}
	id := int32(binary.BigEndian.Uint32(payload))
	addr := string(payload[4:])
	for _, v := range c.cfg.Voters {
		if v.ID == id {
			return statusError, []byte(fmt.Sprintf("join of node %d: %v", id, errJoinVoter))
		}
	}
	f := c.raft.AddNonvoter(raft.ServerID(strconv.Itoa(int(id))), raft.ServerAddress(addr), 0, c.cfg.ApplyTimeout)
	if status, out := c.awaitServed(f); status != statusOK {
		return status, out
	}
	c.log.Info("broker-only node joined the metadata quorum", "node", id, "addr", addr)
	return statusOK, nil
}
