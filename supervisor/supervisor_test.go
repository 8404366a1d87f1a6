//go:build linux

package supervisor

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// TestMain lets the test binary be a node: with KLOG_SUPERVISOR_FAKE_NODE
// set it takes klog up's flags, listens, writes its ready file and waits for
// SIGTERM, as klog up does; the node whose -X node.id is
// KLOG_SUPERVISOR_FAKE_FAIL exits at once instead, and with
// KLOG_SUPERVISOR_FAKE_HANG nodes ignore SIGTERM.
func TestMain(m *testing.M) {
	if os.Getenv("KLOG_SUPERVISOR_FAKE_NODE") == "" {
		os.Exit(m.Run())
	}
	fakeNode(os.Args[2:]) // after "up"
}

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func fakeNode(args []string) {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	listen := fs.String("listen", "", "")
	ready := fs.String("ready-file", "", "")
	fs.String("data-dir", "", "")
	fs.Bool("fault-signals", false, "") // klog node isolate and heal; this stand-in has no peers
	// The stand-in's admin API takes the supervisor's notice of another
	// node's exit and says so on stdout.
	admin := fs.String("admin-listen", "", "")
	var configs, fds repeated
	fs.Var(&configs, "X", "")
	fs.Var(&fds, "listener-fd", "")
	fs.Parse(args)
	if fail := os.Getenv("KLOG_SUPERVISOR_FAKE_FAIL"); fail != "" && configs[0] == "node.id="+fail {
		fmt.Fprintln(os.Stderr, "fake node: failing as asked")
		os.Exit(3)
	}
	ln, how, err := fakeListen(*listen, fds)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if *admin != "" && *admin != AdminOff {
		serveFakeAdmin(*admin, configs[0], fds)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	if os.Getenv("KLOG_SUPERVISOR_FAKE_HANG") != "" {
		signal.Ignore(syscall.SIGTERM) // a node that never shuts down
	}
	fmt.Printf("fake node pid %d on %s (%s) with %s\n", os.Getpid(), *listen, how, configs.String())
	if err := os.WriteFile(*ready, []byte(*listen+"\n"), 0o644); err != nil {
		os.Exit(1)
	}
	<-sigs
	os.Exit(0)
}

// fakeListen serves on the Kafka socket the supervisor passed, else on a
// new one bound to listen; how says which.
func fakeListen(listen string, fds []string) (ln net.Listener, how string, err error) {
	return fakeListenAs(ListenerKafka, listen, fds)
}

// fakeListenAs is fakeListen for the listener name.
func fakeListenAs(name, listen string, fds []string) (ln net.Listener, how string, err error) {
	for _, f := range fds {
		if fd, ok := strings.CutPrefix(f, name+"="); ok {
			n, err := strconv.Atoi(fd)
			if err != nil {
				return nil, "", err
			}
			ln, err = InheritedListener(n)
			return ln, "inherited", err
		}
	}
	ln, err = net.Listen("tcp", listen)
	return ln, "bound", err
}

// serveFakeAdmin serves POST nodeapi.PathBrokerExited on addr, as node
// (node.id=ID) would, printing each notice.
func serveFakeAdmin(addr, node string, fds []string) {
	ln, _, err := fakeListenAs(ListenerAdmin, addr, fds)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+nodeapi.PathBrokerExited, func(w http.ResponseWriter, r *http.Request) {
		fmt.Printf("fake %s told: broker %s exited\n", node, r.PathValue("id"))
		fmt.Fprintf(w, `{"broker": %s}`, r.PathValue("id"))
	})
	go http.Serve(ln, mux)
}

func startFake(t *testing.T, nodes int, env ...string) (*Supervisor, *testkit.Buffer) {
	t.Helper()
	return startFakeWith(t, nodes, Config{}, env...)
}

// startFakeWith starts fake nodes with cfg's bounds.
func startFakeWith(t *testing.T, nodes int, bounds Config, env ...string) (*Supervisor, *testkit.Buffer) {
	t.Helper()
	dir := t.TempDir()
	layout, err := Prepare(dir, Spec{Nodes: nodes, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	var out testkit.Buffer
	s, err := Start(testkit.Context(t), Config{
		Dir: dir, Layout: layout, Exe: os.Args[0], PassVoters: true,
		Env: append(os.Environ(), append([]string{"KLOG_SUPERVISOR_FAKE_NODE=1"}, env...)...),
		Log: &out, Logger: testkit.Logger(t, -4),
		StopTimeout: bounds.StopTimeout, Admin: bounds.Admin,
	})
	if err != nil {
		t.Fatalf("%v; output:\n%s", err, out.String())
	}
	t.Cleanup(s.Shutdown)
	return s, &out
}

func status(t *testing.T, s *Supervisor, id int32) NodeStatus {
	t.Helper()
	return s.List()[id]
}

func dials(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

// TestSupervisorActs: three nodes start, each its own process with the
// supervisor's flags; kill, stop, start and restart act on one node only.
func TestSupervisorActs(t *testing.T) {
	ctx := testkit.Context(t)
	s, out := startFake(t, 3)
	pids := map[int]bool{}
	for i, n := range s.List() {
		if n.State != StateRunning || n.PID == 0 || n.Role != "voter" {
			t.Fatalf("node %d after Start: %+v", i, n)
		}
		pids[n.PID] = true
		if err := dials(n.Address); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	if len(pids) != 3 {
		t.Fatalf("pids %v: want three processes", pids)
	}
	voters := s.cfg.Layout.Voters()
	// The first launch serves on the socket bound when the free port was
	// chosen, so no other process could take the port in between.
	if !strings.Contains(out.String(), fmt.Sprintf("node-1 | fake node pid %d on %s (inherited)", s.List()[1].PID, s.List()[1].Address)+" with node.id=1,controller.quorum.voters="+voters) {
		t.Fatalf("node 1's command line, seen in its prefixed output:\n%s", out.String())
	}

	killed := status(t, s, 1)
	if err := s.Kill(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, 1); st.State != StateDead || st.PID != 0 {
		t.Fatalf("after Kill: %+v", st)
	}
	if ProcState(killed.PID) != 0 {
		t.Fatalf("pid %d still there after Kill", killed.PID)
	}
	if err := dials(killed.Address); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial a killed node: %v, want connection refused", err)
	}
	if err := s.StartNode(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, 1); st.State != StateRunning || st.PID == killed.PID || st.Address != killed.Address {
		t.Fatalf("after StartNode of a dead node: %+v (was %+v)", st, killed)
	}
	if err := dials(killed.Address); err != nil {
		t.Fatalf("dial a started node: %v", err)
	}
	if again := fmt.Sprintf("node-1 | fake node pid %d on %s (bound)", status(t, s, 1).PID, killed.Address); !strings.Contains(out.String(), again) {
		t.Fatalf("a node started again binds its recorded port itself; want %q in:\n%s", again, out.String())
	}

	stopped := status(t, s, 2)
	if err := s.Stop(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, 2); st.State != StateStopped || ProcState(st.PID) != 'T' {
		t.Fatalf("after Stop: %+v, /proc state %q", st, ProcState(st.PID))
	}
	if err := s.StartNode(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, 2); st.State != StateRunning || st.PID != stopped.PID || ProcState(st.PID) == 'T' {
		t.Fatalf("after StartNode of a stopped node: %+v, /proc state %q", st, ProcState(st.PID))
	}

	// Restart works on a stopped node too: SIGTERM waits for SIGCONT.
	if err := s.Stop(ctx, 0); err != nil {
		t.Fatal(err)
	}
	before := status(t, s, 0)
	if err := s.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, 0); st.State != StateRunning || st.PID == before.PID || ProcState(before.PID) != 0 {
		t.Fatalf("after Restart: %+v (was pid %d, /proc state %q)", st, before.PID, ProcState(before.PID))
	}
	if _, err := s.node(3); !errors.Is(err, ErrNoSuchNode) {
		t.Fatalf("node 3 of 3: %v", err)
	}

	var live []int
	for _, n := range s.List() {
		live = append(live, n.PID)
	}
	s.Stop(ctx, 1) // Shutdown ends stopped nodes too
	s.Shutdown()
	for _, pid := range live {
		if st := ProcState(pid); st != 0 {
			t.Errorf("pid %d left after Shutdown, state %q", pid, st)
		}
	}
}

// TestSupervisorStartFails: a node that exits before it is ready fails
// Start, which ends the other nodes: no process is left behind.
func TestSupervisorStartFails(t *testing.T) {
	dir := t.TempDir()
	layout, err := Prepare(dir, Spec{Nodes: 2, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	var out testkit.Buffer
	_, err = Start(testkit.Context(t), Config{
		Dir: dir, Layout: layout, Exe: os.Args[0],
		Env: append(os.Environ(), "KLOG_SUPERVISOR_FAKE_NODE=1", "KLOG_SUPERVISOR_FAKE_FAIL=1"),
		Log: &out,
	})
	if !errors.Is(err, ErrStartFailed) || !strings.Contains(err.Error(), "node 1") || !strings.Contains(out.String(), "node-1 | fake node: failing as asked") {
		t.Fatalf("Start with node 1 failing: %v; output:\n%s", err, out.String())
	}
	var pid int
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "node-0 | fake node pid "); ok {
			fmt.Sscan(rest, &pid)
		}
	}
	if pid == 0 {
		t.Fatalf("node 0 did not start; output:\n%s", out.String())
	}
	if st := ProcState(pid); st != 0 {
		t.Fatalf("node 0 (pid %d) left after the failed Start, state %q", pid, st)
	}
}

// TestControl: requests over the control socket act on the supervisor, and
// Pick locates the cluster from any node's address.
func TestControl(t *testing.T) {
	ctx := testkit.Context(t)
	s, _ := startFake(t, 2)
	stateDir := t.TempDir()
	c, err := ListenControl(s.cfg.Dir, stateDir, s.cfg.Layout.Brokers())
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- c.Serve(ctx, s) }()
	if _, err := ListenControl(s.cfg.Dir, "", nil); !errors.Is(err, ErrRunning) {
		t.Fatalf("a second supervisor on the directory: %v", err)
	}
	reg, err := Pick(ctx, stateDir, Target{Brokers: []string{"127.0.0.1:1", s.cfg.Layout.Nodes[1].Address()}})
	if err != nil {
		t.Fatal(err)
	}
	socket := reg.Socket
	resp, err := Call(ctx, socket, Request{Op: "kill", Node: 1})
	if err != nil || len(resp.Nodes) != 2 || resp.Nodes[1].State != StateDead || resp.Nodes[0].State != StateRunning {
		t.Fatalf("kill 1: %+v, %v", resp, err)
	}
	if resp, err := Call(ctx, socket, Request{Op: "kill", Node: 7}); err == nil || !strings.Contains(err.Error(), "no such node: 7") || len(resp.Nodes) != 2 {
		t.Fatalf("kill 7: %+v, %v", resp, err)
	}
	if _, err := Call(ctx, socket, Request{Op: "frob"}); err == nil || !strings.Contains(err.Error(), `unknown op "frob"`) {
		t.Fatalf("frob: %v", err)
	}
	c.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve after Close: %v", err)
	}
	if _, err := Pick(ctx, stateDir, Target{Brokers: s.cfg.Layout.Brokers()}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Pick after Close: %v", err)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 0 {
		t.Fatalf("registrations left after Close: %v", entries)
	}
}

// TestSupervisorKillsHungNodes: a node that ignores SIGTERM is killed
// after StopTimeout, on Restart and on Shutdown.
func TestSupervisorKillsHungNodes(t *testing.T) {
	s, out := startFakeWith(t, 2, Config{StopTimeout: 100 * time.Millisecond}, "KLOG_SUPERVISOR_FAKE_HANG=1")
	before := status(t, s, 1)
	if err := s.Restart(testkit.Context(t), 1); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, 1); st.State != StateRunning || st.PID == before.PID || ProcState(before.PID) != 0 {
		t.Fatalf("after Restart of a hung node: %+v, old pid %d state %q", st, before.PID, ProcState(before.PID))
	}
	pids := []int{status(t, s, 0).PID, status(t, s, 1).PID}
	s.Shutdown()
	for _, pid := range pids {
		if st := ProcState(pid); st != 0 {
			t.Fatalf("hung pid %d left after Shutdown, state %q; output:\n%s", pid, st, out.String())
		}
	}
}

// TestArgsRacks: with Racks each node's command line names its rack, in
// turn when there are fewer racks than nodes; without, none.
func TestArgsRacks(t *testing.T) {
	rackArg := func(s *Supervisor, id int32) string {
		args := s.args(&node{layout: NodeLayout{ID: id}})
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-X" && strings.HasPrefix(args[i+1], "broker.rack=") {
				return strings.TrimPrefix(args[i+1], "broker.rack=")
			}
		}
		return ""
	}
	s := &Supervisor{cfg: Config{Dir: t.TempDir(), Racks: []string{"r1", "r2"}}}
	for id, want := range []string{"r1", "r2", "r1"} {
		if got := rackArg(s, int32(id)); got != want {
			t.Errorf("node %d: rack %q, want %q", id, got, want)
		}
	}
	if got := rackArg(&Supervisor{cfg: Config{Dir: t.TempDir()}}, 0); got != "" {
		t.Errorf("no racks: node 0 told rack %q", got)
	}
}

// TestSupervisorTellsExit: a node that exits unasked (SIGKILL) is told to
// a live node's admin API at once, so that the quorum fences it without
// waiting for its session to expire; one that shuts down on SIGTERM is
// not, its controlled shutdown having moved what it led. The next run of
// the killed node starts only after the notice.
func TestSupervisorTellsExit(t *testing.T) {
	ctx := testkit.Context(t)
	admin, _, err := AdminAddresses("127.0.0.1:0", 3, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, out := startFakeWith(t, 3, Config{Admin: admin})
	if err := s.Kill(ctx, 1); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "node 0 told that broker 1 exited", func() (bool, string) {
		return strings.Contains(out.String(), "node-0 | fake node.id=0 told: broker 1 exited"), out.String()
	})
	if err := s.StartNode(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(ctx, 0); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "node 1 told that broker 0 exited", func() (bool, string) {
		return strings.Contains(out.String(), "node-1 | fake node.id=1 told: broker 0 exited"), out.String()
	})
	if n := strings.Count(out.String(), "told: broker"); n != 2 {
		t.Fatalf("%d notices, want 2 (the kills, not the restart):\n%s", n, out.String())
	}
}
