package main

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klogdev/klog/supervisor"
)

// TestBench runs klog bench produce, consume and e2e against a node in
// this process, sampled as the broker (--broker-pid), and reads their
// JSON and text.
func TestBench(t *testing.T) {
	b := startBroker(t)
	pid := strconv.Itoa(os.Getpid())
	var rep benchReport
	decode := func(r result) {
		t.Helper()
		rep = benchReport{}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
	}

	decode(mustRun(t, b, "", "--format", "json", "bench", "produce", "-n", "3000", "-s", "100", "-p", "4",
		"--acks", "1", "--linger", "1ms", "-z", "lz4", "--broker-pid", pid))
	if rep.Version != 1 || rep.Mode != "produce" || rep.Records != 3000 || rep.Bytes != 300_000 || rep.Errors != 0 ||
		rep.Config.Idempotent || rep.Config.Partitions != 4 || rep.LatencyMS == nil || rep.Broker == nil || rep.RecordsPerSec <= 0 {
		t.Fatalf("produce: %+v", rep)
	}

	decode(mustRun(t, b, "", "--format", "json", "bench", "consume", "--broker-pid", pid))
	if rep.Mode != "consume" || rep.Records != 3001 || rep.MBps <= 0 {
		t.Fatalf("consume of all the topic holds (3000 records and the warm-up): %+v", rep)
	}

	decode(mustRun(t, b, "", "--format", "json", "bench", "e2e", "--rate", "2000", "-d", "500ms", "-t", "lat"))
	if rep.Mode != "e2e" || rep.Records != 1000 || rep.LatencyMS == nil || rep.ScheduleMS == nil || rep.LatencyMS.P50 > rep.LatencyMS.Max {
		t.Fatalf("e2e: %+v", rep)
	}

	r := mustRun(t, b, "", "bench", "produce", "-n", "100", "-t", "text", "--broker-pid", pid)
	for _, want := range []string{"produce text (1024 B records, 1 partition, acks=all, idempotent, linger 5ms)", "records", "throughput", "produce latency", "broker (1 process)", "client"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, r.stdout)
		}
	}

	for _, args := range [][]string{
		{"bench", "produce", "--acks", "2"},
		{"bench", "produce", "--acks", "1", "--idempotent"},
		{"bench", "produce", "-z", "brotli"},
		{"bench", "produce", "-n", "-1"},
		{"bench", "produce", "extra"},
	} {
		if r := klogRun(t, b, "", args...); r.code != 2 {
			t.Errorf("klog %q: exit %d, want 2 (usage)\n%s", args, r.code, r.stderr)
		}
	}
}

// TestBenchSamplesLocalKlogUp: without --broker-pid, klog bench samples the
// processes of the klog up registered on this machine as serving the
// brokers it measures, and no other.
func TestBenchSamplesLocalKlogUp(t *testing.T) {
	b := startBroker(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	stateDir, err := defaultStateDir(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	bench := func() benchReport {
		t.Helper()
		r := klogRunEnv(t, env, strings.NewReader(""), "-b", b, "--format", "json", "bench", "produce", "-n", "100", "-s", "10")
		var rep benchReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s%s", err, r.stdout, r.stderr)
		}
		return rep
	}
	// A klog up serving other brokers is not sampled.
	unregister, err := supervisor.Register(stateDir, supervisor.Registration{PID: os.Getpid(), Brokers: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep := bench(); rep.Broker != nil || rep.BrokerPIDs != nil {
		t.Errorf("bench beside another cluster: broker %+v, pids %v; want none sampled", rep.Broker, rep.BrokerPIDs)
	}
	unregister()
	unregister, err = supervisor.Register(stateDir, supervisor.Registration{PID: os.Getpid(), Brokers: []string{b}})
	if err != nil {
		t.Fatal(err)
	}
	defer unregister()
	if rep := bench(); rep.Broker == nil || !slices.Equal(rep.BrokerPIDs, []int{os.Getpid()}) {
		t.Errorf("bench of the registered cluster: broker %+v, pids %v", rep.Broker, rep.BrokerPIDs)
	}
}

// TestBenchIdempotentFlag: idempotence is on with --acks all unless turned
// off, off otherwise, and the help says so once.
func TestBenchIdempotentFlag(t *testing.T) {
	b := startBroker(t)
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--idempotent=false"}, false},
		{[]string{"--acks", "1"}, false},
	} {
		r := mustRun(t, b, "", append([]string{"--format", "json", "bench", "produce", "-n", "10", "-s", "10"}, c.args...)...)
		var rep benchReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Config.Idempotent != c.want {
			t.Errorf("bench produce %q: idempotent %v, want %v (%v)", c.args, rep.Config.Idempotent, c.want, err)
		}
	}
	help := mustRun(t, "", "", "bench", "produce", "--help").stdout
	for _, l := range lines(help) {
		if strings.Contains(l, "--idempotent") && strings.Contains(l, "(default true)") {
			t.Errorf("help: %s", l)
		}
	}
}
