// Package supervisor runs a local cluster of klog nodes, each its own OS
// process, under one supervisor: it owns the child processes (klog up -n N)
// and acts on them when asked (klog node kill|stop|start|restart|list).
//
// A cluster lives in one data directory:
//
//	DIR/cluster.json      the layout: node ids, hosts, Kafka, Raft and --secure ports
//	DIR/supervisor.sock   the control endpoint while the supervisor runs
//	DIR/node-ID/          node ID's data, as klog up -X node.id=ID --data-dir DIR keeps it
//	DIR/node-ID/ready     node ID's --ready-file
//
// Each node is the same binary run as
//
//	klog up --data-dir DIR --listen HOST:PORT --ready-file DIR/node-ID/ready
//	        -X node.id=ID [-X controller.quorum.voters=V] [the user's flags]
//
// The supervisor restarts nothing on its own: a node that dies stays dead
// until it is started again. When a node exits without being asked to
// (SIGKILL, a crash), the supervisor, its parent, knows at once and tells
// a live node's admin API (nodeapi.PathBrokerExited), whose quorum fences
// the dead node's broker then: its partitions get new leaders without
// waiting for its session to expire (exited.go). Children's stdout and stderr go, line by line
// and prefixed "node-ID | ", to the supervisor's log writer.
//
// The package knows klog up's flags but nothing of the node inside: it
// imports nothing of broker/ or store/.
package supervisor

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Node states as List reports them.
const (
	StateStarting = "starting" // launched, not ready yet
	StateRunning  = "running"
	StateStopped  = "stopped"  // SIGSTOPped: a hung node
	StateIsolated = "isolated" // running, cut off from the other nodes
	StateDead     = "dead"     // exited or killed; stays so until started
)

// Defaults for Config's bounds.
const (
	DefaultReadyTimeout = 60 * time.Second
	DefaultStopTimeout  = 15 * time.Second
)

// Config is what Start needs.
type Config struct {
	// Dir is the cluster's data directory, Layout the cluster in it (from
	// Prepare).
	Dir    string
	Layout Layout
	// Exe is the klog binary every node runs.
	Exe string
	// Args are passed to every node's klog up after the supervisor's own
	// (the user's -X configs, --log-level, ...).
	Args []string
	// Env is the nodes' environment; nil is the supervisor's.
	Env []string
	// Racks, when set, puts node i in rack Racks[i % len(Racks)]: -X
	// broker.rack on its command line (klog up -n --racks).
	Racks []string
	// PassVoters adds -X controller.quorum.voters to each node's command
	// line; false for a klog that does not know the config yet.
	PassVoters bool
	// Admin is each node's admin API address, by id (AdminAddresses);
	// nil runs the nodes without one.
	Admin []string
	// NodeArgs, when set, returns more of a node's flags, after Args
	// (the per-node configs of klog up --secure).
	NodeArgs func(NodeLayout) []string
	// Log receives the nodes' output, each line prefixed "node-ID | ".
	Log io.Writer
	// Logger receives the supervisor's own events; nil discards them.
	Logger *slog.Logger
	// ReadyTimeout bounds a node's start; StopTimeout how long a node has
	// to exit after SIGTERM before it is killed. Zero is the default.
	ReadyTimeout, StopTimeout time.Duration
}

// NodeStatus is one node as List reports it.
type NodeStatus struct {
	ID                int32  `json:"id"`
	Address           string `json:"address"`
	ControllerAddress string `json:"controller_address,omitempty"`
	// Admin is the node's admin API address, host:port.
	Admin string `json:"admin,omitempty"`
	// PID is the node's process id; 0 once it is dead.
	PID   int    `json:"pid"`
	State string `json:"state"`
	Role  string `json:"role"`
}

// Supervisor owns a cluster's node processes.
type Supervisor struct {
	cfg    Config
	logger *slog.Logger
	log    *lineLog
	nodes  []*node // by id

	// ops serialises the acts on nodes (start, kill, ...), so that two
	// control requests never race on one node.
	ops sync.Mutex
}

// node is one child, relaunched by start.
type node struct {
	layout NodeLayout
	mu     struct {
		sync.Mutex
		proc     *os.Process // nil before the first launch
		exited   chan struct{}
		ready    bool
		stopped  bool // SIGSTOP sent, no SIGCONT since
		isolated bool // isolated, not healed since; a new process is not
		// terminating: SIGTERM sent, so its exit is a clean shutdown
		// that needs no notice.
		terminating bool
		// told is closed once the other nodes have been told of the
		// last process's unasked exit (or could not be); a new process
		// starts only after it, so that the notice fences the run that
		// exited, never the next one.
		told chan struct{}
	}
}

// Start launches every node and waits until all are ready. When one fails
// to start, the others are stopped and the error names it.
func Start(ctx context.Context, cfg Config) (*Supervisor, error) {
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Supervisor{cfg: cfg, logger: logger, log: &lineLog{w: cfg.Log}}
	for _, nl := range cfg.Layout.Nodes {
		s.nodes = append(s.nodes, &node{layout: nl})
	}
	s.ops.Lock()
	defer s.ops.Unlock()
	// Each node gets the sockets held for it on its first launch; the
	// rest go.
	defer cfg.Layout.Reserved().Close()
	// Launch all, then wait for all: the nodes start in parallel.
	var launched []*node
	var err error
	for _, n := range s.nodes {
		if err = s.launch(n); err != nil {
			break
		}
		launched = append(launched, n)
	}
	for _, n := range launched {
		if err != nil {
			break
		}
		err = s.waitReady(ctx, n)
	}
	if err != nil {
		s.shutdownLocked()
		return nil, err
	}
	return s, nil
}

// args is node n's command line.
func (s *Supervisor) args(n *node) []string {
	id := strconv.Itoa(int(n.layout.ID))
	args := []string{"up",
		"--data-dir", s.cfg.Dir,
		"--listen", n.layout.Address(),
		"--ready-file", s.readyFile(n),
		"-X", "node.id=" + id,
		"--fault-signals",
	}
	if s.cfg.PassVoters {
		args = append(args, "-X", "controller.quorum.voters="+s.cfg.Layout.Voters())
	}
	if len(s.cfg.Racks) > 0 {
		args = append(args, "-X", "broker.rack="+s.cfg.Racks[int(n.layout.ID)%len(s.cfg.Racks)])
	}
	args = append(args, "--admin-listen", cmp.Or(s.admin(n.layout.ID), AdminOff))
	args = append(args, s.cfg.Args...)
	if s.cfg.NodeArgs != nil {
		args = append(args, s.cfg.NodeArgs(n.layout)...)
	}
	return args
}

func (s *Supervisor) readyFile(n *node) string {
	return filepath.Join(NodeDir(s.cfg.Dir, n.layout.ID), "ready")
}

// launch starts node n's process; it does not wait for it to be ready.
func (s *Supervisor) launch(n *node) error {
	if err := os.MkdirAll(NodeDir(s.cfg.Dir, n.layout.ID), 0o755); err != nil {
		return fmt.Errorf("node %d: %w", n.layout.ID, err)
	}
	n.mu.Lock()
	told := n.mu.told
	n.mu.Unlock()
	if told != nil {
		<-told // bounded by exitNoticeTimeout
	}
	if err := os.Remove(s.readyFile(n)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("node %d: remove old ready file: %w", n.layout.ID, err)
	}
	cmd := exec.Command(s.cfg.Exe, s.args(n)...)
	cmd.Env = s.cfg.Env
	out := s.log.writer(fmt.Sprintf("node-%d | ", n.layout.ID))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	err := s.passListeners(cmd, n)
	if err == nil {
		err = cmd.Start()
	}
	for _, f := range cmd.ExtraFiles {
		f.Close() // the node has its own copy now
	}
	if err != nil {
		return fmt.Errorf("node %d: %w", n.layout.ID, err)
	}
	exited, told := make(chan struct{}), make(chan struct{})
	n.mu.Lock()
	n.mu.proc, n.mu.exited, n.mu.ready, n.mu.stopped, n.mu.isolated = cmd.Process, exited, false, false, false
	n.mu.terminating, n.mu.told = false, told
	n.mu.Unlock()
	s.logger.Info("node launched", "node", n.layout.ID, "pid", cmd.Process.Pid, "address", n.layout.Address())
	go func() {
		err := cmd.Wait()
		out.flush()
		s.logger.Info("node exited", "node", n.layout.ID, "pid", cmd.Process.Pid, "status", exitStatus(cmd, err))
		n.mu.Lock()
		n.mu.ready, n.mu.stopped = false, false
		unasked := !n.mu.terminating
		n.mu.Unlock()
		close(exited)
		if unasked {
			s.tellExited(n.layout.ID)
		}
		close(told)
	}()
	return nil
}

// passListeners gives node n's command the sockets held for its
// addresses, as file descriptors 3 and on, each named by a --listener-fd
// flag.
func (s *Supervisor) passListeners(cmd *exec.Cmd, n *node) error {
	for _, l := range []struct{ name, addr string }{
		{ListenerKafka, n.layout.Address()},
		{ListenerQuorum, n.layout.ControllerAddress()},
		{ListenerAdmin, s.admin(n.layout.ID)},
		{ListenerSecure, n.layout.SecureAddress()},
		{ListenerMTLS, n.layout.MTLSAddress()},
	} {
		if l.addr == "" {
			continue
		}
		f, err := s.cfg.Layout.Reserved().take(l.addr)
		if err != nil {
			return err
		}
		if f == nil {
			continue
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
		cmd.Args = append(cmd.Args, "--listener-fd", ListenerFD(l.name, 2+len(cmd.ExtraFiles)))
	}
	return nil
}

func exitStatus(cmd *exec.Cmd, err error) string {
	if cmd.ProcessState != nil {
		return cmd.ProcessState.String()
	}
	return err.Error()
}

// readyPoll is how often a starting node's ready file is looked for.
const readyPoll = 10 * time.Millisecond

// waitReady waits until node n has written its ready file, failing at
// once when it exits first and after ReadyTimeout.
func (s *Supervisor) waitReady(ctx context.Context, n *node) error {
	n.mu.Lock()
	exited := n.mu.exited
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		// klog up writes the brokers address and a newline; a file
		// without the newline is still being written.
		if b, err := os.ReadFile(s.readyFile(n)); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			n.mu.Lock()
			n.mu.ready = true
			n.mu.Unlock()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%w: node %d (%s) exited before it was ready; its output is above", ErrStartFailed, n.layout.ID, n.layout.Address())
		case <-ctx.Done():
			return fmt.Errorf("%w: node %d (%s) not ready: %w", ErrStartFailed, n.layout.ID, n.layout.Address(), ctx.Err())
		case <-tick.C:
		}
	}
}

// node returns the node with id.
func (s *Supervisor) node(id int32) (*node, error) {
	if id < 0 || int(id) >= len(s.nodes) {
		return nil, fmt.Errorf("%w: %d (the cluster has nodes 0 to %d)", ErrNoSuchNode, id, len(s.nodes)-1)
	}
	return s.nodes[id], nil
}

// live returns n's process and exit channel while it has not exited; nil
// once it has.
func (n *node) live() (*os.Process, chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.proc == nil {
		return nil, nil
	}
	select {
	case <-n.mu.exited:
		return nil, nil
	default:
		return n.mu.proc, n.mu.exited
	}
}

// admin is node id's admin API address, empty for none.
func (s *Supervisor) admin(id int32) string {
	if int(id) < len(s.cfg.Admin) {
		return s.cfg.Admin[id]
	}
	return ""
}

// List reports every node.
func (s *Supervisor) List() []NodeStatus {
	out := make([]NodeStatus, len(s.nodes))
	for i, n := range s.nodes {
		st := NodeStatus{ID: n.layout.ID, Address: n.layout.Address(), ControllerAddress: n.layout.ControllerAddress(), Admin: s.admin(n.layout.ID), Role: n.layout.Role(), State: StateDead}
		proc, _ := n.live()
		if proc != nil {
			n.mu.Lock()
			ready, stopped, isolated := n.mu.ready, n.mu.stopped, n.mu.isolated
			n.mu.Unlock()
			st.PID = proc.Pid
			switch {
			case processStopped(proc.Pid, stopped):
				st.State = StateStopped
			case !ready:
				st.State = StateStarting
			case isolated:
				st.State = StateIsolated
			default:
				st.State = StateRunning
			}
		}
		out[i] = st
	}
	return out
}

// Kill ends node id with SIGKILL and returns once it has exited.
func (s *Supervisor) Kill(ctx context.Context, id int32) error {
	return s.act(id, func(n *node) error {
		proc, exited := n.live()
		if proc == nil {
			return nil // already dead
		}
		if err := proc.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("kill node %d: %w", id, err)
		}
		return waitExit(ctx, exited, id)
	})
}

// act runs fn on node id, one act at a time.
func (s *Supervisor) act(id int32, fn func(*node) error) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	n, err := s.node(id)
	if err != nil {
		return err
	}
	return fn(n)
}

// Stop sends node id SIGSTOP: the process stays, hung, until Start.
func (s *Supervisor) Stop(ctx context.Context, id int32) error {
	return s.act(id, func(n *node) error {
		proc, _ := n.live()
		if proc == nil {
			return fmt.Errorf("node %d is dead; klog node start %d first", id, id)
		}
		if err := signalStop(proc); err != nil {
			return fmt.Errorf("stop node %d: %w", id, err)
		}
		n.mu.Lock()
		n.mu.stopped = true
		n.mu.Unlock()
		return waitStopped(ctx, proc.Pid, id)
	})
}

// StartNode resumes node id when it is stopped, relaunches it when it is
// dead and waits until it is ready; a running node is left alone.
func (s *Supervisor) StartNode(ctx context.Context, id int32) error {
	return s.act(id, func(n *node) error {
		if proc, _ := n.live(); proc != nil {
			return s.resume(n, proc)
		}
		return s.relaunch(ctx, n)
	})
}

// StartAll resumes every stopped node and launches every dead one again,
// all at once, then waits until each is ready: voters all dead come back
// only together, which StartNode, one node at a time, cannot do.
func (s *Supervisor) StartAll(ctx context.Context) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	var launched []*node
	for _, n := range s.nodes {
		if proc, _ := n.live(); proc != nil {
			if err := s.resume(n, proc); err != nil {
				return err
			}
			continue
		}
		if err := s.launch(n); err != nil {
			return err
		}
		launched = append(launched, n)
	}
	for _, n := range launched {
		if err := s.waitReady(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// relaunch launches node n again and waits until it is ready.
func (s *Supervisor) relaunch(ctx context.Context, n *node) error {
	if err := s.launch(n); err != nil {
		return err
	}
	return s.waitReady(ctx, n)
}

func (s *Supervisor) resume(n *node, proc *os.Process) error {
	n.mu.Lock()
	stopped := n.mu.stopped
	n.mu.Unlock()
	if !processStopped(proc.Pid, stopped) {
		return nil
	}
	if err := signalContinue(proc); err != nil {
		return fmt.Errorf("resume node %d: %w", n.layout.ID, err)
	}
	n.mu.Lock()
	n.mu.stopped = false
	n.mu.Unlock()
	return nil
}

// Isolate cuts node id off from the other nodes: its quorum connections
// (Raft and forwarding) are dropped both ways and refused until Heal; its
// clients stay connected. The node does it on SIGUSR1 (klog up
// --fault-signals); a relaunched node starts healed.
func (s *Supervisor) Isolate(_ context.Context, id int32) error {
	return s.fault(id, "isolate", signalIsolate, true)
}

// Heal ends Isolate.
func (s *Supervisor) Heal(_ context.Context, id int32) error {
	return s.fault(id, "heal", signalHeal, false)
}

func (s *Supervisor) fault(id int32, what string, signal func(*os.Process) error, isolated bool) error {
	return s.act(id, func(n *node) error {
		proc, _ := n.live()
		if proc == nil {
			return fmt.Errorf("node %d is dead; klog node start %d first", id, id)
		}
		if err := signal(proc); err != nil {
			return fmt.Errorf("%s node %d: %w", what, id, err)
		}
		n.mu.Lock()
		n.mu.isolated = isolated
		n.mu.Unlock()
		return nil
	})
}

// Restart stops node id with SIGTERM (SIGKILL after StopTimeout), then
// launches it again and waits until it is ready.
func (s *Supervisor) Restart(ctx context.Context, id int32) error {
	return s.act(id, func(n *node) error {
		if err := s.terminate(ctx, n); err != nil {
			return err
		}
		return s.relaunch(ctx, n)
	})
}

// terminate ends node n: SIGTERM (and SIGCONT, which a stopped process
// needs to act on it), then SIGKILL when it has not exited after
// StopTimeout.
func (s *Supervisor) terminate(ctx context.Context, n *node) error {
	proc, exited := n.live()
	if proc == nil {
		return nil
	}
	n.mu.Lock()
	n.mu.terminating = true
	n.mu.Unlock()
	signalTerminate(proc)
	select {
	case <-exited:
		return nil
	case <-time.After(s.cfg.StopTimeout):
		s.logger.Warn("node did not exit after SIGTERM; killing it", "node", n.layout.ID, "waited", s.cfg.StopTimeout)
	case <-ctx.Done():
	}
	proc.Kill()
	return waitExit(context.WithoutCancel(ctx), exited, n.layout.ID)
}

// Shutdown ends every node, SIGTERM first, one after another, and
// returns when all have exited. One at a time, each node's controlled
// shutdown runs while the quorum it needs is still up (the last one has
// no peer left and stops at once); nodes stopped together leave each
// other's moves and proposals waiting on a quorum that has already gone.
func (s *Supervisor) Shutdown() {
	s.ops.Lock()
	defer s.ops.Unlock()
	s.shutdownLocked()
}

func (s *Supervisor) shutdownLocked() {
	for _, n := range s.nodes {
		s.terminate(context.Background(), n)
	}
}

// exitWait bounds the wait for a killed process to be reaped.
const exitWait = 10 * time.Second

func waitExit(ctx context.Context, exited chan struct{}, id int32) error {
	select {
	case <-exited:
		return nil
	case <-time.After(exitWait):
		return fmt.Errorf("node %d has not exited %v after SIGKILL", id, exitWait)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitStopped waits until the kernel shows pid stopped, where it can tell.
func waitStopped(ctx context.Context, pid int, id int32) error {
	ctx, cancel := context.WithTimeout(ctx, exitWait)
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for !processStopped(pid, false) && canReadState {
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %d not stopped after SIGSTOP: %w", id, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// lineLog writes whole lines of several writers to one, each with its
// writer's prefix, never interleaving two lines.
type lineLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineLog) writer(prefix string) *prefixWriter {
	return &prefixWriter{log: l, prefix: prefix}
}

// maxLine bounds a buffered partial line; a longer one is written in parts.
const maxLine = 64 << 10

// prefixWriter is one child's output: it buffers until a newline.
type prefixWriter struct {
	log    *lineLog
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 && len(p.buf) < maxLine {
			break
		}
		if i < 0 {
			i = len(p.buf) - 1
		}
		p.emit(p.buf[:i+1])
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}

// flush writes a last line without its newline.
func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		p.emit(append(p.buf, '\n'))
		p.buf = nil
	}
}

func (p *prefixWriter) emit(line []byte) {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	w := bufio.NewWriter(p.log.w)
	w.WriteString(p.prefix)
	w.Write(bytes.TrimRight(line, "\n"))
	w.WriteByte('\n')
	w.Flush()
}
