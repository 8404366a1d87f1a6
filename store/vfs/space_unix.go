//go:build linux || darwin

package vfs

import "golang.org/x/sys/unix"

// Space is the size of the file system holding dir and the bytes
// available on it to an unprivileged user, as Java's FileStore
// getTotalSpace and getUsableSpace report them.
func Space(dir string) (total, usable int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	bsize := int64(st.Bsize) // uint32 on darwin, int64 on linux
	return int64(st.Blocks) * bsize, int64(st.Bavail) * bsize, nil
}
