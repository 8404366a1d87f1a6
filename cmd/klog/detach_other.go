//go:build !unix

package main

import "syscall"

// detachAttr: the background klog up starts as a plain child here.
func detachAttr() *syscall.SysProcAttr { return nil }
