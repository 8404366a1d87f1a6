package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/klogdev/klog/internal/testkit"
)

// brokerEnv makes the test binary act as a kfake broker on the given
// address, so startup mode has a real process to exec, time and signal.
const brokerEnv = "KBENCH_TEST_BROKER_PORT"

func TestMain(m *testing.M) {
	if port := os.Getenv(brokerEnv); port != "" {
		os.Exit(serveKfake(port))
	}
	os.Exit(m.Run())
}

func serveKfake(port string) int {
	var p int
	if _, err := fmt.Sscanf(port, "%d", &p); err != nil {
		fmt.Fprintln(os.Stderr, "bad port:", err)
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(p), kfake.AllowAutoTopicCreation())
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		return 1
	}
	<-sigs
	c.Close()
	return 0
}

// runJSON runs kbench with args and decodes its one JSON line.
func runJSON(t *testing.T, args ...string) (map[string]any, int) {
	t.Helper()
	var out bytes.Buffer
	code := run(args, &out, testkit.Logger(t, slog.LevelDebug))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("kbench printed %d lines, want 1: %q", len(lines), out.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatalf("decode %q: %v", lines[0], err)
	}
	return m, code
}

func TestProduceConsume(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	// The in-process broker is this process: its CPU shows up as the server's.
	pid := fmt.Sprint(os.Getpid())
	const records = 2000

	m, code := runJSON(t, "-mode", "produce", "-brokers", addr, "-topic", "t", "-records", fmt.Sprint(records),
		"-server-pid", pid, "-label", "kfake", "-pair", "3", "-timeout", "60s")
	if code != 0 {
		t.Fatalf("produce exit %d: %v", code, m["error"])
	}
	if m["acked"] != float64(records) || m["errors"] != float64(0) {
		t.Fatalf("acked %v errors %v", m["acked"], m["errors"])
	}
	for _, k := range []string{"MBps", "records_per_s", "server_cpu_s_per_gb", "server_rss_mb", "client_cpu_s", "loadavg_before"} {
		if _, ok := m[k].(float64); !ok {
			t.Errorf("produce line lacks %s: %v", k, m)
		}
	}
	if m["label"] != "kfake" || m["pair"] != float64(3) || m["topic_created"] != true {
		t.Errorf("produce line: %v", m)
	}

	// The warm-up record plus the measured ones.
	m, code = runJSON(t, "-mode", "consume", "-brokers", addr, "-topic", "t", "-records", fmt.Sprint(records+1),
		"-server-pid", pid, "-timeout", "60s")
	if code != 0 {
		t.Fatalf("consume exit %d: %v", code, m["error"])
	}
	if m["consumed"] != float64(records+1) {
		t.Fatalf("consumed %v", m["consumed"])
	}
	if _, ok := m["MBps"].(float64); !ok {
		t.Errorf("consume line lacks MBps: %v", m)
	}

	// Asking for more records than exist ends at the deadline, with an error.
	m, code = runJSON(t, "-mode", "consume", "-brokers", addr, "-topic", "t", "-records", fmt.Sprint(records+2),
		"-timeout", "2s")
	if code == 0 || !strings.Contains(fmt.Sprint(m["error"]), "consumed 2001 of 2002") {
		t.Fatalf("exit %d, error %v", code, m["error"])
	}
}

func TestE2E(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, code := runJSON(t, "-mode", "e2e", "-brokers", c.ListenAddrs()[0], "-topic", "lat", "-rate", "2000",
		"-duration", "500ms", "-server-pid", fmt.Sprint(os.Getpid()), "-timeout", "60s")
	if code != 0 {
		t.Fatalf("e2e exit %d: %v", code, m["error"])
	}
	if m["records"] != float64(1000) || m["linger_ms"] != float64(0) {
		t.Fatalf("records %v linger %v, want 1000 and 0", m["records"], m["linger_ms"])
	}
	for _, k := range []string{"e2e_p50_ms", "e2e_p99_ms", "e2e_from_schedule_p99_ms", "e2e_from_schedule_max_ms", "achieved_rate"} {
		if v, ok := m[k].(float64); !ok || v <= 0 {
			t.Errorf("%s = %v", k, m[k])
		}
	}
	if m["e2e_from_schedule_max_ms"].(float64) < m["e2e_max_ms"].(float64) {
		t.Errorf("latency from schedule %v below latency from send %v", m["e2e_from_schedule_max_ms"], m["e2e_max_ms"])
	}
	if _, code := runJSON(t, "-mode", "e2e", "-brokers", c.ListenAddrs()[0], "-rate", "0"); code == 0 {
		t.Fatal("e2e at rate 0 succeeded")
	}
}

func TestStartup(t *testing.T) {
	port := freePort(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(brokerEnv, fmt.Sprint(port))
	m, code := runJSON(t, "-mode", "startup", "-brokers", fmt.Sprintf("127.0.0.1:%d", port), "-idle", "100ms",
		"-timeout", "60s", "-label", "kfake", "--", self)
	if code != 0 {
		t.Fatalf("startup exit %d: %v", code, m["error"])
	}
	for _, k := range []string{"listen_ms", "first_produce_ms", "idle_rss_mb", "shutdown_ms", "startup_cpu_s"} {
		v, ok := m[k].(float64)
		if !ok || v < 0 {
			t.Errorf("%s = %v", k, m[k])
		}
	}
	if m["first_produce_ms"].(float64) < m["listen_ms"].(float64) {
		t.Errorf("first produce %v before accept %v", m["first_produce_ms"], m["listen_ms"])
	}
	if _, ok := m["exit"]; ok {
		t.Errorf("broker exit after SIGTERM: %v", m["exit"])
	}
}

func TestStartupBrokerExits(t *testing.T) {
	start := time.Now()
	m, code := runJSON(t, "-mode", "startup", "-brokers", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"-timeout", "60s", "--", "false")
	if code == 0 || !strings.Contains(fmt.Sprint(m["error"]), errBrokerExited.Error()) {
		t.Fatalf("exit %d, error %v", code, m["error"])
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("took %v to notice the exit", time.Since(start))
	}
	if _, code := runJSON(t, "-mode", "startup"); code == 0 {
		t.Fatal("startup without a command succeeded")
	}
	if _, code := runJSON(t, "-mode", "nope"); code == 0 {
		t.Fatal("unknown mode succeeded")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
