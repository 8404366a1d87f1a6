package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnEndTimeout bounds the commit or abort that ends a produce transaction,
// also when the command's context was cancelled (the abort after SIGINT).
const txnEndTimeout = 30 * time.Second

// ErrTransactionAborted reports that klog produce --txn-id aborted its
// transaction (bad input, a failed record, or an interrupt): none of the
// records it produced are visible to read_committed consumers.
var ErrTransactionAborted = errors.New("transaction aborted")

// inputItem is one record read from the input, or the error that ended it.
type inputItem struct {
	r   *kgo.Record
	err error
}

// inputReadAhead is how many records readInput may read ahead of the
// producer: with none, every record is a handoff between two goroutines,
// which cost 70% of produce's time on a file of short lines. The client
// buffers up to 10,000 records behind it anyway.
const inputReadAhead = 256

// readInput reads records from src and sends them on items until the input
// ends (a final item with io.EOF or the error) or ctx is done. It is the
// only reader of src; a read blocked on a terminal returns when the input
// yields or closes, after which the goroutine sees ctx done and exits.
func readInput(ctx context.Context, src recordSource, items chan<- inputItem) {
	defer close(items)
	for {
		r, err := src.next()
		select {
		case items <- inputItem{r: r, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// runProduceTxn produces every input record in one transaction of cl (a
// transactional client) and commits it at the end of the input. Bad input,
// a failed record or cancellation (SIGINT) abort the transaction instead.
// prepare fixes up a record before it is produced, or says why it cannot be.
func runProduceTxn(ctx context.Context, cl *kgo.Client, txnID string, src recordSource, prepare func(*kgo.Record) error, rep *produceReport) error {
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction %q: %w", txnID, err)
	}
	begun := time.Now()
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	items := make(chan inputItem, inputReadAhead)
	go readInput(readCtx, src, items)

	var n int64
	var cause error // why the transaction is aborted
loop:
	for {
		var it inputItem
		select {
		case <-ctx.Done():
			cause = fmt.Errorf("interrupted after %s: %w", plural(n, "record"), context.Cause(ctx))
			break loop
		case got, ok := <-items:
			if !ok {
				cause = fmt.Errorf("interrupted after %s: %w", plural(n, "record"), context.Cause(ctx))
				break loop
			}
			it = got
		}
		if errors.Is(it.err, io.EOF) {
			break
		}
		n++
		if it.err != nil {
			cause = fmt.Errorf("input record %d: %w", n, it.err)
			break
		}
		if err := prepare(it.r); err != nil {
			rep.fail(n, err)
			continue
		}
		idx := n
		rep.sent()
		cl.Produce(ctx, it.r, func(r *kgo.Record, err error) { rep.done(idx, r, err) })
	}
	stopReading()
	return endProduceTxn(ctx, cl, txnID, begun, n, cause, rep)
}

// endProduceTxn ends the transaction of n records, begun at begun: it
// commits once they are all produced, and aborts when there is a cause
// to, or when one comes up during the flush.
func endProduceTxn(ctx context.Context, cl *kgo.Client, txnID string, begun time.Time, n int64, cause error, rep *produceReport) error {
	// Ending the transaction must outlive an interrupt, but not forever.
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), txnEndTimeout)
	defer cancel()
	if cause == nil {
		// The flush ends with an interrupt, or once records waited
		// past --timeout; either aborts.
		flushCtx, stopFlush := context.WithTimeout(ctx, txnEndTimeout)
		if err := cl.Flush(flushCtx); err != nil {
			cause = fmt.Errorf("flush: %w", context.Cause(flushCtx))
		} else if err := rep.result(n); err != nil {
			cause = err
		}
		stopFlush()
	}
	// An interrupt that came with the end of the input (the loop's select
	// may pick either) or during the flush still aborts: commit only when
	// nothing asked to stop before the commit begins.
	if cause == nil && ctx.Err() != nil {
		cause = fmt.Errorf("interrupted after %s: %w", plural(n, "record"), context.Cause(ctx))
	}
	if cause != nil {
		if err := cl.AbortBufferedRecords(endCtx); err != nil {
			return fmt.Errorf("%w; abort transaction %q: %w", cause, txnID, err)
		}
		if err := cl.EndTransaction(endCtx, kgo.TryAbort); err != nil {
			return fmt.Errorf("%w; abort transaction %q: %w", cause, txnID, err)
		}
		if !rep.quiet {
			fmt.Fprintf(rep.w, "aborted transaction %q\n", txnID)
		}
		return fmt.Errorf("%w: %w", ErrTransactionAborted, cause)
	}
	if err := cl.EndTransaction(endCtx, kgo.TryCommit); err != nil {
		return commitError(txnID, time.Since(begun), err)
	}
	if !rep.quiet {
		fmt.Fprintf(rep.w, "committed transaction %q: %s\n", txnID, plural(n, "record"))
	}
	return nil
}

// commitError explains a commit the coordinator refused after the
// transaction was open for open. A transaction open longer than its
// timeout is aborted by its coordinator, which bumps the producer's epoch;
// the commit that follows is answered INVALID_TXN_STATE under transaction
// version 2 and PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before EndTxn v2)
// under version 1, as Kafka 4.4 answers it. Fenced is also the answer
// when another producer took over the transactional id.
func commitError(txnID string, open time.Duration, err error) error {
	timedOut := fmt.Sprintf("the coordinator aborted it: it was open %v, longer than its timeout (transaction.timeout.ms, --txn-timeout)",
		open.Round(time.Millisecond))
	switch {
	case errors.Is(err, kerr.InvalidTxnState):
		return fmt.Errorf("commit transaction %q: %s: %w (%w)", txnID, timedOut, ErrTransactionAborted, err)
	case errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch):
		return fmt.Errorf("commit transaction %q: %s, or another producer took over the transactional id: %w (%w)",
			txnID, timedOut, ErrTransactionAborted, err)
	}
	return fmt.Errorf("commit transaction %q: %w", txnID, err)
}
