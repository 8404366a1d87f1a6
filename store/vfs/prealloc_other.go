//go:build !linux

package vfs

import "os"

// preallocate is a no-op where klog has no keep-size preallocation.
func preallocate(*os.File, int64, int64) {}
