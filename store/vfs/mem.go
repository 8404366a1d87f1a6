package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Op names a file-system operation, for error injection.
type Op int

// The operations an injection hook sees.
const (
	OpCreate Op = iota
	OpOpen
	OpRemove
	OpRemoveAll
	OpRename
	OpMkdirAll
	OpList
	OpStat
	OpSyncDir
	OpRead
	OpWrite
	OpSync
	OpTruncate
	OpClose
)

var opNames = [...]string{"create", "open", "remove", "removeall", "rename", "mkdirall", "list", "stat", "syncdir", "read", "write", "sync", "truncate", "close"}

func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// MemFS is an in-memory FS: for tests, and for nodes started in memory
// (klog up --memory, broker/brokertest).
//
// A file's bytes are kept in fixed-size chunks (memchunk.go): appends
// never copy what was written, Sync copies nothing, and a file's memory
// is released when it is truncated and synced, and when it is removed and
// nothing can read it any more (no open File, no name that a crash would
// keep). HeldBytes counts it.
//
// Durability rule (what CrashClone keeps):
//   - a file's data is durable up to its last File.Sync;
//   - a file name (create, rename, remove) is durable once SyncDir ran on
//     its parent directory;
//   - directories made by MkdirAll and removals by RemoveAll are durable at
//     once.
//
// Paths are cleaned with path.Clean; "a/b" and "a//b/" name the same file.
type MemFS struct {
	mu struct {
		sync.Mutex
		files   map[string]*memNode // current names
		durable map[string]*memNode // names that survive a crash
		dirs    map[string]bool
		inject  func(op Op, name string) error
	}
	open, peak atomic.Int64 // files open now, and the most open at once
	// held counts the bytes of file data m holds. It is apart from m so
	// that a node's cleanup can reach it without keeping m alive.
	held *atomic.Int64
}

// memNode is a file. Its data is released when the last reference goes:
// refs counts its names (current and durable) and its open Files.
type memNode struct {
	mu    sync.RWMutex
	d     *memData
	mtime time.Time
	refs  atomic.Int64
}

func (m *MemFS) newNode(mtime time.Time) *memNode {
	n := &memNode{d: &memData{held: m.held}, mtime: mtime}
	// A file system dropped with files in it (as tests do) still returns
	// their memory.
	runtime.AddCleanup(n, (*memData).release, n.d)
	return n
}

func (n *memNode) ref() { n.refs.Add(1) }

// unref drops a reference; the last one releases the data: nothing can
// reach the node again.
func (n *memNode) unref() {
	if n.refs.Add(-1) == 0 {
		n.mu.Lock()
		n.d.release()
		n.mu.Unlock()
	}
}

// HeldBytes returns the bytes of file data m holds: what its files' current
// and synced contents take, including files removed but still open.
func (m *MemFS) HeldBytes() int64 { return m.held.Load() }

// NewMem returns an empty in-memory file system holding the root "/" and ".".
func NewMem() *MemFS {
	m := &MemFS{held: new(atomic.Int64)}
	m.mu.files = map[string]*memNode{}
	m.mu.durable = map[string]*memNode{}
	m.mu.dirs = map[string]bool{".": true, "/": true}
	return m
}

var _ FS = (*MemFS)(nil)

// InjectError installs a hook called before every operation (including
// operations on open files); a non-nil result fails the operation with that
// error and leaves state untouched. nil removes the hook.
func (m *MemFS) InjectError(fn func(op Op, name string) error) {
	m.mu.Lock()
	m.mu.inject = fn
	m.mu.Unlock()
}

func (m *MemFS) check(op Op, name string) error {
	m.mu.Lock()
	fn := m.mu.inject
	m.mu.Unlock()
	if fn == nil {
		return nil
	}
	if err := fn(op, name); err != nil {
		return &fs.PathError{Op: op.String(), Path: name, Err: err}
	}
	return nil
}

// OpenFiles returns how many files are open now and the most that were
// open at once since NewMem.
func (m *MemFS) OpenFiles() (open, peak int) {
	return int(m.open.Load()), int(m.peak.Load())
}

func (m *MemFS) opened() {
	n := m.open.Add(1)
	for {
		p := m.peak.Load()
		if n <= p || m.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// CrashClone returns a new MemFS holding only what was durable: the names
// made durable by SyncDir, each with the bytes of its last Sync. The clone
// has no injection hook. Files open on m are unaffected.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	for d := range m.mu.dirs {
		c.mu.dirs[d] = true
	}
	copies := make(map[*memNode]*memNode, len(m.mu.durable))
	for name, n := range m.mu.durable {
		cn, ok := copies[n]
		if !ok {
			cn = c.newNode(time.Time{})
			n.mu.RLock()
			cn.d.chunks = cn.d.copyChunks(n.d.synced, map[*byte][]byte{})
			cn.d.size = n.d.syncedSize
			cn.mtime = n.mtime
			n.mu.RUnlock()
			cn.d.clearPast()
			cn.d.sync()
			copies[n] = cn
		}
		cn.refs.Add(2)
		c.mu.files[name] = cn
		c.mu.durable[name] = cn
	}
	return c
}

// Clone returns a new MemFS holding all of m as it is now: every name and
// every byte written, synced or not, with what is durable kept apart as in
// m. It is what a process killed at this instant leaves (the operating
// system still holds its writes); CrashClone is what a power loss leaves.
// The clone has no injection hook. Files open on m are unaffected.
func (m *MemFS) Clone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	for d := range m.mu.dirs {
		c.mu.dirs[d] = true
	}
	copies := make(map[*memNode]*memNode, len(m.mu.files))
	copyOf := func(n *memNode) *memNode {
		if cn, ok := copies[n]; ok {
			return cn
		}
		cn := c.newNode(time.Time{})
		n.mu.RLock()
		seen := map[*byte][]byte{}
		cn.d.chunks = cn.d.copyChunks(n.d.chunks, seen)
		cn.d.size = n.d.size
		cn.d.synced = cn.d.copyChunks(n.d.synced, seen)
		cn.d.syncedSize = n.d.syncedSize
		cn.mtime = n.mtime
		n.mu.RUnlock()
		copies[n] = cn
		return cn
	}
	for name, n := range m.mu.files {
		cn := copyOf(n)
		cn.ref()
		c.mu.files[name] = cn
	}
	for name, n := range m.mu.durable {
		cn := copyOf(n)
		cn.ref()
		c.mu.durable[name] = cn
	}
	return c
}

func clean(name string) string { return path.Clean(name) }

// inDir reports whether path.Dir(name) == dir for a cleaned name, without
// path.Dir's allocation: List and SyncDir ask it of every file.
func inDir(name, dir string) bool {
	i := strings.LastIndexByte(name, '/')
	switch {
	case i < 0:
		return dir == "."
	case i == 0:
		return dir == "/"
	}
	return name[:i] == dir
}

func (m *MemFS) parentExistsLocked(name string) error {
	dir := path.Dir(name)
	if !m.mu.dirs[dir] {
		return fs.ErrNotExist
	}
	return nil
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	name = clean(name)
	if err := m.check(OpCreate, name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.dirs[name] {
		return nil, &fs.PathError{Op: "create", Path: name, Err: ErrNotDir}
	}
	if err := m.parentExistsLocked(name); err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	n := m.mu.files[name]
	if n == nil {
		n = m.newNode(time.Now())
		n.ref()
		m.mu.files[name] = n
	} else {
		n.mu.Lock()
		n.d.truncate(0)
		n.mtime = time.Now()
		n.mu.Unlock()
	}
	m.opened()
	n.ref()
	return &memFile{fs: m, name: name, n: n}, nil
}

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) {
	name = clean(name)
	if err := m.check(OpOpen, name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.mu.files[name]
	if n == nil {
		if m.mu.dirs[name] {
			return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotDir}
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	m.opened()
	n.ref()
	return &memFile{fs: m, name: name, n: n}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	name = clean(name)
	if err := m.check(OpRemove, name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.mu.files[name]; ok {
		delete(m.mu.files, name)
		n.unref()
		return nil
	}
	if m.mu.dirs[name] {
		if len(m.childrenLocked(name)) > 0 {
			return &fs.PathError{Op: "remove", Path: name, Err: fmt.Errorf("directory not empty")}
		}
		delete(m.mu.dirs, name)
		return nil
	}
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || (dir == "/" && strings.HasPrefix(p, "/"))
}

// RemoveAll implements FS.
func (m *MemFS) RemoveAll(dir string) error {
	dir = clean(dir)
	if err := m.check(OpRemoveAll, dir); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, n := range m.mu.files {
		if under(name, dir) {
			delete(m.mu.files, name)
			n.unref()
		}
	}
	for name, n := range m.mu.durable {
		if under(name, dir) {
			delete(m.mu.durable, name)
			n.unref()
		}
	}
	for d := range m.mu.dirs {
		if under(d, dir) && d != "." && d != "/" {
			delete(m.mu.dirs, d)
		}
	}
	return nil
}

// Rename implements FS (files only).
func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	if err := m.check(OpRename, oldname); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.mu.files[oldname]
	if n == nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	if err := m.parentExistsLocked(newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if m.mu.dirs[newname] {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: ErrNotDir}
	}
	if old := m.mu.files[newname]; old != nil && old != n {
		old.unref()
	}
	delete(m.mu.files, oldname)
	m.mu.files[newname] = n
	return nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string) error {
	dir = clean(dir)
	if err := m.check(OpMkdirAll, dir); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; ; d = path.Dir(d) {
		if _, ok := m.mu.files[d]; ok {
			return &fs.PathError{Op: "mkdir", Path: d, Err: ErrNotDir}
		}
		if d == "." || d == "/" {
			break
		}
	}
	for d := dir; !m.mu.dirs[d]; d = path.Dir(d) {
		m.mu.dirs[d] = true
	}
	return nil
}

func (m *MemFS) childrenLocked(dir string) []string {
	var names []string
	for name := range m.mu.files {
		if inDir(name, dir) {
			names = append(names, path.Base(name))
		}
	}
	for d := range m.mu.dirs {
		if d != dir && inDir(d, dir) {
			names = append(names, path.Base(d))
		}
	}
	return names
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	dir = clean(dir)
	if err := m.check(OpList, dir); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.dirs[dir] {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
	}
	names := m.childrenLocked(dir)
	sort.Strings(names)
	return names, nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (fs.FileInfo, error) {
	name = clean(name)
	if err := m.check(OpStat, name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.mu.files[name]; n != nil {
		n.mu.RLock()
		defer n.mu.RUnlock()
		return memInfo{name: path.Base(name), size: n.d.size, mtime: n.mtime}, nil
	}
	if m.mu.dirs[name] {
		return memInfo{name: path.Base(name), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// SyncDir implements FS.
func (m *MemFS) SyncDir(dir string) error {
	dir = clean(dir)
	if err := m.check(OpSyncDir, dir); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.dirs[dir] {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: fs.ErrNotExist}
	}
	for name, n := range m.mu.durable {
		if inDir(name, dir) && m.mu.files[name] == nil {
			delete(m.mu.durable, name)
			n.unref()
		}
	}
	for name, n := range m.mu.files {
		if inDir(name, dir) {
			if old := m.mu.durable[name]; old != n {
				n.ref()
				if old != nil {
					old.unref()
				}
				m.mu.durable[name] = n
			}
		}
	}
	return nil
}

type memInfo struct {
	name  string
	size  int64
	dir   bool
	mtime time.Time
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return i.mtime }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

type memFile struct {
	fs     *MemFS
	name   string
	n      *memNode
	closed atomic.Bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, ErrClosed
	}
	if err := f.fs.check(OpRead, f.name); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	f.n.mu.RLock()
	defer f.n.mu.RUnlock()
	if off >= f.n.d.size {
		return 0, io.EOF
	}
	n := f.n.d.readAt(p, off)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, ErrClosed
	}
	if err := f.fs.check(OpWrite, f.name); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrInvalid}
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.d.writeAt(p, off)
	f.n.mtime = time.Now()
	return len(p), nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if f.closed.Load() {
		return 0, ErrClosed
	}
	if err := f.fs.check(OpWrite, f.name); err != nil {
		return 0, err
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.d.writeAt(p, f.n.d.size)
	f.n.mtime = time.Now()
	return len(p), nil
}

func (f *memFile) Sync() error {
	if f.closed.Load() {
		return ErrClosed
	}
	if err := f.fs.check(OpSync, f.name); err != nil {
		return err
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.d.sync()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	if f.closed.Load() {
		return ErrClosed
	}
	if err := f.fs.check(OpTruncate, f.name); err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrInvalid}
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.d.truncate(size)
	return nil
}

func (f *memFile) Size() (int64, error) {
	if f.closed.Load() {
		return 0, ErrClosed
	}
	f.n.mu.RLock()
	defer f.n.mu.RUnlock()
	return f.n.d.size, nil
}

func (f *memFile) Close() error {
	if f.closed.Load() {
		return ErrClosed
	}
	if err := f.fs.check(OpClose, f.name); err != nil {
		return err
	}
	if f.closed.Swap(true) {
		return ErrClosed
	}
	f.fs.open.Add(-1)
	f.n.unref()
	return nil
}
