package controller

// Broker liveness in a quorum of several voters, as Kafka's: every node
// heartbeats the active controller each broker.heartbeat.interval.ms
// (forwarded, or locally on the leader). The active controller keeps the
// time it last heard from each broker, in memory only, and fences a broker
// it has not heard from for broker.session.timeout.ms by committing its
// registration with Fenced set; the next heartbeat commits it unfenced.
// Metadata lists unfenced brokers only. A new active controller gives
// every broker a full session before fencing it, since it knows nothing
// of heartbeats sent to its predecessor. Kafka commits fencing as
// FenceBrokerRecord/UnfenceBrokerRecord; klog reuses RegisterBroker.
//
// Each run of a node is a new incarnation (metadata.Broker.Incarnation):
// its registration replaces the previous run's at once, fenced, whether
// the previous run shut down cleanly or not; the repair pass takes it out
// of every ISR and elects other leaders at a new leader epoch, and only
// then does a heartbeat of the new incarnation unfence it. Kafka refuses
// a new incarnation while the previous one's session lives and fences
// that one when it expires, 9 s later; klog takes the restart itself as
// the end of the previous session.
//
// A broker whose process is known to have exited needs no session to
// expire: FenceExited fences it at once, as the supervisor of klog up -n,
// the parent of the nodes' processes, asks when one dies unasked (an
// unclean shutdown, told after the fact).

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
)

// heartbeat records that incarnation inc of broker id is alive and
// unfences it if fenced, once no repair is pending for it: a new
// incarnation, registered fenced, first leaves every ISR (but as a last
// member) and its leaderships, so that the log it restarted with is
// never the truth while replicas in the ISR hold more (Kafka fences the
// previous incarnation and unfences the new one once caught up). The
// heartbeat of another incarnation than the registered one (the previous
// run's, or this run's before its registration commits) keeps no session
// alive. A zero inc is any incarnation. It runs on the active controller.
func (c *Controller) heartbeat(id int32, inc metadata.UUID) {
	img := c.Image()
	b, ok := img.Brokers[id]
	if ok && inc != (metadata.UUID{}) && b.Incarnation != inc {
		return
	}
	c.mu.Lock()
	c.mu.lastSeen[id] = time.Now()
	c.mu.Unlock()
	if !ok || !b.Fenced || c.repairPending(img, id) {
		return
	}
	b.Fenced = false
	c.setFenced(b, "")
}

// FenceExited fences broker id's registered incarnation at once, whichever
// node it is asked on: its process has exited, so its session is over
// without waiting for broker.session.timeout.ms. The repair pass then
// takes it out of every ISR and elects other leaders for the partitions
// it led. A broker already fenced is left alone, and so is one not
// registered (ErrUnknownBroker). The incarnation fenced is the one this
// node's image holds once caught up with the active controller: the
// caller asks before the broker's next run can register.
func (c *Controller) FenceExited(ctx context.Context, id int32) error {
	b, err := c.currentBroker(ctx, id)
	if err != nil {
		return err
	}
	if b.Fenced {
		return nil
	}
	b.Fenced = true
	res, err := c.propose(ctx, amendRegistration(b))
	if err == nil {
		err = res.err
	}
	if err != nil {
		return fmt.Errorf("controller: fence broker %d: %w", id, err)
	}
	c.log.Info("broker fenced: its process exited", "broker", id)
	return nil
}

// currentBroker is broker id's registration once this node has caught up
// with the active controller, or ErrUnknownBroker.
func (c *Controller) currentBroker(ctx context.Context, id int32) (metadata.Broker, error) {
	if err := c.CatchUp(ctx); err != nil {
		return metadata.Broker{}, err
	}
	b, ok := c.Image().Brokers[id]
	if !ok {
		return metadata.Broker{}, fmt.Errorf("%w: %d", ErrUnknownBroker, id)
	}
	return b, nil
}

// UnregisterBroker removes broker id's registration, as Kafka's
// UnregisterBroker does whether the broker is alive, fenced or gone: its
// registered incarnation leaves the image, and the repair pass takes it
// out of every ISR (but as a last member) and elects other leaders for
// the partitions it led; its replicas stay, offline, until reassigned. It
// returns once that repair is made, or ctx ends or the apply timeout
// passes (the unregistration stands). A broker not registered is
// ErrUnknownBroker. The broker's run does not register again
// (registerLoop); its next run does.
func (c *Controller) UnregisterBroker(ctx context.Context, id int32) error {
	b, err := c.currentBroker(ctx, id)
	if err != nil {
		return err
	}
	res, err := c.propose(ctx, &metadata.UnregisterBrokerRecord{ID: id, Incarnation: b.Incarnation})
	if err == nil {
		err = res.err
	}
	if err != nil {
		return fmt.Errorf("controller: unregister broker %d: %w", id, err)
	}
	c.log.Info("broker unregistered", "broker", id, "incarnation", b.Incarnation)
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ApplyTimeout)
	defer cancel()
	for {
		ch := c.Changed()
		if !c.repairPending(c.Image(), id) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		case <-c.stop:
			return nil
		}
	}
}

// setFenced commits broker b's registration with its Fenced flag, if b's
// incarnation is still the registered one; why is the reason of a
// fencing, for the log.
func (c *Controller) setFenced(b metadata.Broker, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ApplyTimeout)
	defer cancel()
	res, err := c.propose(ctx, amendRegistration(b))
	if err == nil {
		err = res.err
	}
	if err != nil {
		c.log.Warn("broker fencing change failed", "broker", b.ID, "fenced", b.Fenced, "err", err)
		return
	}
	if b.Fenced {
		c.log.Info("broker fenced: "+why, "broker", b.ID, "session_timeout", c.cfg.Broker.Settings().BrokerSessionTimeout)
	} else {
		c.log.Info("broker unfenced", "broker", b.ID)
	}
}

// livenessLoop sends this node's heartbeats and, while this node leads,
// fences brokers whose sessions expired.
func (c *Controller) livenessLoop() {
	defer c.wg.Done()
	s := c.cfg.Broker.Settings()
	interval, session := s.BrokerHeartbeatInterval, s.BrokerSessionTimeout
	tick := time.NewTicker(min(interval, session/4))
	defer tick.Stop()
	nextBeat := time.Now()
	nextRebalance := time.Now().Add(s.LeaderImbalanceCheckInterval)
	leading := false
	// beatTo is the active controller the last heartbeat went to: a node
	// that registers, or sees a new active controller, heartbeats at
	// once, so that DescribeQuorum there knows its progress within a
	// round trip, not a heartbeat interval.
	beatTo := int32(-2)
	for {
		changed := c.Changed()
		woken := false
		select {
		case <-c.stop:
			return
		case <-tick.C:
		case <-c.repairNow:
		case <-changed:
			woken = true
		}
		now := time.Now()
		if c.IsLeader() != leading {
			// A new term: every broker starts with a full session.
			leading = !leading
			c.mu.Lock()
			clear(c.mu.lastSeen)
			c.mu.Unlock()
		}
		if img := c.Image(); !leading && registeredIn(img, c.cfg.NodeID) && (img.Controller != beatTo || c.fencedSelf(img)) {
			// This run's fenced registration heartbeats at each change
			// too: the repair that lets it be unfenced is one.
			nextBeat = now
		}
		if woken && now.Before(nextBeat) {
			continue // a metadata change that asks nothing of this loop
		}
		if !now.Before(nextBeat) {
			nextBeat = now.Add(interval)
			if leading {
				c.heartbeat(c.cfg.NodeID, c.cfg.Self.Incarnation)
			} else if img := c.Image(); registeredIn(img, c.cfg.NodeID) && c.heartbeatController(img, max(interval, session/3)) {
				beatTo = img.Controller
			}
		}
		if leading {
			nextRebalance = c.leaderPass(now, s, nextRebalance)
		}
	}
}

// heartbeatController sends the active controller this node's heartbeat,
// within timeout (a third of the session at least, so that on a loaded
// machine a heartbeat slower than the interval still counts): the applied index, for DescribeQuorum
// (describequorum.go), and this run's incarnation. It reports whether the
// heartbeat was taken.
func (c *Controller) heartbeatController(img *metadata.Image, timeout time.Duration) bool {
	payload := binary.BigEndian.AppendUint32(nil, uint32(c.cfg.NodeID))
	payload = binary.BigEndian.AppendUint64(payload, img.Index)
	payload = append(payload, c.cfg.Self.Incarnation[:]...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := c.forward(ctx, forwardHeartbeat, payload); err != nil {
		c.log.Debug("heartbeat failed", "err", err)
		return false
	}
	return true
}

// leaderPass is the active controller's turn of the liveness loop at now:
// it fences the brokers whose session expired, repairs partitions and,
// when nextRebalance has come, rebalances leaders. It returns when the
// next rebalance is due.
func (c *Controller) leaderPass(now time.Time, s *config.Settings, nextRebalance time.Time) time.Time {
	c.fenceExpired(now, s.BrokerSessionTimeout)
	// Every tick, not only after a fencing change: a controller that
	// took office between a fencing and its partition changes makes them
	// here.
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ApplyTimeout)
	defer cancel()
	c.repairPartitions(ctx)
	if c.fencedSelf(c.Image()) {
		// This run's registration waits for its repairs, made by now or
		// on a later pass.
		c.heartbeat(c.cfg.NodeID, c.cfg.Self.Incarnation)
	}
	if s.AutoLeaderRebalance && !now.Before(nextRebalance) {
		nextRebalance = now.Add(s.LeaderImbalanceCheckInterval)
		c.rebalanceLeaders(ctx)
	}
	return nextRebalance
}

// fenceExpired fences the unfenced brokers not heard from within session.
func (c *Controller) fenceExpired(now time.Time, session time.Duration) {
	img := c.Image()
	var expired []metadata.Broker
	c.mu.Lock()
	for _, id := range img.SortedBrokerIDs() {
		b := img.Brokers[id]
		if b.Fenced || id == c.cfg.NodeID {
			continue
		}
		last, ok := c.mu.lastSeen[id]
		if !ok {
			c.mu.lastSeen[id] = now
			continue
		}
		if now.Sub(last) > session {
			b.Fenced = true
			expired = append(expired, b)
		}
	}
	c.mu.Unlock()
	for _, b := range expired {
		c.setFenced(b, "session expired")
	}
}

// amendRegistration is the record that commits b, a registration
// changed from the image's, on the condition that its incarnation is
// still the registered one.
func amendRegistration(b metadata.Broker) *metadata.RegisterBrokerRecord {
	inc := b.Incarnation
	return &metadata.RegisterBrokerRecord{Broker: b, IfIncarnation: &inc}
}

// fencedSelf reports whether img holds this run's registration, fenced.
func (c *Controller) fencedSelf(img *metadata.Image) bool {
	b, ok := img.Brokers[c.cfg.NodeID]
	return ok && b.Fenced && b.Incarnation == c.cfg.Self.Incarnation
}

func registeredIn(img *metadata.Image, id int32) bool {
	_, ok := img.Brokers[id]
	return ok
}

// AwaitForming waits, up to limit, while the cluster is still forming: a
// voter of the quorum has never registered as a broker, as in the first
// moments of a new cluster whose nodes start together. It returns true
// once every voter is registered and unfenced, false at once when the
// cluster is not forming (every voter registered, a fenced one included,
// or a single-node quorum) and false when limit or ctx ends first.
func (c *Controller) AwaitForming(ctx context.Context, limit time.Duration) bool {
	unregistered := func(img *metadata.Image) bool {
		for _, v := range c.cfg.Voters {
			if !registeredIn(img, v.ID) {
				return true
			}
		}
		return false
	}
	if !unregistered(c.Image()) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		ch := c.Changed()
		img := c.Image()
		if c.votersActive(img) { // every voter registered, none fenced
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// votersActive reports whether every voter is an active broker in img.
func (c *Controller) votersActive(img *metadata.Image) bool {
	for _, v := range c.cfg.Voters {
		if b, ok := img.Brokers[v.ID]; !ok || !b.Active() {
			return false
		}
	}
	return true
}
