//go:build !unix

package supervisor

import (
	"os"
	"syscall"
)

func childAttr() *syscall.SysProcAttr { return nil }

const canReadState = false

func processStopped(_ int, tracked bool) bool { return tracked }

func signalStop(*os.Process) error     { return ErrUnsupported }
func signalContinue(*os.Process) error { return ErrUnsupported }
func signalIsolate(*os.Process) error  { return ErrUnsupported }
func signalHeal(*os.Process) error     { return ErrUnsupported }

// signalTerminate kills p: there is no SIGTERM here.
func signalTerminate(p *os.Process) { p.Kill() }

// ProcessAlive reports whether pid is a live process.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// NetNamespace is "": the system has no network namespaces to tell apart.
func NetNamespace() string { return "" }
