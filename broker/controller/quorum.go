package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
)

// selfVoter finds this node among voters and returns the others. No
// voters, or this node alone, is the single-node quorum (no peers). A
// node not among the voters is an observer: a broker-only node
// (observer.go), whose peers are all the voters.
func selfVoter(id int32, voters []config.Voter) (self config.Voter, peers []config.Voter, observer bool) {
	found := false
	for _, v := range voters {
		if v.ID == id {
			self, found = v, true
			continue
		}
		peers = append(peers, v)
	}
	return self, peers, len(voters) > 0 && !found
}

// voterConfiguration is the Raft configuration of voters: server ID the
// node ID, address the voter's quorum address.
func voterConfiguration(voters []config.Voter) raft.Configuration {
	var cfg raft.Configuration
	for _, v := range voters {
		cfg.Servers = append(cfg.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(strconv.Itoa(int(v.ID))), Address: raft.ServerAddress(v.Addr())})
	}
	return cfg
}

func sameVoters(a, b raft.Configuration) bool {
	return describeVoters(a) == describeVoters(b)
}

// describeVoters renders a configuration's voters in the config's form,
// sorted by ID.
func describeVoters(cfg raft.Configuration) string {
	var parts []string
	for _, s := range cfg.Servers {
		if s.Suffrage == raft.Voter {
			parts = append(parts, string(s.ID)+"@"+string(s.Address))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (c *Controller) raftID() raft.ServerID {
	return raft.ServerID(strconv.Itoa(int(c.cfg.NodeID)))
}

// Isolate cuts this node off from its quorum peers: Raft and forwarded
// requests, both ways, until Heal. An isolated leader steps down once its
// lease runs out without a majority (LeaderLeaseTimeout), so it stops
// acting as controller. It does nothing for the single-node quorum.
func (c *Controller) Isolate() {
	if c.net != nil {
		c.net.Isolate()
	}
}

// Heal ends Isolate: the node reconnects and follows the quorum again.
func (c *Controller) Heal() {
	if c.net != nil {
		c.net.Heal()
	}
}

// Leader returns the node ID of the Raft leader this node knows of, and
// false when it knows none.
func (c *Controller) Leader() (int32, bool) {
	_, id := c.raft.LeaderWithID()
	if id == "" {
		return -1, false
	}
	n, err := strconv.ParseInt(string(id), 10, 32)
	if err != nil {
		return -1, false
	}
	return int32(n), true
}

// IsLeader reports whether this node is the Raft leader, the active
// controller.
func (c *Controller) IsLeader() bool { return c.raft.State() == raft.Leader }

// registerLoop keeps this node registered in a quorum with peers: while
// the image lacks its current registration (at first start, or after a
// restart with a new listener address) and this run was not unregistered
// (UnregisterBroker), it proposes it, forwarded to the
// active controller, with a bounded backoff. The single-node quorum
// registers in setupLeader alone.
func (c *Controller) registerLoop() {
	defer c.wg.Done()
	backoff := 20 * time.Millisecond
	for {
		ch := c.Changed()
		img := c.Image()
		b, ok := img.Brokers[c.cfg.NodeID]
		if ok && img.ClusterID != "" && (withoutFence(b).Equal(c.cfg.Self) || b.ShuttingDown && c.shuttingDown.Load()) || c.unregistered.Load() {
			// Registered; a fenced broker is unfenced by its heartbeats,
			// one shut down (by an earlier run) registers again. This
			// run, once unregistered, stays so.
			backoff = 20 * time.Millisecond
			select {
			case <-ch:
				continue
			case <-c.stop:
				return
			}
		}
		if img.ClusterID != "" {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ApplyTimeout)
			_, err := c.propose(ctx, &metadata.RegisterBrokerRecord{Broker: c.cfg.Self})
			cancel()
			if err != nil {
				c.log.Debug("broker registration failed; retrying", "err", err, "backoff", backoff)
			}
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ch:
			t.Stop()
		case <-c.stop:
			t.Stop()
			return
		}
		backoff = min(backoff*2, time.Second)
	}
}

// catchUpLoop makes this node of a quorum with peers ready only once its
// image is current, as a Kafka broker waits for the metadata offset its
// registration was acknowledged at: at restart Raft restores the last
// snapshot and replays committed entries as the leader sends them, so an
// image already holding this node's old registration can be seconds
// behind (leader epoch 0 of a partition whose leader has moved since).
// It asks the active controller for its applied index (catchUp) until
// this node has applied as much, with a bounded backoff; a node that
// leads is current once in office.
func (c *Controller) catchUpLoop() {
	defer c.wg.Done()
	backoff := 20 * time.Millisecond
	for {
		ch := c.Changed()
		if c.inOffice.Load() {
			break
		}
		wait := backoff
		if addr, _ := c.raft.LeaderWithID(); addr == "" {
			// No leader known yet: look again soon rather than have
			// forward's own backoff outlast the election.
			wait = 10 * time.Millisecond
		} else if !c.IsLeader() {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ApplyTimeout)
			err := c.CatchUp(ctx)
			cancel()
			// catchUp answers at once on a node that has just become
			// leader; its image is current only once in office.
			if err == nil && !c.IsLeader() {
				break
			}
			if err != nil {
				c.log.Debug("metadata catch-up failed; retrying", "err", err, "backoff", backoff)
			}
			backoff = min(backoff*2, time.Second)
		}
		// A change of the image (an election's first records, say) is
		// worth another try before the wait ends.
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ch:
			t.Stop()
		case <-c.stop:
			t.Stop()
			return
		}
	}
	c.caughtUp.Store(true)
	c.updateReady()
}

// keyNodeID is the stable-store key under which a quorum voter records
// its node ID + 1 at bootstrap (0, not found, means not recorded).
var keyNodeID = []byte("klog.node.id")

// checkNodeID refuses a data directory whose recorded node ID is not id.
func checkNodeID(stable raft.StableStore, id int32, dir string) error {
	v, err := stable.GetUint64(keyNodeID)
	if err != nil || v == 0 {
		return nil // not recorded (raft-boltdb and the in-memory store fail a missing key)
	}
	if v-1 != uint64(id) {
		return fmt.Errorf("controller: the data directory %s belongs to node %d, not node.id=%d; give each node its own data directory", dir, v-1, id)
	}
	return nil
}

func withoutFence(b metadata.Broker) metadata.Broker {
	b.Fenced = false
	return b
}
