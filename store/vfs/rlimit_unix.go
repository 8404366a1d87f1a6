//go:build unix

package vfs

import "syscall"

// NoFileLimit returns the process's soft limit on open file descriptors
// (RLIMIT_NOFILE), or 0 when it cannot be read. The Go runtime raises the
// soft limit to the hard limit when the process starts, so this is the
// hard limit the process was started with.
func NoFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return uint64(r.Cur) // int64 on some BSDs
}
