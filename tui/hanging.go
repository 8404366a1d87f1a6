package tui

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/klogdev/klog/inspect"
)

// hangingScreen lists the hanging transactions: open on a partition,
// last written longer ago than Options.HangingAfter, and driven to an end
// by no coordinator (inspect.HangingTransactions, what klog txn hanging
// finds). Each holds its partition's last stable offset at its first
// offset, so read_committed consumers stop there; a aborts the one under
// the cursor (after y; never with --readonly), as klog txn abort does.
type hangingScreen struct {
	flat
	rows  table
	txns  map[string]inspect.HangingTransaction
	ready bool
	age   time.Duration
}

func newHangingScreen(age time.Duration) *hangingScreen {
	return &hangingScreen{age: age, rows: table{cols: []column{
		{title: "TOPIC"}, {title: "P", right: true}, {title: "PRODUCER", right: true}, {title: "EPOCH", right: true},
		{title: "LSO HELD AT", right: true}, {title: "LAST WRITE", right: true}, {title: "TRANSACTIONAL-ID"}, {title: "COORDINATOR"},
	}}}
}

func (h *hangingScreen) name() string  { return "hanging" }
func (h *hangingScreen) title() string { return "hanging transactions" }
func (h *hangingScreen) list() *table  { return &h.rows }

func (h *hangingScreen) fetch() (string, fetchFunc) {
	age := h.age
	return "", func(ctx context.Context, src Source) (any, error) { return src.Hanging(ctx, age) }
}

func (h *hangingScreen) loaded(_ string, v any, err error, now time.Time) error {
	if err != nil {
		return err
	}
	h.txns = map[string]inspect.HangingTransaction{}
	var rows []row
	for _, t := range v.([]inspect.HangingTransaction) {
		k := fmt.Sprintf("%s/%d@%d", t.Topic, t.Partition, t.StartOffset)
		h.txns[k] = t
		id, coord := "-", "knows no such producer"
		if t.TransactionalID != nil {
			id, coord = *t.TransactionalID, t.CoordinatorState
		}
		rows = append(rows, row{key: k, cells: []string{
			t.Topic, strconv.Itoa(int(t.Partition)), strconv.FormatInt(t.ProducerID, 10), strconv.Itoa(int(t.ProducerEpoch)),
			strconv.FormatInt(t.StartOffset, 10), now.Sub(time.UnixMilli(t.LastTimestamp)).Truncate(time.Second).String() + " ago",
			id, coord,
		}, bad: []bool{4: true}})
	}
	h.rows.setRows(rows)
	h.ready = true
	return nil
}

func (h *hangingScreen) action() (action, bool) {
	k, ok := h.rows.selected()
	t, found := h.txns[k]
	if !ok || !found {
		return action{}, false
	}
	return action{
		What: fmt.Sprintf("abort the transaction of producer %d (epoch %d) on %s/%d starting at offset %d", t.ProducerID, t.ProducerEpoch, t.Topic, t.Partition, t.StartOffset),
		Do:   func(ctx context.Context, src Source) error { return src.AbortTransaction(ctx, t) },
	}, true
}

func (h *hangingScreen) view(s Styles, width, height int) string {
	if !h.ready {
		return s.Dim.Render("looking for hanging transactions…")
	}
	head := fmt.Sprintf("open transactions last written over %s ago that no coordinator is finishing; a aborts one (asks first)", h.age)
	if len(h.rows.rows) == 0 {
		return head + "\n\n" + s.Dim.Render("none")
	}
	return head + "\n\n" + h.rows.view(s, width, height-2)
}
