package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
)

// produceTxn produces values in one transaction and commits or aborts it.
func produceTxn(t *testing.T, b, topic string, commit bool, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b), kgo.TransactionalID("klog-test-"+topic), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		t.Fatal(err)
	}
	// The markers are written after EndTxn answers, as in Kafka: wait for
	// them, so the log ends where the callers expect.
	id, want := "klog-test-"+topic, "CompleteAbort"
	if commit {
		want = "CompleteCommit"
	}
	adm := kadm.NewClient(cl)
	testkit.WaitFor(t, "the transaction's markers", func() (bool, string) {
		ds, err := adm.DescribeTransactions(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		d, ok := ds[id]
		return ok && d.State == want, fmt.Sprintf("%+v", d)
	})
}

func TestConsumeExitAtEndAfterTransactionMarkers(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "txn", 1)
	produceTxn(t, b, "txn", true, "c1", "c2")
	produceTxn(t, b, "txn", false, "a1")

	// The log ends with an abort marker; -e must still exit, and by
	// default (read committed) print only the committed records.
	r := mustRun(t, b, "", "consume", "txn", "-e")
	if r.stdout != "c1\nc2\n" {
		t.Errorf("read committed = %q", r.stdout)
	}
	r = mustRun(t, b, "", "consume", "txn", "-e", "--read-uncommitted")
	if r.stdout != "c1\nc2\na1\n" {
		t.Errorf("read uncommitted = %q", r.stdout)
	}
	// Control records are printed only on request, and -n does not count
	// them.
	r = mustRun(t, b, "", "consume", "txn", "-e", "--print-control", "-f", "%o ")
	if r.stdout != "0 1 2 4 " {
		t.Errorf("with control records = %q", r.stdout)
	}
}

func TestConsumeInterrupted(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "intr", 1)
	seedNumbered(t, b, "intr", 0, 1, time.Now())
	// A consume without bounds runs until interrupted; cancelling its
	// context (what SIGINT does) is a clean exit after what was printed.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &notifyWriter{wrote: make(chan struct{}, 1)}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-b", b, "consume", "intr"}, nil, out, &notifyWriter{}, func(string) string { return "" })
	}()
	select {
	case <-out.wrote:
	case <-time.After(30 * time.Second):
		t.Fatal("no record printed")
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after interrupt, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("consume did not stop after interrupt")
	}
}

// notifyWriter discards writes and signals the first one.
type notifyWriter struct {
	wrote chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	if w.wrote != nil {
		select {
		case w.wrote <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// oneRecordSource is input of one record.
type oneRecordSource struct{ done bool }

func (s *oneRecordSource) next() (*kgo.Record, error) {
	if s.done {
		return nil, io.EOF
	}
	s.done = true
	return &kgo.Record{Value: []byte("v")}, nil
}

// cancelOnProduce cancels a context when a Produce request is written: an
// interrupt that arrives as the input ends, before the records are
// acknowledged.
type cancelOnProduce struct{ cancel context.CancelFunc }

func (h cancelOnProduce) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if key == 0 {
		h.cancel()
	}
}

// An interrupt that arrives as the input ends, before or while the last
// records are flushed, aborts the transaction: the loop may see the end of
// the input first, and nothing is committed once the user asked to stop.
func TestProduceTxnInterruptAtEndOfInputAborts(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "txn-int", 1)
	for i := range 10 {
		id := fmt.Sprintf("klog-test-int-%d", i)
		ctx, cancel := context.WithCancel(context.Background())
		cl, err := kgo.NewClient(kgo.SeedBrokers(b), kgo.TransactionalID(id), kgo.DefaultProduceTopic("txn-int"), kgo.WithHooks(cancelOnProduce{cancel}))
		if err != nil {
			t.Fatal(err)
		}
		rep := &produceReport{w: io.Discard, quiet: true}
		err = runProduceTxn(ctx, cl, id, &oneRecordSource{}, func(*kgo.Record) error { return nil }, rep)
		cl.Close()
		cancel()
		if !errors.Is(err, ErrTransactionAborted) {
			t.Fatalf("try %d: runProduceTxn interrupted during its flush = %v, want %v", i, err, ErrTransactionAborted)
		}
	}
}
