package tui

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/inspect"
)

// txnScreen lists the transactional ids with their state, producer, and
// how long an open transaction has left before its coordinator aborts it
// (the countdown is as of the last refresh).
type txnScreen struct {
	flat
	txns  table
	last  deltas
	ready bool
}

func newTxnScreen() *txnScreen {
	return &txnScreen{txns: table{cols: []column{
		{title: "TRANSACTIONAL-ID"}, {title: "STATE"}, {title: "PRODUCER", right: true}, {title: "EPOCH", right: true},
		{title: "TIMEOUT", right: true}, {title: "EXPIRES", right: true}, {title: "COORDINATOR", right: true},
		{title: "PARTITIONS"}, {title: "ERROR"},
	}}}
}

func (t *txnScreen) name() string  { return "txn" }
func (t *txnScreen) title() string { return "transactions" }
func (t *txnScreen) list() *table  { return &t.txns }

func (t *txnScreen) fetch() (string, fetchFunc) {
	return "", func(ctx context.Context, src Source) (any, error) { return src.Transactions(ctx) }
}

func (t *txnScreen) loaded(_ string, v any, err error, now time.Time) error {
	txns, _ := v.([]inspect.Transaction)
	if txns == nil && err != nil {
		return err
	}
	var rows []row
	for _, tx := range txns {
		r := row{key: tx.TransactionalID, bad: make([]bool, 9)}
		expires := ""
		if tx.StartTime != nil {
			left := time.UnixMilli(*tx.StartTime).Add(time.Duration(tx.TimeoutMs) * time.Millisecond).Sub(now)
			if left < 0 {
				expires = (-left).Truncate(time.Second).String() + " ago"
				r.bad[5] = true
			} else {
				expires = left.Truncate(time.Second).String()
			}
		}
		r.cells = []string{
			tx.TransactionalID, tx.State, strconv.FormatInt(tx.ProducerID, 10), strconv.Itoa(int(tx.ProducerEpoch)),
			(time.Duration(tx.TimeoutMs) * time.Millisecond).String(), expires, strconv.Itoa(int(tx.Coordinator)),
			partitionsText(tx.Partitions), tx.Error,
		}
		r.bad[8] = tx.Error != ""
		rows = append(rows, r)
	}
	t.last = t.last.mark(rows, 5) // the countdown
	t.txns.setRows(rows)
	t.ready = true
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

func (t *txnScreen) view(s Styles, _, height int) string {
	if !t.ready {
		return s.Dim.Render("listing transactions…")
	}
	return t.txns.view(s, height)
}
