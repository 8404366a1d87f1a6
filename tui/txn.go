package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
)

// txnScreen lists the transactional ids with their state, producer, the
// principal that got the producer id (admin API), and how long an open
// transaction has left before its coordinator aborts it (the countdown is
// as of the last refresh). enter shows, for each
// partition of the transaction, where it started there and so where it
// holds the last stable offset, and how much of the log waits behind it,
// beside the COMMIT or ABORT marker of its last end there (admin API):
// written ✓, pending or failed, with the attempts, when it was written
// and the last error.
type txnScreen struct {
	drill
	last       deltas
	byID       map[string]inspect.Transaction
	ready      bool
	markersErr error // why the open transaction's markers are unknown
}

func newTxnScreen() *txnScreen {
	return &txnScreen{drill: drill{
		label: "transactions",
		items: table{cols: []column{
			{title: "TRANSACTIONAL-ID"}, {title: "STATE"}, {title: "PRODUCER", right: true}, {title: "EPOCH", right: true},
			{title: "PRINCIPAL"}, {title: "TIMEOUT", right: true}, {title: "EXPIRES", right: true}, {title: "COORDINATOR", right: true},
			{title: "PARTITIONS"}, {title: "ERROR"},
		}},
		detail: table{cols: []column{
			{title: "TOPIC"}, {title: "P", right: true}, {title: "STARTED AT", right: true}, {title: "LSO", right: true},
			{title: "HW", right: true}, {title: "HELD BACK", right: true}, {title: "LAST-SEQ", right: true},
			{title: "MARKER"}, {title: "WRITTEN", right: true}, {title: "ERROR"},
		}},
	}}
}

func (t *txnScreen) name() string { return "txn" }
func (t *txnScreen) enter() bool  { return t.open() }

func (t *txnScreen) fetch() (string, fetchFunc) {
	if id := t.item; id != "" {
		tx := t.byID[id]
		return "txn " + id, func(ctx context.Context, src Source) (any, error) {
			return fetchTxnDetail(ctx, src, tx)
		}
	}
	return "", func(ctx context.Context, src Source) (any, error) { return src.Transactions(ctx) }
}

func (t *txnScreen) loaded(id string, v any, err error, now time.Time) error {
	if id != "" {
		if err != nil {
			return err
		}
		d := v.(txnDetail)
		markers := make(map[string]nodeapi.TransactionMarker, len(d.markers))
		for _, m := range d.markers {
			markers[m.Topic+"/"+strconv.Itoa(int(m.Partition))] = m
		}
		var rows []row
		for _, p := range d.parts {
			held := "-"
			if p.StartOffset >= 0 && p.HighWatermark >= 0 {
				held = strconv.FormatInt(max(0, p.HighWatermark-p.StartOffset), 10)
			}
			key := p.Topic + "/" + strconv.Itoa(int(p.Partition))
			var marker, written string
			r := row{key: key, bad: make([]bool, 10)}
			errText := p.Error
			if m, ok := markers[key]; ok {
				marker, written, r.bad[7] = markerCells(m, now)
				if errText == "" && m.State != nodeapi.MarkerWritten {
					errText = m.Error
				}
			}
			r.cells = []string{
				p.Topic, strconv.Itoa(int(p.Partition)), offset(p.StartOffset), offset(p.LastStableOffset),
				offset(p.HighWatermark), held, strconv.Itoa(int(p.LastSequence)), marker, written, errText,
			}
			r.bad[3] = p.StartOffset >= 0 && p.LastStableOffset == p.StartOffset
			r.bad[9] = errText != ""
			rows = append(rows, r)
		}
		t.markersErr = d.markersErr
		t.detail.setRows(rows)
		t.described = true
		return nil
	}
	txns, _ := v.([]inspect.Transaction)
	if txns == nil && err != nil {
		return err
	}
	var rows []row
	for _, tx := range txns {
		r := row{key: tx.TransactionalID, bad: make([]bool, 10)}
		expires := ""
		if tx.StartTime != nil {
			left := time.UnixMilli(*tx.StartTime).Add(time.Duration(tx.TimeoutMs) * time.Millisecond).Sub(now)
			if left < 0 {
				expires = (-left).Truncate(time.Second).String() + " ago"
				r.bad[6] = true
			} else {
				expires = left.Truncate(time.Second).String()
			}
		}
		r.cells = []string{
			tx.TransactionalID, tx.State, strconv.FormatInt(tx.ProducerID, 10), strconv.Itoa(int(tx.ProducerEpoch)), orDash(tx.Principal),
			(time.Duration(tx.TimeoutMs) * time.Millisecond).String(), expires, strconv.Itoa(int(tx.Coordinator)),
			partitionsText(tx.Partitions), tx.Error,
		}
		r.bad[9] = tx.Error != ""
		rows = append(rows, r)
	}
	t.last = t.last.mark(rows, 6) // the countdown
	t.items.setRows(rows)
	t.byID = make(map[string]inspect.Transaction, len(txns))
	for _, tx := range txns {
		t.byID[tx.TransactionalID] = tx
	}
	t.ready, t.listed = true, true
	return err
}

// partitionsText renders partitions as topic/0,1 other/2.
func partitionsText(tps []inspect.TopicPartitions) string {
	var parts []string
	for _, tp := range tps {
		parts = append(parts, tp.Topic+"/"+ids(tp.Partitions))
	}
	return strings.Join(parts, " ")
}

func (t *txnScreen) view(s Styles, width, height int) string {
	if text, ok := t.waiting(s); ok {
		return text
	}
	if t.item == "" {
		return t.items.view(s, width, height)
	}
	tx := t.byID[t.item]
	head := fmt.Sprintf("%s   producer %d epoch %d   STARTED AT is where it holds the partition's LSO while open", tx.State, tx.ProducerID, tx.ProducerEpoch)
	note := "MARKER is its last end's there: ✓ written, pending (being retried), failed (fenced, given up); ×n attempts"
	if t.markersErr != nil {
		note = s.Dim.Render("markers unknown: " + t.markersErr.Error())
	}
	return head + "\n" + note + "\n\n" + t.detail.view(s, width, height-3)
}
