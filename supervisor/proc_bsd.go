//go:build unix && !linux

package supervisor

import "syscall"

// childAttr puts a node in a process group of its own, so a Ctrl-C at the
// terminal reaches the supervisor only.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// canReadState reports that processStopped cannot ask the kernel here.
const canReadState = false

// processStopped is the supervisor's own account of pid.
func processStopped(_ int, tracked bool) bool { return tracked }

// isZombie cannot ask the kernel here; a zombie counts as alive.
func isZombie(int) bool { return false }

// NetNamespace is "": the system has no network namespaces to tell apart.
func NetNamespace() string { return "" }
