package log

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klogdev/klog/store/vfs"
)

// syncCountFS counts the fsyncs of .log files, and can hold each one
// until released, so that a test can pile appends up behind it.
type syncCountFS struct {
	vfs.FS
	logSyncs atomic.Int64
	hold     chan struct{} // when set, a .log sync waits to receive from it
	started  chan struct{} // and first says so here
}

type syncCountFile struct {
	vfs.File
	fs  *syncCountFS
	log bool
}

func (f *syncCountFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	return &syncCountFile{file, f, strings.HasSuffix(name, ".log")}, err
}

func (f *syncCountFS) Open(name string) (vfs.File, error) {
	file, err := f.FS.Open(name)
	return &syncCountFile{file, f, strings.HasSuffix(name, ".log")}, err
}

func (f *syncCountFile) Sync() error {
	if f.log {
		f.fs.logSyncs.Add(1)
		if f.fs.hold != nil {
			f.fs.started <- struct{}{}
			<-f.fs.hold
		}
	}
	return f.File.Sync()
}

// TestSyncToMakesAppendsDurable: records are durable once SyncTo covered
// them, and not before; the recovery point is left to Flush.
func TestSyncToMakesAppendsDurable(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	for range 3 {
		mustAppend(t, l, e.batch(2, 50), 0)
	}
	crashed, err := Open(e.fs.CrashClone(), "/data/t-0", e.cfg, Options{Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if got := crashed.EndOffset(); got != 0 {
		t.Fatalf("before SyncTo a crash kept %d records; the test's file system did not lose unsynced data", got)
	}
	crashed.Close()
	if err := l.SyncTo(6); err != nil {
		t.Fatal(err)
	}
	if l.Synced() != 6 || l.RecoveryPoint() != 0 {
		t.Fatalf("synced %d, recovery point %d; want 6 and 0", l.Synced(), l.RecoveryPoint())
	}
	crashed, err = Open(e.fs.CrashClone(), "/data/t-0", e.cfg, Options{Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer crashed.Close()
	if got := crashed.EndOffset(); got != 6 {
		t.Fatalf("after SyncTo(6) a crash kept %d records, want 6", got)
	}
	if err := l.SyncTo(7); err == nil {
		t.Fatal("SyncTo past the log end succeeded")
	}
}

// TestSyncToGroupCommit: appends made while a sync runs are covered by one
// more sync, however many writers wait for them.
func TestSyncToGroupCommit(t *testing.T) {
	e := newEnv(t)
	fsys := &syncCountFS{FS: e.fs}
	l, err := Open(fsys, "/data/t-0", e.cfg, Options{Now: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mustAppend(t, l, e.batch(1, 10), 0)
	// Hold the syncs from now on (set before any goroutine that syncs),
	// until the test ends.
	fsys.logSyncs.Store(0)
	fsys.hold, fsys.started = make(chan struct{}), make(chan struct{})
	defer func() { fsys.hold = nil }()
	first := make(chan error, 1)
	go func() { first <- l.SyncTo(1) }()
	<-fsys.started // the first sync runs, held

	// Twenty writers append and wait while it is held.
	const writers = 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		r := mustAppend(t, l, e.batch(1, 10), 0)
		wg.Go(func() { errs <- l.SyncTo(r.LastOffset + 1) })
	}
	// Let the first sync end, then the one that covers them all.
	fsys.hold <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case <-fsys.started:
		fsys.hold <- struct{}{}
	case <-time.After(10 * time.Second):
		t.Fatal("no second sync started")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := fsys.logSyncs.Load(); got != 2 {
		t.Fatalf("%d syncs of the .log for 21 waiting writers, want 2", got)
	}
	if l.Synced() != writers+1 {
		t.Fatalf("synced %d, want %d", l.Synced(), writers+1)
	}
}

// TestSyncToAfterTruncate: a sync that ran across a truncation does not
// count the records it removed as synced.
func TestSyncToAfterTruncate(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	defer l.Close()
	for range 4 {
		mustAppend(t, l, e.batch(1, 10), 0)
	}
	if err := l.SyncTo(4); err != nil {
		t.Fatal(err)
	}
	if err := l.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if l.Synced() != 2 {
		t.Fatalf("synced %d after truncating to 2", l.Synced())
	}
}
