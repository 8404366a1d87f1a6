package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
)

// TestMain lets tests run this test binary as the klog command itself, so
// that a real `klog up` process can be started, killed and restarted.
func TestMain(m *testing.M) {
	if os.Getenv("KLOG_TEST_AS_KLOG") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// upProcess is a `klog up` child process.
type upProcess struct {
	cmd     *exec.Cmd
	brokers string
}

// startUp runs `klog up` with args and waits for its ready line.
func startUp(t *testing.T, args ...string) *upProcess {
	t.Helper()
	return startUpCmd(t, exec.Command(os.Args[0], append([]string{"up", "--log-level", "warn"}, args...)...))
}

// startUpWithFileLimit runs `klog up` with args under `ulimit -n nofile`
// (soft and hard limit) and waits for its ready line.
func startUpWithFileLimit(t *testing.T, nofile int, args ...string) *upProcess {
	t.Helper()
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile)
	return startUpCmd(t, exec.Command("sh", append([]string{"-c", script, os.Args[0], "up", "--log-level", "warn"}, args...)...))
}

// startUpCmd starts cmd, a `klog up`, and waits for its ready line; it
// fails at once when the process exits before it. cmd.Env, when set, is
// added to the test's environment.
func startUpCmd(t *testing.T, cmd *exec.Cmd) *upProcess {
	t.Helper()
	cmd.Env = append(append(os.Environ(), cmd.Env...), "KLOG_TEST_AS_KLOG=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &upProcess{cmd: cmd}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	ready := make(chan string, 1)
	go func() {
		defer close(ready)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if b, ok := strings.CutPrefix(sc.Text(), "BROKERS="); ok {
				ready <- b
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case b, ok := <-ready:
		if !ok {
			cmd.Wait() // stderr is complete once the process is reaped
			t.Fatalf("klog up exited before it was ready (%v); stderr:\n%s", cmd.ProcessState, stderr.String())
		}
		p.brokers = b
	case <-time.After(upReadyTimeout):
		t.Fatalf("klog up not ready after %v; stderr:\n%s", upReadyTimeout, stderr.String())
	}
	return p
}

// upReadyTimeout bounds a test's wait for klog up's ready line. A start
// that fails exits and is reported at once; a slow one is not a failure:
// the race-instrumented binary recovering a thousand partitions after a
// SIGKILL (TestUpStartsUnderLowFileLimit) took over 30 s on a busy
// 2-core machine.
const upReadyTimeout = 90 * time.Second

// kill ends the process with SIGKILL: no flush, no checkpoint, no
// clean-shutdown marker.
func (p *upProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// TestUpSurvivesSIGKILL: records acknowledged with acks=all and committed
// group offsets are still there after the node is killed with SIGKILL and
// started again on the same data directory; the log accepts appends after
// recovery.
func TestUpSurvivesSIGKILL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	p := startUp(t, "--data-dir", dir, "--listen", "127.0.0.1:0")

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.brokers), kgo.DefaultProduceTopic("kept"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "kept", Partition: 0, At: 321, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "keepers", offsets); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	p.kill(t)

	// A different port: the old one may linger in TIME_WAIT.
	p = startUp(t, "--data-dir", dir, "--listen", "127.0.0.1:0")
	cl, err = kgo.NewClient(kgo.SeedBrokers(p.brokers), kgo.ConsumeTopics("kept"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm = kadm.NewClient(cl)
	fetched, err := adm.FetchOffsets(ctx, "keepers")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("kept", 0); !ok || o.At != 321 {
		t.Fatalf("committed offset after SIGKILL: %+v (found %v), want 321", o, ok)
	}
	for got := 0; got < 500; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != fmt.Sprint(got) {
				t.Fatalf("record %d after SIGKILL: %q", got, r.Value)
			}
			got++
		})
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "kept", Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
}

// TestUpSIGKILLWithOpenTransaction: producer state and an open transaction
// survive SIGKILL. After the restart a retried idempotent batch is still
// recognised as a duplicate, and the open transaction is aborted by its
// timeout, so the last stable offset catches up with the high watermark.
func TestUpSIGKILLWithOpenTransaction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--listen", "127.0.0.1:0",
		"-X", "transaction.abort.timed.out.transaction.cleanup.interval.ms=100"}
	p := startUp(t, args...)

	adm := func(brokers string) *kadm.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return kadm.NewClient(cl)
	}
	if _, err := adm(p.brokers).CreateTopic(ctx, 1, 1, nil, "txlog"); err != nil {
		t.Fatal(err)
	}
	// An idempotent batch, appended once.
	raw, err := kgo.NewClient(kgo.SeedBrokers(p.brokers))
	if err != nil {
		t.Fatal(err)
	}
	pid, epoch := initIdempotent(ctx, t, raw)
	batch := logtest.ProducerBatch(time.Now().UnixMilli(), pid, epoch, 0, 3, false)
	if base := produceBatch(ctx, t, raw, "txlog", append([]byte(nil), batch...)); base != 0 {
		t.Fatalf("first append at %d", base)
	}
	raw.Close()

	// A transaction left open.
	tx, err := kgo.NewClient(kgo.SeedBrokers(p.brokers), kgo.TransactionalID("left-open"),
		kgo.TransactionTimeout(2*time.Second), kgo.DefaultProduceTopic("txlog"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tx.Close()
	p.kill(t)

	p = startUp(t, args...)
	raw, err = kgo.NewClient(kgo.SeedBrokers(p.brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if base := produceBatch(ctx, t, raw, "txlog", append([]byte(nil), batch...)); base != 0 {
		t.Fatalf("the retried batch after SIGKILL landed at %d: producer state was lost", base)
	}
	a := adm(p.brokers)
	testkit.WaitFor(t, "the open transaction to be aborted (LSO = HW)", func() (bool, string) {
		lso, hw := latest(ctx, t, raw, "txlog", 1), latest(ctx, t, raw, "txlog", 0)
		return lso == hw, fmt.Sprintf("LSO %d, HW %d", lso, hw)
	})
	described, err := a.DescribeTransactions(ctx, "left-open")
	if err != nil {
		t.Fatal(err)
	}
	if s := described["left-open"].State; s != "CompleteAbort" {
		t.Fatalf("transaction state after restart: %q", s)
	}
}

func initIdempotent(ctx context.Context, t *testing.T, cl *kgo.Client) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// produceBatch sends one raw batch to partition 0 (by name and by id, for
// whichever Produce version the client picks).
func produceBatch(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, batch []byte) int64 {
	t.Helper()
	topics, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 10000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, TopicID: topics[topic].ID, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: batch}}}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	return p.BaseOffset
}

// latest is the latest offset at an isolation level (0: HW, 1: LSO).
func latest(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, isolation int8) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1, CurrentLeaderEpoch: -1}}}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0].Offset
}

func TestAnyPortListeners(t *testing.T) {
	for in, want := range map[string]string{
		"PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"CLIENT://[::1]:9093, INTERNAL://:9094":                "CLIENT://[::1]:0,INTERNAL://:0",
		"bad":                                                  "bad",
	} {
		if got := anyPortListeners(in); got != want {
			t.Errorf("anyPortListeners(%q) = %q, want %q", in, got, want)
		}
	}
}
