package tui

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
)

// TxnMarkers implements Source: the markers its coordinator lists for the
// id in GET /v1/transactions. A node that does not answer is skipped;
// its error is returned when no other node lists the id.
func (s *KafkaSource) TxnMarkers(ctx context.Context, transactionalID string) ([]nodeapi.TransactionMarker, error) {
	if len(s.admins) == 0 {
		return nil, s.noAdminErr()
	}
	var firstErr error
	for _, c := range s.admins {
		txns, err := c.Transactions(ctx)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, t := range txns.Transactions {
			if t.TransactionalID == transactionalID {
				return t.Markers, nil
			}
		}
	}
	return nil, firstErr
}

// txnDetail is what the txn screen shows of one transaction: its
// partitions and the markers of its last end, or why those could not be
// read.
type txnDetail struct {
	parts      []TxnPartition
	markers    []nodeapi.TransactionMarker
	markersErr error
}

// fetchTxnDetail reads the markers of tx's last end, then the partitions
// of tx and of those markers (an ended transaction has none of its own).
func fetchTxnDetail(ctx context.Context, src Source, tx inspect.Transaction) (txnDetail, error) {
	var d txnDetail
	d.markers, d.markersErr = src.TxnMarkers(ctx, tx.TransactionalID)
	var err error
	d.parts, err = src.TxnPartitions(ctx, tx.ProducerID, withMarkerPartitions(tx.Partitions, d.markers))
	return d, err
}

// withMarkerPartitions is parts and the partitions of markers, sorted.
func withMarkerPartitions(parts []inspect.TopicPartitions, markers []nodeapi.TransactionMarker) []inspect.TopicPartitions {
	if len(markers) == 0 {
		return parts
	}
	byTopic := make(map[string][]int32)
	for _, tp := range parts {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partitions...)
	}
	for _, m := range markers {
		byTopic[m.Topic] = append(byTopic[m.Topic], m.Partition)
	}
	out := make([]inspect.TopicPartitions, 0, len(byTopic))
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		ps := byTopic[topic]
		slices.Sort(ps)
		out = append(out, inspect.TopicPartitions{Topic: topic, Partitions: slices.Compact(ps)})
	}
	return out
}

// markerCells are the MARKER cell of m (its type and state, with ×n for
// n attempts when more than one) and the WRITTEN cell at now, and whether
// the marker is unhealthy: failed, or pending after a failed attempt.
func markerCells(m nodeapi.TransactionMarker, now time.Time) (marker, written string, bad bool) {
	marker = strings.ToUpper(m.Type)
	switch m.State {
	case nodeapi.MarkerWritten:
		marker += " ✓"
	default:
		marker += " " + m.State
	}
	if m.Attempts > 1 {
		marker += " ×" + strconv.Itoa(m.Attempts)
	}
	if m.WrittenAt != nil {
		written = max(0, now.Sub(*m.WrittenAt)).Truncate(time.Second).String() + " ago"
	}
	bad = m.State == nodeapi.MarkerFailed || (m.State == nodeapi.MarkerPending && m.Error != "")
	return marker, written, bad
}
