//go:build !linux

package vfs

// allocLarge allocates a chunk on the Go heap where klog does not map
// memory for it.
func allocLarge() []byte { return make([]byte, chunkSize) }

func freeLarge([]byte) {}
