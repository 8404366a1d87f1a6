package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A single node (klog up without -n) registers too, so that klog status and
// klog down find it: its registration has no Socket, and it counts as
// running while its process lives. A supervisor's counts as running while
// its socket answers.

// Register writes r to stateDir as PID.json (r.PID), whole or not at all,
// and returns a function that removes it.
func Register(stateDir string, r Registration) (unregister func(), err error) {
	path, err := register(stateDir, r)
	if err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

// Update rewrites the supervisor's registration with what is known once
// the cluster is ready: its id, its nodes' admin API addresses and the
// file its output goes to (empty when it goes to a terminal).
func (c *Control) Update(clusterID string, admin []string, logFile string) error {
	if c.regInfo.PID == 0 {
		return nil
	}
	c.regInfo.ClusterID, c.regInfo.Admin, c.regInfo.Log = clusterID, admin, logFile
	_, err := register(filepath.Dir(c.reg), c.regInfo)
	return err
}

// Running returns the registrations in stateDir whose cluster is running
// and for which match (nil for all) is true; those whose cluster is gone
// are removed. It reads at most maxRegistrations of them.
func Running(stateDir string, match func(Registration) bool) ([]Registration, error) {
	entries, err := os.ReadDir(stateDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []Registration
	read := 0
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		if read++; read > maxRegistrations {
			break
		}
		path := filepath.Join(stateDir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var r Registration
		if json.Unmarshal(b, &r) != nil {
			continue
		}
		r.Path = path
		if match != nil && !match(r) {
			continue
		}
		if !r.alive() {
			os.Remove(path) // its process is gone
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// alive reports whether the registered cluster still runs: its supervisor
// answers on its socket, or, for a single node, its process lives.
func (r Registration) alive() bool {
	if r.Socket != "" {
		c, err := net.DialTimeout("unix", r.Socket, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	return ProcessAlive(r.PID)
}

// WriteFileAtomic writes b to path through a temporary file beside it and a
// rename, so a reader sees the whole file or none.
func WriteFileAtomic(path string, b []byte, perm os.FileMode) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, perm); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ErrStillRunning reports a process that did not exit when asked to.
var ErrStillRunning = errors.New("process did not exit")

// Terminate stops the process pid: SIGTERM, then, when it has not exited
// after grace, SIGKILL. It returns once the process is gone, with
// ErrStillRunning when even SIGKILL did not end it within a few seconds.
// It reports whether SIGKILL was needed.
func Terminate(pid int, grace time.Duration) (killed bool, err error) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false, err
	}
	signalTerminate(p)
	if waitGone(pid, grace) {
		return false, nil
	}
	if err := p.Kill(); err != nil && ProcessAlive(pid) {
		return true, fmt.Errorf("kill %d: %w", pid, err)
	}
	if !waitGone(pid, 5*time.Second) {
		return true, fmt.Errorf("%w: pid %d", ErrStillRunning, pid)
	}
	return true, nil
}

// goneCheck is how often waitGone looks at the process.
const goneCheck = 20 * time.Millisecond

// waitGone waits up to d for pid to exit, and reports whether it did.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for ProcessAlive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(goneCheck)
	}
	return true
}

// Unregister removes r's registration (one Running returned), for the
// cluster stopped from outside.
func Unregister(r Registration) {
	if r.Path != "" {
		os.Remove(r.Path)
	}
}
