package controller

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// RaftDBFile is the Raft log and stable store of a node with a data
// directory, relative to it.
var RaftDBFile = filepath.Join("raft", "raft.db")

// storeLockTimeout bounds the wait for another process's lock on raft.db:
// a second node started on the same data directory.
const storeLockTimeout = 2 * time.Second

// checkRaftDB refuses a raft.db that bbolt could not open safely, before
// raft-boltdb opens it. bbolt memory-maps the file and trusts its header
// (the meta pages): a file cut short, by a copy that stopped or a full
// disk, still has valid meta pages naming pages past its end, and reading
// them (the freelist, at open) kills the process with SIGBUS. So the file
// is first opened read-only, which reads only the meta pages, and the
// size the newer valid meta says the file has (Tx.Size, its page
// high-water mark times the page size) must fit in the file. A file with
// no valid meta page fails bbolt's own open. A missing or empty file is
// new: bbolt initialises it.
func checkRaftDB(path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && st.Size() == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	want, err := StoreSize(path)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("controller: %s is locked by another process: is another klog node running on this data directory?", path)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("controller: %w", err)
	}
	if err != nil {
		return storeDamaged(path, err)
	}
	if want > st.Size() {
		return storeDamaged(path, fmt.Errorf("the file is %d bytes but its header says it holds %d: it was cut short", st.Size(), want))
	}
	return nil
}

// StoreSize is the size the header of the Raft store at path (raft.db)
// says the file holds: its page high-water mark times its page size, read
// from the meta pages alone, with the file opened read-only.
func StoreSize(path string) (int64, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: storeLockTimeout})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	tx, err := db.Begin(false)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	return tx.Size(), nil
}

// storeDamaged is the error for a raft.db that cannot be used, saying
// what the operator can do.
func storeDamaged(path string, err error) error {
	return fmt.Errorf("%w: %s: %v; restore it (the whole raft directory) from a backup, or move the data directory aside to start this node afresh",
		ErrStoreDamaged, path, err)
}
