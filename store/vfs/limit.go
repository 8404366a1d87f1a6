package vfs

import (
	"fmt"
	"io/fs"
	"path"
	"sync"
)

// LimitFS is an FS that keeps at most a fixed number of the files of the FS
// under it open at once, however many Files its callers hold.
//
// A File from LimitFS is a handle: the file under it is opened on the
// handle's first operation after it was closed, and closed again when
// another handle needs its slot and this one is the least recently used.
// A file with writes not yet synced is only closed when no idle file is
// clean, and it is synced first; an error of that sync is sticky: the
// handle's next Write, WriteAt, Truncate or Sync returns it. Each operation
// holds its file open only while it runs, so an operation waits for a slot
// at most as long as one operation on another file takes.
//
// A handle reopens its file by name, with Open. Rename through the LimitFS
// carries the open handles of the old name over to the new one (log
// compaction renames the files of segments readers may still hold), so a
// handle follows its file; a removed file cannot be reopened (the
// handle's operations then fail with an error wrapping fs.ErrNotExist, as
// Open would). Everything but Create, Open and Rename goes straight to the
// FS under it.
//
// Lock order: LimitFS.mu, then nothing: no file operation runs under it.
type LimitFS struct {
	fs  FS
	max int

	mu struct {
		sync.Mutex
		open int // files of fs open, being opened or being closed
		// idle handles whose file is open and not in use, most recently
		// used first; clean ones are closed before dirty ones.
		clean, dirty idleList
		// byName holds the handles not yet closed, by cleaned name, for
		// Rename.
		byName map[string][]*limitFile
	}
	freed sync.Cond // a slot or a handle became available; L is &mu
}

var _ FS = (*LimitFS)(nil)

// LimitOpen returns an FS over fsys that keeps at most maxOpen files of
// fsys open at once; maxOpen below 1 counts as 1.
func LimitOpen(fsys FS, maxOpen int) *LimitFS {
	l := &LimitFS{fs: fsys, max: max(maxOpen, 1)}
	l.mu.byName = map[string][]*limitFile{}
	l.freed.L = &l.mu
	return l
}

// MaxOpen returns the limit.
func (l *LimitFS) MaxOpen() int { return l.max }

// Open implements FS. The file is opened at once, so that a missing file
// fails here, and may be closed underneath as soon as Open returns.
func (l *LimitFS) Open(name string) (File, error) {
	return l.handle(name, l.fs.Open)
}

// Create implements FS. Like Open, the file may be closed underneath as
// soon as Create returns; a new file has nothing to sync, and a truncated
// one is no more durable than under the FS below until its owner syncs it.
func (l *LimitFS) Create(name string) (File, error) {
	return l.handle(name, l.fs.Create)
}

// OpenFiles returns how many files of the FS under l are open now.
func (l *LimitFS) OpenFiles() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.open
}

func (l *LimitFS) handle(name string, open func(string) (File, error)) (File, error) {
	h := &limitFile{fs: l, name: path.Clean(name)}
	if _, err := h.acquire(open, false); err != nil {
		return nil, err
	}
	h.release(false, nil)
	l.mu.Lock()
	if !h.closed {
		l.mu.byName[h.name] = append(l.mu.byName[h.name], h)
	}
	l.mu.Unlock()
	return h, nil
}

// forgetLocked drops h from byName.
func (l *LimitFS) forgetLocked(h *limitFile) {
	hs := l.mu.byName[h.name]
	for i, o := range hs {
		if o == h {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(l.mu.byName, h.name)
	} else {
		l.mu.byName[h.name] = hs
	}
}

// Remove implements FS.
func (l *LimitFS) Remove(name string) error { return l.fs.Remove(name) }

// RemoveAll implements FS.
func (l *LimitFS) RemoveAll(dir string) error { return l.fs.RemoveAll(dir) }

// Rename implements FS. Handles open on oldname reopen newname from then
// on. Handles open on newname, when the rename replaces a file, would
// reopen the new file: rename such a file away first (the cleaner's swap
// does).
func (l *LimitFS) Rename(oldname, newname string) error {
	// l.mu is held across the rename so that no handle reopens by the old
	// name in between; the FS under it takes no lock of ours.
	oldname, newname = path.Clean(oldname), path.Clean(newname)
	l.mu.Lock()
	defer l.mu.Unlock()
	// A handle being opened or closed has read its name already: wait.
	for busy := true; busy; {
		busy = false
		for _, h := range l.mu.byName[oldname] {
			busy = busy || h.busy
		}
		if busy {
			l.freed.Wait()
		}
	}
	if err := l.fs.Rename(oldname, newname); err != nil {
		return err
	}
	if oldname == newname {
		return nil
	}
	moved := l.mu.byName[oldname]
	delete(l.mu.byName, oldname)
	for _, h := range moved {
		h.name = newname
	}
	if len(moved) > 0 {
		l.mu.byName[newname] = append(l.mu.byName[newname], moved...)
	}
	return nil
}

// MkdirAll implements FS.
func (l *LimitFS) MkdirAll(dir string) error { return l.fs.MkdirAll(dir) }

// List implements FS.
func (l *LimitFS) List(dir string) ([]string, error) { return l.fs.List(dir) }

// Stat implements FS.
func (l *LimitFS) Stat(name string) (fs.FileInfo, error) { return l.fs.Stat(name) }

// SyncDir implements FS.
func (l *LimitFS) SyncDir(dir string) error { return l.fs.SyncDir(dir) }

// closeIdleLocked closes the least recently used idle file, a clean one if
// there is one; false when every open file is in use. It drops l.mu while
// it syncs and closes.
func (l *LimitFS) closeIdleLocked() bool {
	h := l.mu.clean.tail
	if h == nil {
		h = l.mu.dirty.tail
	}
	if h == nil {
		return false
	}
	h.leaveIdleLocked()
	h.busy = true
	f, dirty, name := h.f, h.dirty, h.name
	l.mu.Unlock()
	var err error
	if dirty {
		if err = f.Sync(); err != nil {
			err = fmt.Errorf("sync %s before closing it: %w", name, err)
		}
	}
	if cerr := f.Close(); cerr != nil && dirty && err == nil {
		err = fmt.Errorf("close %s: %w", name, cerr)
	}
	l.mu.Lock()
	h.f, h.busy = nil, false
	if err != nil && h.err == nil {
		h.err = err
	}
	if err == nil {
		h.dirty = false
	}
	l.mu.open--
	l.freed.Broadcast()
	return true
}

// limitFile is a handle of a LimitFS. Its fields are guarded by fs.mu.
type limitFile struct {
	fs   *LimitFS
	name string

	f      File       // nil while the file is closed underneath
	pins   int        // operations running on f
	busy   bool       // f is being opened or closed
	idle   *idleList  // fs.mu.clean or fs.mu.dirty while idle and open
	prev   *limitFile // towards the head of idle
	next   *limitFile // towards the tail of idle
	dirty  bool       // written since the last successful sync
	writes uint64     // writes released so far, so that a sync running beside a write leaves it dirty
	closed bool       // Close was called
	err    error      // sticky: syncing f before closing it failed
}

// acquire returns the open file, opening it (with open, or fs.Open when
// nil) when it is closed, and pins it until release. A writing operation
// gets the sticky error instead.
func (h *limitFile) acquire(open func(string) (File, error), write bool) (File, error) {
	l := h.fs
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		switch {
		case h.closed:
			return nil, ErrClosed
		case write && h.err != nil:
			return nil, h.err
		case h.busy:
			l.freed.Wait()
			continue
		case h.f != nil:
			h.leaveIdleLocked()
			h.pins++
			return h.f, nil
		case l.mu.open < l.max:
			l.mu.open++
			h.busy = true
			if open == nil {
				open = l.fs.Open
			}
			name := h.name
			l.mu.Unlock()
			f, err := open(name)
			l.mu.Lock()
			h.busy = false
			l.freed.Broadcast()
			if err != nil {
				l.mu.open--
				return nil, err
			}
			h.f = f
			h.pins++
			return f, nil
		case !l.closeIdleLocked():
			l.freed.Wait()
		}
	}
}

// leaveIdleLocked takes the handle off its idle list, if it is on one.
func (h *limitFile) leaveIdleLocked() {
	if h.idle != nil {
		h.idle.remove(h)
	}
}

// release unpins the file; wrote marks it dirty. syncedAt, when not
// nil, is the count of writes a successful sync started after: the file
// is clean unless a write was released since.
func (h *limitFile) release(wrote bool, syncedAt *uint64) {
	l := h.fs
	l.mu.Lock()
	defer l.mu.Unlock()
	h.pins--
	if wrote {
		h.dirty = true
		h.writes++
	}
	if syncedAt != nil && *syncedAt == h.writes {
		h.dirty = false
	}
	if h.pins > 0 || h.f == nil {
		return
	}
	if h.closed {
		l.freed.Broadcast() // Close waits for the last operation
		return
	}
	if h.dirty {
		l.mu.dirty.pushFront(h)
	} else {
		l.mu.clean.pushFront(h)
	}
	l.freed.Broadcast()
}

func (h *limitFile) ReadAt(p []byte, off int64) (int, error) {
	f, err := h.acquire(nil, false)
	if err != nil {
		return 0, err
	}
	defer h.release(false, nil)
	return f.ReadAt(p, off)
}

func (h *limitFile) WriteAt(p []byte, off int64) (int, error) {
	f, err := h.acquire(nil, true)
	if err != nil {
		return 0, err
	}
	defer h.release(true, nil)
	return f.WriteAt(p, off)
}

func (h *limitFile) Write(p []byte) (int, error) {
	f, err := h.acquire(nil, true)
	if err != nil {
		return 0, err
	}
	defer h.release(true, nil)
	return f.Write(p)
}

func (h *limitFile) Truncate(size int64) error {
	f, err := h.acquire(nil, true)
	if err != nil {
		return err
	}
	defer h.release(true, nil)
	return f.Truncate(size)
}

func (h *limitFile) Sync() error {
	f, err := h.acquire(nil, true)
	if err != nil {
		return err
	}
	h.fs.mu.Lock()
	at := h.writes
	h.fs.mu.Unlock()
	if err = f.Sync(); err != nil {
		h.release(false, nil)
		return err
	}
	h.release(false, &at)
	return nil
}

func (h *limitFile) Size() (int64, error) {
	f, err := h.acquire(nil, false)
	if err != nil {
		return 0, err
	}
	defer h.release(false, nil)
	return f.Size()
}

// Close closes the handle, and its file when open, once the operations
// running on it finished. It does not sync.
func (h *limitFile) Close() error {
	l := h.fs
	l.mu.Lock()
	if h.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	h.closed = true
	l.forgetLocked(h)
	for h.busy || h.pins > 0 {
		l.freed.Wait()
	}
	f := h.f
	h.f = nil
	h.leaveIdleLocked()
	l.mu.Unlock()
	if f == nil {
		return nil
	}
	err := f.Close()
	l.mu.Lock()
	l.mu.open--
	l.freed.Broadcast()
	l.mu.Unlock()
	return err
}

// idleList is a list of idle handles, most recently used at the head. It
// is intrusive, so that a handle going idle allocates nothing.
type idleList struct{ head, tail *limitFile }

func (q *idleList) pushFront(h *limitFile) {
	h.idle, h.prev, h.next = q, nil, q.head
	if q.head != nil {
		q.head.prev = h
	} else {
		q.tail = h
	}
	q.head = h
}

func (q *idleList) remove(h *limitFile) {
	if h.prev != nil {
		h.prev.next = h.next
	} else {
		q.head = h.next
	}
	if h.next != nil {
		h.next.prev = h.prev
	} else {
		q.tail = h.prev
	}
	h.idle, h.prev, h.next = nil, nil, nil
}
