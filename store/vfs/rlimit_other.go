//go:build !unix

package vfs

// NoFileLimit returns 0: the process has no RLIMIT_NOFILE here.
func NoFileLimit() uint64 { return 0 }
