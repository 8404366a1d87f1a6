package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klogdev/klog/scripts/internal/klogproc"
)

// nodeOpts is how a probe wants its klog up process started.
type nodeOpts struct {
	configs []string // -X key=value
	ulimitN int      // ulimit -n for the process; 0 leaves the limit as is
	// secure adds a SASL_PLAINTEXT and an SSL listener (secureOpts).
	secure    bool
	listeners []string
}

// node is the klog up process a probe attacks (scripts/internal/klogproc),
// with a memory and descriptor sampler per process started and the API
// versions it serves.
type node struct {
	*klogproc.Node
	opts     nodeOpts
	samplers []*sampler // one per process started
	versions map[int16]int16
	sec      *security // the secure listeners, with nodeOpts.secure
}

// startNode starts klog up on a fresh port in dir and waits for it to be
// ready.
func startNode(ctx context.Context, bin, dir string, opts nodeOpts) (*node, error) {
	n := &node{opts: opts}
	var err error
	if opts.secure {
		if opts, n.sec, err = secureOpts(dir, opts); err != nil {
			return n, err
		}
		n.opts = opts
	}
	if n.Node, err = klogproc.Start(ctx, bin, dir, n.procOptions(opts)); err != nil {
		return n, err
	}
	n.versions, err = fetchVersions(n)
	return n, err
}

// procOptions turns opts into the process's, sampling each process.
func (n *node) procOptions(opts nodeOpts) klogproc.Options {
	return klogproc.Options{Configs: opts.configs, UlimitN: opts.ulimitN, Listeners: opts.listeners, OnStart: func(pid int, exited <-chan struct{}) {
		n.samplers = append(n.samplers, startSampler(pid, exited))
	}}
}

// sampler watches the current process.
func (n *node) sampler() *sampler { return n.samplers[len(n.samplers)-1] }

// restart stops the process (SIGKILL when crash, else SIGTERM) and starts
// it again on the same directory and port with opts.
func (n *node) restart(ctx context.Context, crash bool, opts nodeOpts) error {
	n.opts = opts
	if err := n.Restart(ctx, crash, n.procOptions(opts)); err != nil {
		return err
	}
	var err error
	n.versions, err = fetchVersions(n)
	return err
}

// dirBytes sums the sizes of the files under the data directory whose name
// ends in suffix.
func (n *node) dirBytes(suffix string) int64 {
	var total int64
	_ = filepath.WalkDir(n.DataDir(), func(path string, d os.DirEntry, err error) error {
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", n.Pid()))
	if err != nil {
		return 0, err
	}
	return countCloseWait(b, n.Port, ports)
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
