//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/supervisor"
)

// recordingSocket is a control socket that answers every request with no
// nodes and records it.
type recordingSocket struct {
	path string
	mu   sync.Mutex
	reqs []string
}

func newRecordingSocket(t *testing.T) *recordingSocket {
	t.Helper()
	s := &recordingSocket{path: filepath.Join(t.TempDir(), "s.sock")}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			if line != "" {
				s.mu.Lock()
				s.reqs = append(s.reqs, strings.TrimSpace(line))
				s.mu.Unlock()
				c.Write([]byte("{}\n"))
			}
			c.Close()
		}
	}()
	return s
}

func (s *recordingSocket) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// writeRegistration writes r into the registrations of stateDir (an
// XDG_STATE_HOME) as NAME.json.
func writeRegistration(t *testing.T, stateDir, name string, r supervisor.Registration) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(stateDir, "klog", "clusters")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTargetOtherNamespace: two klog up -n 2 on the same ports, the other
// in another network namespace (its registration read first): klog node
// and klog clock act on this namespace's, and never call the other's
// supervisor; klog status and klog down without -b refuse when two
// clusters here fit, list them, and signal neither.
func TestTargetOtherNamespace(t *testing.T) {
	stateDir := t.TempDir()
	p := startCluster(t, stateDir, "2", "--data-dir", t.TempDir(), "--any-port")
	addrs := strings.Split(p.brokers, ",")
	other := newRecordingSocket(t)
	otherPID := testkit.DummyProcess(t)
	writeRegistration(t, stateDir, "0", supervisor.Registration{
		PID: otherPID, DataDir: "/other", Socket: other.path, Brokers: addrs, ClusterID: "other-id", NetNS: "net:[1]",
	})
	env := map[string]string{"XDG_STATE_HOME": stateDir}
	run := func(args ...string) result {
		t.Helper()
		return klogRunEnv(t, env, strings.NewReader(""), args...)
	}

	if ns := nodes(t, addrs[1], stateDir, "list"); len(ns) != 2 || ns[0].Address != addrs[0] {
		t.Fatalf("klog node list: %+v", ns)
	}
	if ns := nodes(t, addrs[1], stateDir, "restart", "1"); len(ns) != 1 || ns[0].State != supervisor.StateRunning {
		t.Fatalf("klog node restart 1: %+v", ns)
	}
	if r := run("-b", addrs[0], "--format", "json", "clock", "show"); r.code != 0 || strings.Count(r.stdout, `"node_id"`) != 2 {
		t.Fatalf("klog clock show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if reqs := other.requests(); len(reqs) > 0 {
		t.Fatalf("the other namespace's supervisor was called: %q", reqs)
	}

	twinPID := testkit.DummyProcess(t)
	writeRegistration(t, stateDir, "1", supervisor.Registration{
		PID: twinPID, DataDir: "/twin", Brokers: addrs, NetNS: supervisor.NetNamespace(),
	})
	r := run("status", "--format", "json")
	var doc struct {
		Running, Ambiguous bool
		Candidates         []candidateJSON
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != exitUsage || !doc.Running || !doc.Ambiguous || len(doc.Candidates) != 2 {
		t.Fatalf("klog status with two clusters here: exit %d, %+v (%v)\n%s%s", r.code, doc, err, r.stdout, r.stderr)
	}
	for _, c := range doc.Candidates {
		if c.DataDir == "/other" || (c.DataDir != "/twin" && c.ClusterID == "") {
			t.Errorf("candidate %+v", c)
		}
	}
	if r := run("down"); r.code != exitUsage || !strings.Contains(r.stderr, "data dir /twin, cluster id unknown, pid ") {
		t.Errorf("klog down with two clusters here: exit %d, %s", r.code, r.stderr)
	}
	// -b picks the one of the cluster id its brokers report.
	r = run("-b", addrs[0], "status", "--format", "json")
	var st clusterStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 || st.PID != p.cmd.Process.Pid || st.ClusterID == "" {
		t.Fatalf("klog status -b: exit %d, %+v (%v)\n%s", r.code, st, err, r.stderr)
	}
	for _, pid := range []int{otherPID, twinPID, p.cmd.Process.Pid} {
		if !supervisor.ProcessAlive(pid) {
			t.Errorf("pid %d was signalled", pid)
		}
	}
}

// TestTargetUnshare: a klog up in another network namespace (unshare -n)
// on the same port as this one's is neither stopped nor reported by
// klog down and klog status given -b.
func TestTargetUnshare(t *testing.T) {
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		t.Skipf("no network namespace to run the other cluster in (unshare -n: %v)", err)
	}
	stateDir := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + stateDir}
	cmd := exec.Command(os.Args[0], "up", "--log-level", "warn", "--memory", "--any-port")
	cmd.Env = env
	ours := startUpCmd(t, cmd)
	cmd = exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec "$0" "$@"`,
		os.Args[0], "up", "--log-level", "warn", "--memory", "--listen", ours.brokers, "--admin-listen", "127.0.0.1:0")
	cmd.Env = env
	other := startUpCmd(t, cmd)
	if ours.brokers != other.brokers {
		t.Fatalf("brokers %s and %s", ours.brokers, other.brokers)
	}
	run := func(args ...string) result {
		t.Helper()
		return klogRunEnv(t, map[string]string{"XDG_STATE_HOME": stateDir, "KLOG_BROKERS": ours.brokers}, strings.NewReader(""), args...)
	}
	r := run("status", "--format", "json")
	var st clusterStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 || st.PID != ours.cmd.Process.Pid {
		t.Fatalf("klog status: exit %d, %+v (%v)\n%s%s", r.code, st, err, r.stdout, r.stderr)
	}
	if r := run("down"); r.code != 0 {
		t.Fatalf("klog down: exit %d\n%s", r.code, r.stderr)
	}
	ours.cmd.Wait()
	if !supervisor.ProcessAlive(other.cmd.Process.Pid) {
		t.Fatalf("the other namespace's klog up was stopped")
	}
	r = run("status")
	if r.code != exitFailure || !strings.Contains(r.stderr, "in others: data dir memory, cluster id ") {
		t.Errorf("klog status once ours is down: exit %d, %s", r.code, r.stderr)
	}
	r = run("status", "--format", "json")
	var doc notChosenJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != exitFailure || doc.Running || len(doc.OtherNamespaces) != 1 || doc.OtherNamespaces[0].PID != other.cmd.Process.Pid {
		t.Errorf("klog status --format json once ours is down: exit %d, %+v (%v)\n%s", r.code, doc, err, r.stdout)
	}
}

// TestTopicCompactFromBrokers: a klog up whose admin API is not on 9644
// (--any-port) is reached by klog topic compact and klog events given
// only -b: each node advertises its admin API in DescribeConfigs.
func TestTopicCompactFromBrokers(t *testing.T) {
	cmd := exec.Command(os.Args[0], "up", "--log-level", "warn", "--memory", "--any-port")
	cmd.Env = []string{"XDG_STATE_HOME=" + t.TempDir()}
	b := startUpCmd(t, cmd).brokers
	cl, err := kgo.NewClient(kgo.SeedBrokers(b))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, nodes, err := inspect.AdminAPIs(ctx, kadm.NewClient(cl))
	if err != nil || len(nodes) != 1 || nodes[0].Err != nil || !strings.HasPrefix(nodes[0].URL, "http://127.0.0.1:") || strings.HasSuffix(nodes[0].URL, ":9644") {
		t.Fatalf("advertised admin API: %+v, %v", nodes, err)
	}
	mustRun(t, b, "", "topic", "create", "cmp", "-p", "1", "-c", "cleanup.policy=compact")
	produceRecords(t, b, &kgo.Record{Topic: "cmp", Key: []byte("k"), Value: []byte("v")})
	if r := mustRun(t, b, "", "topic", "compact", "cmp", "--dry-run"); !strings.Contains(r.stdout, "node 0, cmp/0") {
		t.Errorf("klog topic compact --dry-run -b %s:\n%s", b, r.stdout)
	}
	mustRun(t, b, "", "events")
	var doc clusterAdminJSON
	r := mustRun(t, b, "", "cluster", "admin", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.ClusterID == "" || len(doc.Nodes) != 1 || doc.Nodes[0].URL != nodes[0].URL {
		t.Errorf("klog cluster admin: %v\n%s", err, r.stdout)
	}
}
