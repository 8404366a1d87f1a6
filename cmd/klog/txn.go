package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/inspect"
)

// txnJSONVersion is the "version" field of every txn command's JSON output;
// it changes only when a field changes meaning or goes away.
const txnJSONVersion = 1

func newTxnCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "txn",
		Aliases: []string{"transactions"},
		Short:   "Inspect transactions and abort hanging ones",
	}
	cmd.AddCommand(
		newTxnListCmd(g),
		newTxnDescribeCmd(g),
		newTxnProducersCmd(g),
		newTxnHangingCmd(g),
		newTxnAbortCmd(g),
	)
	return cmd
}

// txnListJSON is the JSON output of txn list and txn describe. Errors
// says why the list may lack transactions: a coordinator that could not be
// asked, "<what>: <reason>".
type txnListJSON struct {
	Version      int                   `json:"version"`
	Transactions []inspect.Transaction `json:"transactions"`
	Errors       []string              `json:"errors,omitempty"`
}

// writeTxns prints transactions as JSON or a table; withStart adds the
// start time column, missing the reasons transactions may be missing.
func writeTxns(g *globals, out io.Writer, txns []inspect.Transaction, missing []string, withStart bool) error {
	return writeOutput(g, out, txnListJSON{Version: txnJSONVersion, Transactions: txns, Errors: missing}, func(t *table) {
		header := "TRANSACTIONAL-ID\tCOORDINATOR\tSTATE\tPRODUCER-ID\tEPOCH\tTIMEOUT"
		if withStart {
			header += "\tSTART"
		}
		t.row("%s\tPARTITIONS\n", header)
		for _, tx := range txns {
			if tx.Error != "" {
				// Why is on stderr.
				coord := fmt.Sprint(tx.Coordinator)
				if tx.Coordinator < 0 {
					coord = unknownCell
				}
				t.row("%s\t%s\t?\t?\t?\t?", tx.TransactionalID, coord)
				if withStart {
					t.row("\t?")
				}
				t.row("\t?\n")
				continue
			}
			t.row("%s\t%d\t%s\t%d\t%d\t%s", tx.TransactionalID, tx.Coordinator, orDash(tx.State),
				tx.ProducerID, tx.ProducerEpoch, time.Duration(tx.TimeoutMs)*time.Millisecond)
			if withStart {
				start := "-"
				if tx.StartTime != nil {
					start = time.UnixMilli(*tx.StartTime).UTC().Format(time.RFC3339Nano)
				}
				t.row("\t%s", start)
			}
			t.row("\t%s\n", partitionsString(tx.Partitions))
		}
	})
}
