package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/internal/testkit"
)

// txnBroker starts the broker the transaction command tests run against.
func txnBroker(t *testing.T) string {
	t.Helper()
	return startBroker(t)
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode JSON: %v\n%s", err, s)
	}
	return v
}

func TestProduceTxnCommits(t *testing.T) {
	b := txnBroker(t)
	createTopic(t, b, "tc", 2)

	r := mustRun(t, b, "a\nb\nc\n", "produce", "tc", "--txn-id", "tx-commit", "-k", "k")
	if !strings.Contains(r.stderr, `committed transaction "tx-commit": 3 records`) {
		t.Errorf("no commit report on stderr:\n%s", r.stderr)
	}
	// Read committed is the consume default: all three are visible, once
	// the commit markers are written, which the coordinator does after
	// EndTxn answers (as Kafka's): -n waits for them where -e, which ends
	// at the last stable offset it first sees, could find none yet (seen
	// under -race at load 8).
	r = mustRun(t, b, "", "consume", "tc", "-n", "3")
	if got := sortLines(r.stdout); got != "a\nb\nc\n" {
		t.Errorf("read committed = %q", got)
	}

	// The transactional id is listed and described, closed, with its
	// timeout.
	lj := decodeJSON[txnListJSON](t, mustRun(t, b, "", "txn", "list", "--format", "json").stdout)
	if lj.Version != txnJSONVersion || len(lj.Transactions) != 1 {
		t.Fatalf("txn list = %+v", lj)
	}
	tx := lj.Transactions[0]
	if tx.TransactionalID != "tx-commit" || tx.ProducerID < 0 || tx.TimeoutMs != 60000 || tx.State == "Ongoing" || tx.Error != "" {
		t.Errorf("listed transaction = %+v", tx)
	}
	dj := decodeJSON[txnListJSON](t, mustRun(t, b, "", "txn", "describe", "tx-commit", "--format", "json").stdout)
	if len(dj.Transactions) != 1 || dj.Transactions[0].ProducerID != tx.ProducerID {
		t.Errorf("txn describe = %+v, list said %+v", dj, tx)
	}
	// A state filter that matches nothing lists nothing.
	r = mustRun(t, b, "", "txn", "list", "--state", "ongoing")
	if got := lines(r.stdout); len(got) != 1 || !strings.HasPrefix(got[0], "TRANSACTIONAL-ID") {
		t.Errorf("txn list --state ongoing = %q", r.stdout)
	}
}

func TestProduceTxnAbortsOnBadInput(t *testing.T) {
	b := txnBroker(t)
	createTopic(t, b, "tbad", 1)

	// Two good JSON records, then a line that is not JSON: the
	// transaction is aborted and nothing becomes visible.
	in := `{"value":"g1"}` + "\n" + `{"value":"g2"}` + "\n" + "not json\n"
	r := klogRun(t, b, in, "produce", "tbad", "-f", "json", "--txn-id", "tx-bad")
	if r.code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitFailure, r.stderr)
	}
	if !strings.Contains(r.stderr, `aborted transaction "tx-bad"`) || !strings.Contains(r.stderr, "input record 3") {
		t.Errorf("stderr does not report the abort and its cause:\n%s", r.stderr)
	}
	r = mustRun(t, b, "", "consume", "tbad", "-e")
	if r.stdout != "" {
		t.Errorf("read committed after abort = %q, want nothing", r.stdout)
	}

	// A record for a partition the topic does not have fails, and the
	// whole transaction with it.
	in = `{"value":"ok"}` + "\n" + `{"value":"far","partition":7}` + "\n"
	r = klogRun(t, b, in, "produce", "tbad", "-f", "json", "--txn-id", "tx-bad")
	if r.code != exitFailure || !strings.Contains(r.stderr, "aborted transaction") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = mustRun(t, b, "", "consume", "tbad", "-e")
	if r.stdout != "" {
		t.Errorf("read committed after failed record = %q, want nothing", r.stdout)
	}
	// The same transactional id then commits normally.
	mustRun(t, b, "fine\n", "produce", "tbad", "--txn-id", "tx-bad", "-q")
	// The commit's markers are written after EndTxn answers, as in Kafka:
	// the record becomes visible to read_committed once they are.
	testkit.WaitFor(t, "the committed record to be visible", func() (bool, string) {
		r = mustRun(t, b, "", "consume", "tbad", "-e")
		return r.stdout != "", r.stdout
	})
	if r.stdout != "fine\n" {
		t.Errorf("read committed after commit = %q", r.stdout)
	}
}

func TestProduceTxnInterruptAborts(t *testing.T) {
	b := txnBroker(t)
	createTopic(t, b, "tint", 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	stderr := &testkit.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-b", b, "produce", "tint", "--txn-id", "tx-int"}, pr, io.Discard, stderr, func(string) string { return "" })
	}()
	if _, err := io.WriteString(pw, "x1\nx2\n"); err != nil {
		t.Fatal(err)
	}
	// Both records are in the log, inside the open transaction.
	testkit.WaitFor(t, "both records acknowledged", func() (bool, string) {
		s := stderr.String()
		return strings.Contains(s, "tint[0]@1"), s
	})
	adm := testAdmin(t, b)
	testkit.WaitFor(t, "an open transaction on tint/0", func() (bool, string) {
		d, err := adm.DescribeProducers(testkit.Context(t), kadm.TopicsSet{"tint": {0: {}}})
		if err != nil {
			return false, err.Error()
		}
		var starts []int64
		d.EachProducer(func(p kadm.DescribedProducer) { starts = append(starts, p.CurrentTxnStartOffset) })
		return slices.Contains(starts, 0), fmt.Sprint("start offsets ", starts)
	})

	cancel() // what SIGINT does
	select {
	case code := <-done:
		if code != exitFailure {
			t.Errorf("exit %d after interrupt, want %d", code, exitFailure)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("produce did not stop after interrupt")
	}
	if s := stderr.String(); !strings.Contains(s, `aborted transaction "tx-int"`) || !strings.Contains(s, "interrupted after 2 records") {
		t.Errorf("stderr does not report the abort:\n%s", s)
	}
	// Aborted: read committed sees nothing, read uncommitted both records.
	r := mustRun(t, b, "", "consume", "tint", "-e")
	if r.stdout != "" {
		t.Errorf("read committed = %q, want nothing", r.stdout)
	}
	r = mustRun(t, b, "", "consume", "tint", "-e", "--read-uncommitted")
	if r.stdout != "x1\nx2\n" {
		t.Errorf("read uncommitted = %q", r.stdout)
	}
}

func TestTxnProducersAndAbort(t *testing.T) {
	b := txnBroker(t)
	createTopic(t, b, "topen", 2)
	openTxn(t, b, "topen", "o1", "o2")

	// The open transaction shows on the partition it wrote to.
	pj := decodeJSON[txnProducersJSON](t, mustRun(t, b, "", "txn", "producers", "topen", "--format", "json").stdout)
	if len(pj.Partitions) != 2 {
		t.Fatalf("txn producers = %+v", pj)
	}
	var open *inspect.Producer
	var openPart int32 = -1
	for _, p := range pj.Partitions {
		if p.Error != "" {
			t.Errorf("partition %d: %s", p.Partition, p.Error)
		}
		for i := range p.Producers {
			if p.Producers[i].CurrentTxnStartOffset >= 0 {
				open, openPart = &p.Producers[i], p.Partition
			}
		}
	}
	if open == nil {
		t.Fatalf("no open transaction in %+v", pj)
	}
	if open.CurrentTxnStartOffset != 0 || open.ProducerID < 0 {
		t.Errorf("open transaction = %+v", *open)
	}
	part := []string{"--topic", "topen", "--partition", fmt.Sprint(openPart)}

	// Its coordinator is running it: not hanging, however young.
	hj := decodeJSON[txnHangingJSON](t, mustRun(t, b, "", "txn", "hanging", "--topic", "topen", "--max-age", "0s", "--format", "json").stdout)
	if len(hj.Hanging) != 0 || hj.MaxAgeMs != 0 {
		t.Errorf("txn hanging = %+v, want none", hj)
	}

	// Abort is refused without a terminal or --yes, and for an offset no
	// transaction starts at.
	r := klogRun(t, b, "", append([]string{"txn", "abort", "--start-offset", "0"}, part...)...)
	if r.code != exitFailure || !strings.Contains(r.stderr, "not confirmed") {
		t.Errorf("abort without --yes: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = klogRun(t, b, "", append([]string{"txn", "abort", "--start-offset", "5", "--yes"}, part...)...)
	if r.code != exitFailure || !strings.Contains(r.stderr, inspect.ErrNoOpenTransaction.Error()) {
		t.Errorf("abort of a wrong offset: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// A read_committed consumer is held at the open transaction...
	if r := mustRun(t, b, "", "consume", "topen", "-e"); r.stdout != "" {
		t.Fatalf("read committed before the abort = %q", r.stdout)
	}
	// ...until the abort marker closes it.
	r = mustRun(t, b, "", append([]string{"txn", "abort", "--start-offset", "0", "--yes", "--format", "json"}, part...)...)
	aj := decodeJSON[txnAbortJSON](t, r.stdout)
	if !aj.Aborted || aj.ProducerID != open.ProducerID || aj.ProducerEpoch != open.ProducerEpoch || aj.StartOffset != 0 {
		t.Errorf("abort = %+v, open transaction was %+v", aj, *open)
	}
	adm := testAdmin(t, b)
	testkit.WaitFor(t, "the last stable offset past the abort marker", func() (bool, string) {
		ends, err := adm.ListEndOffsets(testkit.Context(t), "topen")
		if err != nil {
			return false, err.Error()
		}
		o, _ := ends.Lookup("topen", openPart)
		return o.Offset == 3, fmt.Sprint("end offset ", o.Offset)
	})
	r = mustRun(t, b, "", "consume", "topen", "-e", "--print-control", "-f", "%o ")
	if r.stdout != "2 " {
		t.Errorf("after the abort, read committed offsets = %q, want only the marker at 2", r.stdout)
	}
}

func TestTxnDescribeUnknown(t *testing.T) {
	b := txnBroker(t)
	r := klogRun(t, b, "", "txn", "describe", "no-such-id")
	if r.code != exitFailure || !strings.Contains(r.stderr, inspect.ErrTransactionNotFound.Error()) {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "no-such-id") {
		t.Errorf("the failed id is missing from the table:\n%s", r.stdout)
	}
}

func TestTxnUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"txn", "list", "--state", "bogus"},
		{"txn", "describe"},
		{"txn", "producers"},
		{"txn", "producers", "t/x"},
		{"txn", "producers", "/1"},
		{"txn", "hanging", "--max-age", "-1s"},
		{"txn", "abort", "--partition", "0", "--start-offset", "0"},
		{"txn", "abort", "--topic", "t", "--start-offset", "0"},
		{"txn", "abort", "--topic", "t", "--partition", "0"},
		{"txn", "nope"},
		{"produce", "t", "--txn-id", "x", "--acks", "1"},
		{"produce", "t", "--txn-id", "x", "--txn-timeout", "0s"},
	} {
		// No broker listens at this address: usage errors come first.
		r := klogRun(t, "127.0.0.1:1", "", args...)
		if r.code != exitUsage {
			t.Errorf("klog %q: exit %d, want %d; stderr:\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
}

func TestTxnProducersMissing(t *testing.T) {
	b := txnBroker(t)
	createTopic(t, b, "tp", 1)
	for _, arg := range []string{"nope", "tp/3"} {
		r := klogRun(t, b, "", "txn", "producers", arg)
		if r.code != exitFailure {
			t.Errorf("txn producers %s: exit %d, stderr:\n%s", arg, r.code, r.stderr)
		}
	}
	// A bare topic means all of its partitions, whatever else is named.
	pj := decodeJSON[txnProducersJSON](t, mustRun(t, b, "", "txn", "producers", "tp/0", "tp", "--format", "json").stdout)
	if len(pj.Partitions) != 1 || pj.Partitions[0].Topic != "tp" || len(pj.Partitions[0].Producers) != 0 {
		t.Errorf("txn producers = %+v", pj)
	}
}

// TestProduceTxnTimedOut: a transaction its coordinator aborted because it
// was open longer than --txn-timeout fails its commit with a message that
// says so, and exit 1.
func TestProduceTxnTimedOut(t *testing.T) {
	n := brokertest.Start(t)
	b := n.Addr()
	createTopic(t, b, "tslow", 1)
	in, w := io.Pipe()
	done := make(chan result, 1)
	go func() {
		done <- klogRunReader(t, b, in, "produce", "tslow", "--txn-id", "slow", "--txn-timeout", "1s")
	}()
	if _, err := w.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	adm := testAdmin(t, b)
	testkit.WaitFor(t, "the transaction of slow to be open", func() (bool, string) {
		d, err := adm.DescribeTransactions(testkit.Context(t), "slow")
		return err == nil && d["slow"].State == "Ongoing" && len(d["slow"].Topics) > 0, fmt.Sprint(d, err)
	})
	testkit.WaitFor(t, "the coordinator to abort slow", func() (bool, string) {
		n.AdvanceClock(2 * time.Second)
		d, err := adm.DescribeTransactions(testkit.Context(t), "slow")
		return err == nil && d["slow"].State == "CompleteAbort", fmt.Sprint(d, err)
	})
	w.Close()
	r := <-done
	if r.code != exitFailure || !strings.Contains(r.stderr, "the coordinator aborted it") || !strings.Contains(r.stderr, "transaction.timeout.ms") {
		t.Errorf("commit after the timeout: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
