package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// childAttr puts a node in a process group of its own, so a Ctrl-C at the
// terminal reaches the supervisor only (which then stops the nodes in
// order), and has the kernel kill it when the supervisor dies, so a killed
// supervisor leaves no orphans.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// canReadState reports that processStopped reads the kernel's view.
const canReadState = true

// processStopped reports whether pid is stopped (state T in
// /proc/PID/stat), whoever stopped it; tracked is not needed on Linux.
func processStopped(pid int, _ bool) bool {
	return ProcState(pid) == 'T'
}

// ProcState is the state letter of pid in /proc/PID/stat (R, S, D, T, Z,
// ...), or 0 when there is no such process.
func ProcState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// isZombie reports whether pid has exited and waits for its parent to
// reap it.
func isZombie(pid int) bool { return ProcState(pid) == 'Z' }

// NetNamespace names the network namespace this process runs in, as the
// kernel does (net:[INODE] of /proc/self/ns/net); "" when it cannot be
// read. Two processes reach each other's 127.0.0.1 only within one.
func NetNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return ""
	}
	return ns
}
