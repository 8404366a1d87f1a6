package txn

import (
	"errors"
	"time"
)

// MarkerState is where one partition's marker of a transaction end is.
type MarkerState string

// The states of a marker.
const (
	// MarkerPending: not written yet; the coordinator tries again
	// (MarkerOutcome.Error is the last attempt's error, if one failed).
	MarkerPending MarkerState = "pending"
	// MarkerWritten: the partition's leader appended the marker.
	MarkerWritten MarkerState = "written"
	// MarkerFailed: given up, never to be written by this coordinator:
	// the partition refused it as fenced (ErrMarkerFenced), and the
	// transaction completes without it.
	MarkerFailed MarkerState = "failed"
)

// MarkerOutcome is the marker of one partition of a transaction's end.
type MarkerOutcome struct {
	TopicPartition
	Commit    bool // a COMMIT marker; false: ABORT
	State     MarkerState
	Error     string    // the last failed attempt's error; "" when none failed
	Attempts  int       // WriteMarkers calls that tried this partition
	WrittenAt time.Time // when the leader acknowledged it; zero until written
}

// markerRun is the outcome of the markers of one transaction end, kept on
// the actor (lastMarkers) for the id's last or current end: one entry per
// partition of the transaction, replaced by the next end, dropped with the
// actor. It is in memory only: a coordinator that loads the id again
// (restart, new leader) knows the outcome of the markers it writes itself
// and nothing of those before.
//
// The actor sets it in startMarkers and its marker writer updates it;
// parts is copied on write, so a snapshot may share it.
type markerRun struct {
	parts []MarkerOutcome // sorted; guarded by Coordinator.mu, never modified in place
}

func newMarkerRun(commit bool, tps []TopicPartition) *markerRun {
	parts := make([]MarkerOutcome, len(tps))
	for i, tp := range tps {
		parts[i] = MarkerOutcome{TopicPartition: tp, Commit: commit, State: MarkerPending}
	}
	return &markerRun{parts: parts}
}

// recordMarkers notes the outcome of one WriteMarkers call that tried tps
// and returned failed, at now.
func (c *Coordinator) recordMarkers(run *markerRun, tps []TopicPartition, failed map[TopicPartition]error, now time.Time) {
	tried := make(map[TopicPartition]bool, len(tps))
	for _, tp := range tps {
		tried[tp] = true
	}
	c.rt.Lock()
	defer c.rt.Unlock()
	parts := make([]MarkerOutcome, len(run.parts))
	copy(parts, run.parts)
	for i := range parts {
		o := &parts[i]
		if !tried[o.TopicPartition] {
			continue
		}
		o.Attempts++
		err, ok := failed[o.TopicPartition]
		switch {
		case !ok:
			o.State, o.WrittenAt = MarkerWritten, now
		case errors.Is(err, ErrMarkerFenced):
			o.State, o.Error = MarkerFailed, err.Error()
		default:
			o.State, o.Error = MarkerPending, err.Error()
		}
	}
	run.parts = parts
}

// markersLocked is the outcome of a's last or current end; nil before its
// first. the runtime's lock must be held.
func (a *actor) markersLocked() []MarkerOutcome {
	if a.lastMarkers == nil {
		return nil
	}
	return a.lastMarkers.parts
}
