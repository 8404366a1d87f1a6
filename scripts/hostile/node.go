package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// readyTimeout bounds one start of klog up, recovery included.
const readyTimeout = 30 * time.Second

// nodeOpts is how a probe wants its klog up process started.
type nodeOpts struct {
	configs []string // -X key=value
	ulimitN int      // ulimit -n for the process; 0 leaves the limit as is
}

// node is one klog up process on a data directory and a loopback port,
// both kept across restarts so that clients reconnect to the same address.
type node struct {
	bin, dir string
	opts     nodeOpts
	port     int
	starts   int

	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has been waited for
	stopped  bool          // the probe ended the process itself
	logPath  string        // stderr of the current process
	samplers []*sampler    // one per process started
	versions map[int16]int16
}

// startNode starts klog up on a fresh port in dir and waits for it to be
// ready.
func startNode(ctx context.Context, bin, dir string, opts nodeOpts) (*node, error) {
	n := &node{bin: bin, dir: dir, opts: opts}
	var err error
	for range 3 { // a lost race for the port is retried on another one
		n.port = freePort()
		if err = n.start(ctx); err == nil || !n.logHas("address already in use") {
			return n, err
		}
	}
	return n, err
}

// freePort returns a loopback port nobody listens on, below Linux's
// ephemeral range so that client sockets do not take it before klog binds.
func freePort() int {
	for {
		p := 20000 + rand.IntN(12768)
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), 100*time.Millisecond)
		if err != nil {
			return p
		}
		c.Close()
	}
}

func (n *node) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

func (n *node) pid() int { return n.cmd.Process.Pid }

// start runs one klog up process on the node's directory and port.
func (n *node) start(ctx context.Context) error {
	n.starts++
	n.stopped = false
	n.logPath = filepath.Join(n.dir, fmt.Sprintf("klog-%d.log", n.starts))
	ready := filepath.Join(n.dir, fmt.Sprintf("ready-%d", n.starts))
	args := []string{"up", "--data-dir", filepath.Join(n.dir, "data"), "--listen", n.addr(), "--ready-file", ready}
	for _, kv := range n.opts.configs {
		args = append(args, "-X", kv)
	}
	var cmd *exec.Cmd
	if n.opts.ulimitN > 0 {
		// exec keeps the pid, so the sampler watches klog, not the shell.
		script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, n.opts.ulimitN)
		cmd = exec.Command("sh", append([]string{"-c", script, n.bin}, args...)...)
	} else {
		cmd = exec.Command(n.bin, args...)
	}
	logf, err := os.Create(n.logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start klog: %w", err)
	}
	n.cmd = cmd
	n.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(n.exited) }()
	n.samplers = append(n.samplers, startSampler(cmd.Process.Pid, n.exited))

	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err = waitFor(ctx, func() (bool, error) {
		if !n.alive() {
			return false, fmt.Errorf("%w before it was ready: %s", errNodeExited, n.logTail())
		}
		b, err := os.ReadFile(ready)
		return err == nil && bytes.HasSuffix(b, []byte("\n")), nil
	})
	if err != nil {
		if n.alive() {
			n.kill()
		}
		return fmt.Errorf("%w: %v", errNotReady, err)
	}
	n.versions, err = fetchVersions(n)
	return err
}

// sampler watches the current process.
func (n *node) sampler() *sampler { return n.samplers[len(n.samplers)-1] }

// alive reports whether the process is running.
func (n *node) alive() bool {
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// died reports whether the process ended without the probe ending it.
func (n *node) died() bool { return !n.stopped && !n.alive() }

// stop ends the process with SIGTERM (a clean shutdown), SIGKILL after 15 s.
func (n *node) stop() {
	if n.cmd == nil || !n.alive() {
		return
	}
	n.stopped = true
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(15 * time.Second):
		n.kill()
	}
}

// kill ends the process with SIGKILL, as a crash.
func (n *node) kill() {
	if n.cmd == nil || !n.alive() {
		return
	}
	n.stopped = true
	_ = n.cmd.Process.Kill()
	<-n.exited
}

// restart stops the process (SIGKILL when crash, else SIGTERM) and starts
// it again on the same directory and port with opts.
func (n *node) restart(ctx context.Context, crash bool, opts nodeOpts) error {
	if crash {
		n.kill()
	} else {
		n.stop()
	}
	n.opts = opts
	return n.start(ctx)
}

// logLines is the number of lines the current process has logged.
func (n *node) logLines() int {
	b, _ := os.ReadFile(n.logPath)
	return bytes.Count(b, []byte("\n"))
}

func (n *node) logHas(s string) bool {
	b, _ := os.ReadFile(n.logPath)
	return bytes.Contains(b, []byte(s))
}

// logTail is the last lines of the current process's log, on one line.
func (n *node) logTail() string {
	b, _ := os.ReadFile(n.logPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// dirBytes sums the sizes of the files under the data directory whose name
// ends in suffix.
func (n *node) dirBytes(suffix string) int64 {
	var total int64
	_ = filepath.WalkDir(filepath.Join(n.dir, "data"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, suffix) {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// closeWait counts the node's sockets in CLOSE-WAIT towards one of the
// client ports in ports, from /proc/PID/net/tcp.
func (n *node) closeWait(ports map[int]bool) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", n.pid()))
	if err != nil {
		return 0, err
	}
	return countCloseWait(b, n.port, ports)
}

// countCloseWait counts the lines of a /proc/net/tcp table for sockets on
// local port port in CLOSE-WAIT (state 08) whose remote port is in ports.
func countCloseWait(table []byte, port int, ports map[int]bool) (int, error) {
	count := 0
	lines := strings.Split(string(table), "\n")
	for _, line := range lines[min(1, len(lines)):] { // the first is a header
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		local, remote, state := f[1], f[2], f[3]
		if state != "08" || !strings.HasSuffix(local, fmt.Sprintf(":%04X", port)) {
			continue
		}
		_, rp, ok := strings.Cut(remote, ":")
		if !ok {
			return 0, fmt.Errorf("%w: net/tcp address %q", errBadProc, remote)
		}
		p, err := strconv.ParseInt(rp, 16, 32)
		if err != nil {
			return 0, fmt.Errorf("%w: net/tcp port %q", errBadProc, rp)
		}
		if ports[int(p)] {
			count++
		}
	}
	return count, nil
}

// waitFor polls cond every 20 ms until it is true, fails, or ctx ends.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
