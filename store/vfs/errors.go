package vfs

import "errors"

// ErrClosed is returned by operations on a File that was already closed.
var ErrClosed = errors.New("vfs: file already closed")

// ErrInjected is a convenience error for fault-injection hooks installed with
// (*MemFS).InjectError; any error works, this one is easy to match.
var ErrInjected = errors.New("vfs: injected fault")

// ErrNotDir is returned when a path used as a directory is a file, or a path
// used as a file is a directory.
var ErrNotDir = errors.New("vfs: not a directory")
