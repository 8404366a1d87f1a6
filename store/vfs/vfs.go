// Package vfs is the small file-system interface under klog's storage.
//
// The partition log (store/log) only touches files through FS and File, so
// the same code runs on the real file system (OS) and on an in-memory one
// (NewMem) that can simulate a crash — keep only what was made durable — and
// inject errors into any operation. LimitOpen wraps either so that at most
// a given number of files are open underneath at once. vfs imports nothing
// from klog.
//
// File semantics shared by both implementations:
//
//   - Write appends at the end of the file (not at a seek position); a file
//     has a single writer. ReadAt may run concurrently with Write.
//   - Truncate(n) changes the size; the next Write continues at n.
//   - Sync makes the file's data durable. It does not make the file's name
//     durable: creating, renaming or removing a file becomes durable once
//     SyncDir ran on its parent directory.
//   - Errors for missing files wrap fs.ErrNotExist, so errors.Is works.
package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// FS is the set of file-system operations klog's storage uses.
type FS interface {
	// Create creates the named file or truncates an existing one, opened
	// read-write.
	Create(name string) (File, error)
	// Open opens an existing file read-write.
	Open(name string) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes a path and everything under it; a missing path is
	// not an error.
	RemoveAll(dir string) error
	// Rename renames a file, replacing the target if it exists.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and any missing parents.
	MkdirAll(dir string) error
	// List returns the base names of the entries in dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes the named file or directory.
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the directory's entries (creates, renames, removes of
	// its direct children) durable.
	SyncDir(dir string) error
}

// File is an open file. See the package doc for the write semantics.
type File interface {
	io.ReaderAt
	// WriteAt writes at an absolute position, extending the file if needed.
	io.WriterAt
	// Write appends p at the end of the file.
	Write(p []byte) (int, error)
	// Sync makes the file's data durable.
	Sync() error
	// Truncate sets the file's size.
	Truncate(size int64) error
	// Size returns the current size.
	Size() (int64, error)
	// Close releases the file.
	Close() error
}

// OS returns the real file system.
func OS() FS { return osFS{} }

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if st.IsDir() {
		_ = f.Close()
		return nil, fmt.Errorf("open %s: %w", name, ErrNotDir)
	}
	return &osFile{f: f, end: st.Size()}, nil
}

func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) RemoveAll(dir string) error           { return os.RemoveAll(dir) }
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string) error            { return os.MkdirAll(dir, 0o755) }
func (osFS) Stat(name string) (fs.FileInfo, error) {
	return os.Stat(name)
}

func (osFS) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

// osFile tracks the end of the file itself so that Write is a single pwrite
// at the end while WriteAt stays usable (O_APPEND forbids WriteAt).
//
// Appends also reserve disk blocks ahead of the end of the file (see
// preallocate), in steps that grow with the file from 64 KiB to 8 MiB, so a
// small file wastes little and a large one allocates rarely.
type osFile struct {
	f        *os.File
	end      int64 // only touched by the single writer
	reserved int64 // blocks are reserved up to here
}

const (
	minReserve = 64 << 10
	maxReserve = 8 << 20
)

func (o *osFile) reserve(upTo int64) {
	if upTo <= o.reserved {
		return
	}
	step := min(max(o.end, minReserve), maxReserve)
	from := max(o.reserved, o.end)
	n := max(upTo-from, step)
	preallocate(o.f, from, n)
	o.reserved = from + n
}

func (o *osFile) ReadAt(p []byte, off int64) (int, error) { return o.f.ReadAt(p, off) }

func (o *osFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := o.f.WriteAt(p, off)
	if e := off + int64(n); e > o.end {
		o.end = e
	}
	return n, err
}

func (o *osFile) Write(p []byte) (int, error) {
	o.reserve(o.end + int64(len(p)))
	n, err := o.f.WriteAt(p, o.end)
	o.end += int64(n)
	return n, err
}

func (o *osFile) Sync() error { return o.f.Sync() }

func (o *osFile) Truncate(size int64) error {
	if err := o.f.Truncate(size); err != nil {
		return err
	}
	o.end = size
	o.reserved = 0 // truncation may have released the reservation
	return nil
}

func (o *osFile) Size() (int64, error) {
	st, err := o.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (o *osFile) Close() error { return o.f.Close() }
