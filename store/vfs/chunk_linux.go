package vfs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocLarge maps a chunk of anonymous memory; its pages come as appends
// touch them. (Populating the chunk at once, MAP_POPULATE, cost the node
// twice the CPU per GB produced here.)
func allocLarge() []byte {
	b, err := unix.Mmap(-1, 0, chunkSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
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
