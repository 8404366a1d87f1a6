//go:build unix

package main

import "syscall"

// detachAttr puts the background klog up in a session of its own, so that
// the end of the terminal or CI step that started it does not reach it.
func detachAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
