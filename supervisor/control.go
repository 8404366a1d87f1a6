package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The control endpoint is a unix socket in the cluster's directory,
// DIR/supervisor.sock. A request is one JSON object on one line, the answer
// one JSON line back, then the supervisor closes the connection:
//
//	{"op":"kill","node":1}  →  {"nodes":[...]}  or  {"error":"..."}
//
// Ops: list, kill, stop, start, restart. Every answer carries the nodes'
// states after the act.
//
// So that commands given only -b/KLOG_BROKERS find the cluster, a running
// supervisor also writes a registration, one JSON file per supervisor,
// STATEDIR/PID.json: its data directory, socket, bootstrap addresses,
// cluster id and network namespace. Pick reads at most maxRegistrations of
// them.

// socketName is the control socket in the cluster's directory.
const socketName = "supervisor.sock"

// maxSocketPath is the longest unix socket path the kernel takes (sun_path
// is 108 bytes on Linux, 104 on the BSDs, with its terminating NUL).
const maxSocketPath = 103

// maxRequest bounds a control request or answer line.
const maxRequest = 1 << 20

// maxRegistrations bounds how many registrations Pick reads.
const maxRegistrations = 64

// Request is one control request.
type Request struct {
	Op   string `json:"op"`
	Node int32  `json:"node"`
}

// Response is the answer to a Request.
type Response struct {
	Nodes []NodeStatus `json:"nodes,omitempty"`
	Error string       `json:"error,omitempty"`
}

// Registration is what a running cluster records for Pick: a supervisor
// of klog up -n N, or a single node.
type Registration struct {
	PID     int      `json:"pid"`
	DataDir string   `json:"data_dir"` // empty for a node in memory
	Socket  string   `json:"socket"`   // empty for a single node
	Brokers []string `json:"brokers"`
	// Admin is the nodes' admin API addresses, host:port.
	Admin []string `json:"admin,omitempty"`
	// Log is the file the cluster's output goes to, for klog up --detach.
	Log string `json:"log,omitempty"`
	// ClusterID is the cluster's id as its brokers report it; empty until
	// the cluster is ready.
	ClusterID string `json:"cluster_id,omitempty"`
	// NetNS is the network namespace the cluster runs in (NetNamespace);
	// empty where the system has none.
	NetNS string `json:"netns,omitempty"`
	// Path is the registration's file, set by Running.
	Path string `json:"-"`
}

// SocketPath is the control socket of the cluster in dir.
func SocketPath(dir string) (string, error) {
	abs, err := filepath.Abs(filepath.Join(dir, socketName))
	if err != nil {
		return "", err
	}
	if len(abs) > maxSocketPath {
		return "", fmt.Errorf("control socket path %s is longer than the %d bytes a unix socket allows; use a shorter --data-dir", abs, maxSocketPath)
	}
	return abs, nil
}

// Control is the control endpoint of a running cluster: its socket and its
// registration.
type Control struct {
	ln        net.Listener
	path, reg string
	regInfo   Registration
}

// ListenControl opens the control socket of the cluster in dir, and writes
// its registration in stateDir (none when stateDir is empty) with the
// cluster's bootstrap addresses. It fails with ErrRunning when another
// supervisor answers on the socket; a stale socket is replaced. Requests
// wait until Serve.
func ListenControl(dir, stateDir string, brokers []string) (*Control, error) {
	path, err := SocketPath(dir)
	if err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("%w: a supervisor answers on %s", ErrRunning, path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale control socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	c := &Control{ln: ln, path: path}
	if stateDir != "" {
		c.regInfo = Registration{PID: os.Getpid(), DataDir: dir, Socket: path, Brokers: brokers}
		if c.reg, err = register(stateDir, c.regInfo); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// Close stops accepting requests and removes the socket and the
// registration.
func (c *Control) Close() {
	c.ln.Close()
	os.Remove(c.path)
	if c.reg != "" {
		os.Remove(c.reg)
	}
}

// Serve answers requests with s until ctx is done or c is closed.
func (c *Control) Serve(ctx context.Context, s *Supervisor) error {
	stop := context.AfterFunc(ctx, func() { c.ln.Close() })
	defer stop()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("control socket: %w", err)
		}
		go s.handle(ctx, conn)
	}
}

// requestTimeout bounds one control request: a start or restart waits for
// the node to be ready.
const requestTimeout = DefaultReadyTimeout + DefaultStopTimeout + 15*time.Second

func (s *Supervisor) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(requestTimeout))
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var resp Response
	var req Request
	line, err := bufio.NewReader(io.LimitReader(conn, maxRequest)).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err == nil {
		err = s.do(ctx, req)
	}
	if err != nil {
		resp.Error = err.Error()
	}
	resp.Nodes = s.List()
	b, _ := json.Marshal(resp)
	conn.Write(append(b, '\n'))
}

func (s *Supervisor) do(ctx context.Context, req Request) error {
	switch req.Op {
	case "list":
		return nil
	case "kill":
		return s.Kill(ctx, req.Node)
	case "stop":
		return s.Stop(ctx, req.Node)
	case "start":
		if req.Node < 0 {
			return s.StartAll(ctx)
		}
		return s.StartNode(ctx, req.Node)
	case "restart":
		return s.Restart(ctx, req.Node)
	case "isolate":
		return s.Isolate(ctx, req.Node)
	case "heal":
		return s.Heal(ctx, req.Node)
	}
	return fmt.Errorf("unknown op %q", req.Op)
}

// Call sends req to the supervisor on socket and returns its answer; an
// act that failed is an error, with the nodes' states in the Response
// still.
func Call(ctx context.Context, socket string, req Request) (Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(requestTimeout + 5*time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	b, _ := json.Marshal(req)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return Response{}, fmt.Errorf("control request: %w", err)
	}
	line, err := bufio.NewReader(io.LimitReader(conn, maxRequest)).ReadBytes('\n')
	if err != nil {
		return Response{}, fmt.Errorf("control answer: %w", err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("control answer: %w", err)
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// register writes r to stateDir as PID.json, whole or not at all, and
// returns its path.
func register(stateDir string, r Registration) (string, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("create state directory: %w", err)
	}
	if r.NetNS == "" {
		r.NetNS = NetNamespace()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	path := filepath.Join(stateDir, strconv.Itoa(r.PID)+".json")
	if err := WriteFileAtomic(path, b, 0o600); err != nil {
		return "", fmt.Errorf("register the cluster: %w", err)
	}
	return path, nil
}
