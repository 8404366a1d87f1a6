package vfs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocLarge maps a chunk of anonymous memory, populated at once: one
// system call instead of a page fault every 4 KiB as appends fill it.
func allocLarge() []byte {
	b, err := unix.Mmap(-1, 0, chunkSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_POPULATE)
	if err != nil {
		// As make does when memory runs out.
		panic(fmt.Sprintf("vfs: map a %d-byte memory file chunk: %v", chunkSize, err))
	}
	return b
}

func freeLarge(b []byte) {
	if err := unix.Munmap(b[:cap(b)]); err != nil {
		panic(fmt.Sprintf("vfs: unmap a memory file chunk: %v", err))
	}
}
