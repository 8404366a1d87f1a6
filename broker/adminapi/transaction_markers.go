package adminapi

import (
	"time"

	"github.com/klogdev/klog/broker/txn"
	"github.com/klogdev/klog/nodeapi"
)

// transactionMarkers maps the coordinator's marker outcomes; nil for none.
func transactionMarkers(outcomes []txn.MarkerOutcome) []nodeapi.TransactionMarker {
	if len(outcomes) == 0 {
		return nil
	}
	out := make([]nodeapi.TransactionMarker, 0, len(outcomes))
	for _, o := range outcomes {
		m := nodeapi.TransactionMarker{
			Topic: o.Topic, Partition: o.Partition, Type: nodeapi.MarkerAbort,
			State: markerState(o.State), Error: o.Error, Attempts: o.Attempts,
		}
		if o.Commit {
			m.Type = nodeapi.MarkerCommit
		}
		if !o.WrittenAt.IsZero() {
			at := o.WrittenAt.UTC().Truncate(time.Millisecond) // as the other times, in ms
			m.WrittenAt = &at
		}
		out = append(out, m)
	}
	return out
}

func markerState(s txn.MarkerState) string {
	switch s {
	case txn.MarkerWritten:
		return nodeapi.MarkerWritten
	case txn.MarkerFailed:
		return nodeapi.MarkerFailed
	default:
		return nodeapi.MarkerPending
	}
}
