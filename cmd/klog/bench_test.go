package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
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
