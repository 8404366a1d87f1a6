//go:build unix

package supervisor

import (
	"errors"
	"os"
	"syscall"
)

func signalStop(p *os.Process) error     { return p.Signal(syscall.SIGSTOP) }
func signalContinue(p *os.Process) error { return p.Signal(syscall.SIGCONT) }

// signalIsolate and signalHeal are what a node started with
// --fault-signals takes for klog node isolate and heal.
func signalIsolate(p *os.Process) error { return p.Signal(syscall.SIGUSR1) }
func signalHeal(p *os.Process) error    { return p.Signal(syscall.SIGUSR2) }

// signalTerminate asks p to shut down: SIGTERM, and SIGCONT so that a
// stopped process acts on it.
func signalTerminate(p *os.Process) {
	p.Signal(syscall.SIGTERM)
	p.Signal(syscall.SIGCONT)
}

// ProcessAlive reports whether pid is a live process: one that takes
// signals and, where the kernel says so, is not a zombie waiting for its
// parent.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !isZombie(pid)
}
