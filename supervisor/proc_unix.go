//go:build unix

package supervisor

import (
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
