// Package klogproc runs klog as real processes for the scripts that fault
// it. Node is one klog up: start it on a data directory and a loopback
// port kept across restarts, wait until it is ready, and end, crash, pause
// or resume it with signals (scripts/hostile, scripts/chaos). Cluster is
// one klog up -n N: its supervisor as one process, its nodes acted on with
// the binary's klog node commands, and the Metadata and DescribeQuorum
// views of each node that multi-node scenarios wait on (scripts/chaos).
package klogproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ReadyTimeout bounds one start of klog up, recovery included. It only
// tells a node that will never be ready from a slow one, so it is wide:
// the hostile tier's restart of a node with 6,000 partitions after
// SIGKILL, recovering each log through a 512-descriptor cache, took 19 s
// with the machine at load 13 and over 30 s at load 30.
const ReadyTimeout = 90 * time.Second

var (
	// ErrExited means the klog process ended while it was awaited.
	ErrExited = errors.New("node exited")
	// ErrNotReady means klog up did not write its ready file in time.
	ErrNotReady = errors.New("node not ready")
)

// Options is how a caller wants its klog up process started.
type Options struct {
	Configs []string // -X key=value
	UlimitN int      // ulimit -n for the process; 0 leaves the limit as is
	// Listeners are listeners beside the PLAINTEXT one on the node's
	// port, each NAME://HOST:PORT with its port given (FreePort), kept
	// across restarts; their settings go in Configs.
	Listeners []string
	// OnStart, if set, is called with each process started and a channel
	// closed when it has exited (e.g. to sample its memory).
	OnStart func(pid int, exited <-chan struct{})
}

// Node is one klog up process on a data directory and a loopback port,
// both kept across restarts so that clients reconnect to the same address.
type Node struct {
	Bin, Dir string
	Opts     Options
	Port     int
	starts   int
	proc
}

// proc is one process the caller started, its output in a log file.
type proc struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has been waited for
	stopped bool          // the caller ended the process itself
	logPath string        // stdout and stderr of the current process
}

// Start starts klog up (the binary bin) on a free port with its data in
// dir/data and waits for it to be ready.
func Start(ctx context.Context, bin, dir string, opts Options) (*Node, error) {
	n := &Node{Bin: bin, Dir: dir, Opts: opts}
	var err error
	for range 3 { // a lost race for the port is retried on another one
		n.Port = FreePort()
		if err = n.Start(ctx); err == nil || !n.LogHas("address already in use") {
			return n, err
		}
	}
	return n, err
}

// FreePort returns a loopback port nobody listens on, below Linux's
// ephemeral range so that client sockets do not take it before klog binds.
func FreePort() int { return freePorts(1) }

// freePorts returns the first of n consecutive loopback ports nobody
// listens on, below Linux's ephemeral range.
func freePorts(n int) int {
next:
	for {
		base := 20000 + rand.IntN(12768-n)
		for p := base; p < base+n; p++ {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), 100*time.Millisecond)
			if err == nil {
				c.Close()
				continue next
			}
		}
		return base
	}
}

// Addr is the node's Kafka listener.
func (n *Node) Addr() string { return fmt.Sprintf("127.0.0.1:%d", n.Port) }

// DataDir is the node's data directory.
func (n *Node) DataDir() string { return filepath.Join(n.Dir, "data") }

// Start runs one klog up process on the node's directory and port and
// waits until it is ready.
func (n *Node) Start(ctx context.Context) error {
	n.starts++
	ready := filepath.Join(n.Dir, fmt.Sprintf("ready-%d", n.starts))
	args := []string{"up", "--data-dir", n.DataDir(), "--listen", n.Addr(), "--ready-file", ready}
	if len(n.Opts.Listeners) > 0 {
		args = append(args, "-X", "listeners="+strings.Join(append([]string{"PLAINTEXT://" + n.Addr()}, n.Opts.Listeners...), ","))
	}
	for _, kv := range n.Opts.Configs {
		args = append(args, "-X", kv)
	}
	_, err := n.launch(ctx, n.Bin, args, nil, n.Opts, filepath.Join(n.Dir, fmt.Sprintf("klog-%d.log", n.starts)), ready)
	return err
}

// launch starts bin with args (and env added to this process's, if set),
// its output to logPath, and waits until it has written a line to the
// file ready, which it returns; a process not ready within ReadyTimeout
// is killed.
func (p *proc) launch(ctx context.Context, bin string, args, env []string, opts Options, logPath, ready string) ([]byte, error) {
	p.stopped = false
	p.logPath = logPath
	var cmd *exec.Cmd
	if opts.UlimitN > 0 {
		// exec keeps the pid, so a sampler watches klog, not the shell.
		script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, opts.UlimitN)
		cmd = exec.Command("sh", append([]string{"-c", script, bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start klog: %w", err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(p.exited) }()
	if opts.OnStart != nil {
		opts.OnStart(cmd.Process.Pid, p.exited)
	}

	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	var line []byte
	err = WaitFor(ctx, func() (bool, error) {
		if !p.Alive() {
			return false, fmt.Errorf("%w before it was ready: %s", ErrExited, p.LogTail())
		}
		b, err := os.ReadFile(ready)
		line = b
		return err == nil && bytes.HasSuffix(b, []byte("\n")), nil
	})
	if err != nil {
		if p.Alive() {
			p.Kill()
		}
		return nil, fmt.Errorf("%w: %v", ErrNotReady, err)
	}
	return line, nil
}

// Pid is the current process's id.
func (p *proc) Pid() int { return p.cmd.Process.Pid }

// Alive reports whether the process is running (or paused).
func (p *proc) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Died reports whether the process ended without the caller ending it.
func (p *proc) Died() bool { return !p.stopped && !p.Alive() }

// Stop ends the process with SIGTERM (a clean shutdown), SIGKILL after 15 s.
func (p *proc) Stop() {
	if p.cmd == nil || !p.Alive() {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused process cannot stop
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.Kill()
	}
}

// Kill ends the process with SIGKILL, as a crash.
func (p *proc) Kill() {
	if p.cmd == nil || !p.Alive() {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Pause stops the process with SIGSTOP, as a hung node: its sockets stay
// open and nothing answers.
func (p *proc) Pause() error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (p *proc) Resume() error { return p.cmd.Process.Signal(syscall.SIGCONT) }

// Restart ends the process (SIGKILL when crash, else SIGTERM) and starts it
// again on the same directory and port with opts.
func (n *Node) Restart(ctx context.Context, crash bool, opts Options) error {
	if crash {
		n.Kill()
	} else {
		n.Stop()
	}
	n.Opts = opts
	return n.Start(ctx)
}

// LogLines is the number of lines the current process has logged.
func (p *proc) LogLines() int {
	b, _ := os.ReadFile(p.logPath)
	return bytes.Count(b, []byte("\n"))
}

// LogHas reports whether the current process has logged s.
func (p *proc) LogHas(s string) bool {
	b, _ := os.ReadFile(p.logPath)
	return bytes.Contains(b, []byte(s))
}

// LogTail is the last lines of the current process's log, on one line.
func (p *proc) LogTail() string {
	b, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// WaitFor polls cond every 20 ms until it is true, fails, or ctx ends.
func WaitFor(ctx context.Context, cond func() (bool, error)) error {
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
