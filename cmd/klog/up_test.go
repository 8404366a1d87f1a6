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
	"github.com/twmb/franz-go/pkg/kgo"
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
	cmd := exec.Command(os.Args[0], append([]string{"up", "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), "KLOG_TEST_AS_KLOG=1")
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
	case p.brokers = <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("klog up not ready after 30s; stderr:\n%s", stderr.String())
	}
	return p
}

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
