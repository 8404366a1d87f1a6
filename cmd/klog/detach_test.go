//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/supervisor"
)

// upDetached runs `klog up --detach ARGS --format json` as a process,
// registering in stateDir, and returns the ready object it printed once it
// returned; the background klog up is killed at the end of the test unless
// klog down stopped it.
func upDetached(t *testing.T, stateDir string, args ...string) readyInfo {
	t.Helper()
	info, r := upDetachedResult(t, stateDir, args...)
	if r.code != 0 {
		t.Fatalf("klog up --detach %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return info
}

// upDetachedResult is upDetached without the check that it succeeded.
func upDetachedResult(t *testing.T, stateDir string, args ...string) (readyInfo, result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"up", "--detach", "--format", "json", "--log-level", "warn"}, args...)...)
	cmd.Env = append(os.Environ(), "KLOG_TEST_AS_KLOG=1", "XDG_STATE_HOME="+stateDir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	if err != nil && r.code <= 0 {
		t.Fatalf("klog up --detach: %v", err)
	}
	var info readyInfo
	if r.code == 0 {
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
			t.Fatalf("klog up --detach printed %q: %v", r.stdout, err)
		}
		t.Cleanup(func() {
			if supervisor.ProcessAlive(info.PID) {
				syscall.Kill(info.PID, syscall.SIGKILL)
			}
		})
	}
	return info, r
}

// stateRun runs klog ARGS in-process with the registrations of stateDir.
func stateRun(t *testing.T, stateDir string, args ...string) result {
	t.Helper()
	return klogRunEnv(t, map[string]string{"XDG_STATE_HOME": stateDir}, strings.NewReader(""), args...)
}

// TestUpDetach: klog up --detach returns once the node serves, with its
// brokers and admin API on stdout and in the ready file; it keeps running
// in the background, klog status finds it, klog down stops it and removes
// its registration, and then klog status says nothing runs.
func TestUpDetach(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	readyFile := filepath.Join(t.TempDir(), "ready.json")
	info := upDetached(t, stateDir, "--any-port", "--data-dir", dir, "--ready-file", readyFile)
	if len(info.Brokers) != 1 || info.Bootstrap != info.Brokers[0] || strings.HasSuffix(info.Bootstrap, ":9092") ||
		len(info.AdminURLs) != 1 || strings.HasSuffix(info.Admin[0], ":9644") || info.DataDir != dir || info.Log != filepath.Join(dir, "klog.log") {
		t.Fatalf("ready: %+v", info)
	}
	b, err := os.ReadFile(readyFile)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile readyInfo
	if err := json.Unmarshal(b, &fromFile); err != nil || fromFile.Bootstrap != info.Bootstrap || !slices.Equal(fromFile.AdminURLs, info.AdminURLs) {
		t.Fatalf("ready file %q: %v", b, err)
	}
	answersAPIVersions(t, info.Bootstrap)
	createTopic(t, info.Bootstrap, "after-detach", 1)
	produceRecords(t, info.Bootstrap, &kgo.Record{Topic: "after-detach", Value: []byte("v")})

	r := stateRun(t, stateDir, "status", "--format", "json")
	var st clusterStatus
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || !st.Running || st.PID != info.PID || st.DataDir != dir || !slices.Equal(st.AdminURLs, info.AdminURLs) {
		t.Fatalf("klog status: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := stateRun(t, stateDir, "status", "--data-dir", t.TempDir()); r.code != 1 {
		t.Fatalf("klog status of another directory: exit %d %s", r.code, r.stdout)
	}

	if r := stateRun(t, stateDir, "down"); r.code != 0 {
		t.Fatalf("klog down: exit %d %s", r.code, r.stderr)
	}
	if supervisor.ProcessAlive(info.PID) {
		t.Fatalf("pid %d runs after klog down", info.PID)
	}
	if log, _ := os.ReadFile(info.Log); !strings.Contains(string(log), "klog: ready in") {
		t.Errorf("log %s does not hold the node's output:\n%s", info.Log, log)
	}
	if r := stateRun(t, stateDir, "status"); r.code != 1 || !strings.Contains(r.stderr, "no klog up is running") {
		t.Fatalf("klog status after down: exit %d %s", r.code, r.stderr)
	}
	if r := stateRun(t, stateDir, "down"); r.code != 1 {
		t.Fatalf("klog down with nothing running: exit %d", r.code)
	}
	// The same directory comes back with the same data.
	again := upDetached(t, stateDir, "--any-port", "--data-dir", dir)
	adm := testAdmin(t, again.Bootstrap)
	if td, err := adm.ListTopics(context.Background(), "after-detach"); err != nil || td["after-detach"].Err != nil {
		t.Fatalf("topic after restart: %v %v", err, td)
	}
	if r := stateRun(t, stateDir, "down", "-b", again.Bootstrap); r.code != 0 {
		t.Fatalf("klog down -b: exit %d %s", r.code, r.stderr)
	}
}

// TestUpDetachReadyFileText: without --format json the ready file holds
// the bootstrap list on its first line and the admin API URLs on its
// second.
func TestUpDetachReadyFileText(t *testing.T) {
	stateDir := t.TempDir()
	readyFile := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(os.Args[0], "up", "--detach", "--memory", "--any-port", "--log-level", "warn", "--ready-file", readyFile)
	cmd.Env = append(os.Environ(), "KLOG_TEST_AS_KLOG=1", "XDG_STATE_HOME="+stateDir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("klog up --detach: %v", err)
	}
	brokers, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "BROKERS=")
	if !ok {
		t.Fatalf("stdout %q: want BROKERS=", out)
	}
	t.Cleanup(func() { stateRun(t, stateDir, "down") })
	b, err := os.ReadFile(readyFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || lines[0] != brokers || !strings.HasPrefix(lines[1], "http://127.0.0.1:") || !strings.HasSuffix(lines[1], "/v1/") {
		t.Fatalf("ready file %q; brokers %s", b, brokers)
	}
}

// TestUpDetachCluster: klog up -n 3 --detach returns once all three nodes
// serve; klog status lists them; klog down stops the supervisor and its
// nodes.
func TestUpDetachCluster(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	info := upDetached(t, stateDir, "-n", "3", "--any-port", "--data-dir", dir)
	if len(info.Brokers) != 3 || len(info.AdminURLs) != 3 || len(info.Nodes) != 3 {
		t.Fatalf("ready: %+v", info)
	}
	r := stateRun(t, stateDir, "status", "--format", "json", "--data-dir", dir)
	var st clusterStatus
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil || len(st.Nodes) != 3 || !slices.Equal(st.Admin, info.Admin) {
		t.Fatalf("klog status: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	createTopic(t, info.Brokers[2], "three", 1)
	produceRecords(t, info.Brokers[2], &kgo.Record{Topic: "three", Value: []byte("v")})
	if r := stateRun(t, stateDir, "down"); r.code != 0 {
		t.Fatalf("klog down: exit %d %s", r.code, r.stderr)
	}
	for _, n := range st.Nodes {
		if supervisor.ProcessAlive(n.PID) {
			t.Errorf("node %d (pid %d) runs after klog down", n.ID, n.PID)
		}
	}
	if supervisor.ProcessAlive(info.PID) {
		t.Errorf("supervisor pid %d runs after klog down", info.PID)
	}
	// The nodes stop one after another, each controlled shutdown with the
	// quorum it needs, the last with no peer to wait for: none waits out
	// its bound.
	out, err := os.ReadFile(info.Log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "did not finish") {
		t.Errorf("klog down: not every node's controlled shutdown finished:\n%s", out)
	}
}

// TestUpSeed: --seed FILE and --seed-topic create their topics, and the
// file's records, before klog up is ready; the same seed on the same data
// again is fine and adds no records; another shape is refused, saying
// what differs.
func TestUpSeed(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	seedArgs := []string{"--any-port", "--data-dir", dir, "--seed", "../../seed/testdata/seed.yaml", "--seed-topic", "extra:2"}
	info := upDetached(t, stateDir, seedArgs...)
	ctx := context.Background()
	adm := testAdmin(t, info.Bootstrap)
	td, err := adm.ListTopics(ctx, "orders", "customers", "extra")
	if err != nil {
		t.Fatal(err)
	}
	if len(td["orders"].Partitions) != 3 || len(td["customers"].Partitions) != 1 || len(td["extra"].Partitions) != 2 {
		t.Fatalf("topics: %+v", td)
	}
	wantEnd := func(want map[string]int64) {
		t.Helper()
		ends, err := adm.ListEndOffsets(ctx, "orders", "customers", "extra")
		if err != nil {
			t.Fatal(err)
		}
		for topic, n := range want {
			var got int64
			ends.Each(func(o kadm.ListedOffset) {
				if o.Topic == topic {
					got += o.Offset
				}
			})
			if got != n {
				t.Errorf("%s holds %d records, want %d", topic, got, n)
			}
		}
	}
	wantEnd(map[string]int64{"orders": 2, "customers": 2, "extra": 0})
	r := mustRun(t, info.Bootstrap, "", "consume", "orders", "-p", "2", "-e", "-f", "json")
	if !strings.Contains(r.stdout, `"key":"order-2"`) {
		t.Errorf("orders partition 2: %s", r.stdout)
	}
	r = mustRun(t, info.Bootstrap, "", "consume", "customers", "-e", "-f", "json")
	if !strings.Contains(r.stdout, `"key":"bob","value":null`) || !strings.Contains(r.stdout, `"value":"{\"name\":\"Alice\"}"`) {
		t.Errorf("customers: %s", r.stdout)
	}
	if r := stateRun(t, stateDir, "down"); r.code != 0 {
		t.Fatalf("klog down: exit %d %s", r.code, r.stderr)
	}

	again := upDetached(t, stateDir, seedArgs...)
	adm = testAdmin(t, again.Bootstrap)
	wantEnd(map[string]int64{"orders": 2, "customers": 2, "extra": 0})
	if r := stateRun(t, stateDir, "down"); r.code != 0 {
		t.Fatalf("klog down: exit %d %s", r.code, r.stderr)
	}

	_, r = upDetachedResult(t, stateDir, "--any-port", "--data-dir", dir, "--seed-topic", "extra:4")
	if r.code == 0 || !strings.Contains(r.stderr, "topic extra exists with 2 partitions, not 4") {
		t.Fatalf("conflicting seed: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestUpReportsListeners: with -X listeners and --any-port, the ready
// object names every listener where clients reach it, and a client that
// logs in on the SASL listener it names is served.
func TestUpReportsListeners(t *testing.T) {
	stateDir := t.TempDir()
	info := upDetached(t, stateDir, "--any-port", "--data-dir", t.TempDir(),
		"-X", "listeners=PLAINTEXT://127.0.0.1:9092,SASL://127.0.0.1:9093",
		"-X", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT",
		"-X", `listener.name.sasl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";`)
	defer stateRun(t, stateDir, "down")
	if info.Listeners["PLAINTEXT"] != info.Bootstrap || info.Listeners["SASL"] == "" || info.Listeners["SASL"] == info.Bootstrap {
		t.Fatalf("listeners %v, bootstrap %s", info.Listeners, info.Bootstrap)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(info.Listeners["SASL"]), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(testkit.Context(t)); err != nil {
		t.Fatalf("SASL listener %s: %v", info.Listeners["SASL"], err)
	}
}
