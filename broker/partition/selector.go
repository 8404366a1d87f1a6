package partition

import (
	"cmp"
	"slices"
	"time"
)

// Follower fetching (KIP-392): the leader tells a consumer that names its
// rack which replica to read from, and a follower serves consumers up to
// its own high watermark.

// ReplicaView is one replica as a replica selector sees it, Kafka's
// ReplicaView.
type ReplicaView struct {
	ID int32
	// Rack is the replica's broker.rack; "" when it has none, or when its
	// broker is not alive (Kafka gives such a replica no endpoint).
	Rack         string
	LogEndOffset int64
	// TimeSinceLastCaughtUpMs is how long ago the replica last held the
	// leader's log end; 0 for the leader.
	TimeSinceLastCaughtUpMs int64
}

// ReadReplicas returns the replicas a consumer fetching at fetchOffset
// could be sent to, without racks, as Kafka's
// ReplicaManager.findPreferredReadReplica gathers them: the leader, and
// each follower in the ISR whose log holds fetchOffset (its log start at
// or below it, its log end at or above it). ok is false unless this
// replica leads.
func (p *Partition) ReadReplicas(fetchOffset int64, now time.Time) (leader ReplicaView, followers []ReplicaView, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.state.Load()
	if !p.leads(st) {
		return ReplicaView{}, nil, false
	}
	nowMs := now.UnixMilli()
	for _, r := range p.mu.followers {
		if slices.Contains(st.ISR, r.ID) && r.LogEndOffset >= fetchOffset && r.LogStartOffset <= fetchOffset {
			followers = append(followers, ReplicaView{ID: r.ID, LogEndOffset: r.LogEndOffset, TimeSinceLastCaughtUpMs: nowMs - r.LastCaughtUpMs})
		}
	}
	return ReplicaView{ID: p.replicaID, LogEndOffset: p.log.EndOffset()}, followers, true
}

// SelectRackAware is Kafka's RackAwareReplicaSelector followed by
// findPreferredReadReplica's last step: the preferred read replica for a
// consumer in rack clientRack, or -1 for the leader. Without a client
// rack, with no replica in that rack, or with the leader in it, the
// leader serves; otherwise the most caught-up replica in the rack does
// (ReplicaView.comparator: the largest log end, then the shortest time
// since caught up, then the largest id).
func SelectRackAware(clientRack string, leader ReplicaView, followers []ReplicaView) int32 {
	if clientRack == "" || leader.Rack == clientRack {
		return -1
	}
	best := ReplicaView{ID: -1}
	for _, r := range followers {
		if r.Rack != clientRack {
			continue
		}
		if best.ID < 0 || cmp.Or(
			cmp.Compare(r.LogEndOffset, best.LogEndOffset),
			cmp.Compare(best.TimeSinceLastCaughtUpMs, r.TimeSinceLastCaughtUpMs),
			cmp.Compare(r.ID, best.ID)) > 0 {
			best = r
		}
	}
	return best.ID
}
