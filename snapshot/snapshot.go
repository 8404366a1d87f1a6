// Package snapshot saves a klog up data directory under a name and puts
// it back: klog snapshot save and restore. A snapshot is a plain copy of
// the directory's files (segments, indexes, checkpoints, the Raft
// database, cluster.json) in klog's snapshot directory
// ($XDG_STATE_HOME/klog/snapshots) under NAME; left
// out, and left alone by Restore, are sockets (a supervisor's control
// socket) and the *.log files at the top (klog up --detach's output). Segments are appended in place, so files are copied,
// never linked.
//
// The copy is only as consistent as the directory is while it is taken:
// take it with every node stopped (SIGSTOP, as klog snapshot save does
// for a cluster, or not running), so that it holds what a process killed
// at that instant leaves, which a node recovers from on its next start.
// Package snapshot owns the copying; finding and stopping the nodes is
// the caller's (cmd/klog, through package supervisor).
package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrExists reports a save under a name already taken.
var ErrExists = errors.New("snapshot already exists")

// ErrNotFound reports a restore of a name never saved.
var ErrNotFound = errors.New("no such snapshot")

// ErrBadName reports a name that is not a plain file name.
var ErrBadName = errors.New("snapshot names are letters, digits, '.', '-' and '_'")

// Path is where snapshot name lives in root, klog's snapshot directory.
func Path(root, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
		return "", fmt.Errorf("%w: %q", ErrBadName, name)
	}
	return filepath.Join(root, name), nil
}

// Save copies dataDir to dir, which must not exist: into a temporary
// directory beside it, renamed to dir once whole.
func Save(dataDir, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".saving-")
	if err != nil {
		return err
	}
	if err := copyTree(dataDir, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("save %s: %w", dataDir, err)
	}
	// Its time is when the save completed, which List reports.
	now := time.Now()
	if err := os.Chtimes(tmp, now, now); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return nil
}

// Restore replaces the entries of dataDir that snapshot dir holds with
// its copies, and removes those it does not hold but for sockets (a
// running supervisor's control socket stays): dataDir ends as it was when
// dir was saved. The copy is made beside dataDir first, so a failed copy
// leaves dataDir as it was.
func Restore(dir, dataDir string) error {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrNotFound, dir)
		}
		return err
	}
	dataDir = filepath.Clean(dataDir)
	tmp, err := os.MkdirTemp(filepath.Dir(dataDir), "."+filepath.Base(dataDir)+".restoring-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(dir, tmp); err != nil {
		return fmt.Errorf("restore %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if skipped(e.Name(), e) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dataDir, e.Name())); err != nil {
			return err
		}
	}
	copied, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, e := range copied {
		if err := os.Rename(filepath.Join(tmp, e.Name()), filepath.Join(dataDir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Info describes one saved snapshot.
type Info struct {
	Name  string    `json:"name"`
	Saved time.Time `json:"saved"` // when its save completed
	Files int       `json:"files"`
	Bytes int64     `json:"bytes"`
}

// List returns the snapshots saved in root, by name; none when root does
// not exist. Saves in progress (or left by a save that failed) are not
// listed.
func List(root string) ([]Info, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		st, err := e.Info()
		if err != nil {
			continue // removed since ReadDir
		}
		info := Info{Name: e.Name(), Saved: st.ModTime()}
		err = filepath.WalkDir(filepath.Join(root, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			info.Files++
			info.Bytes += fi.Size()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", e.Name(), err)
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Delete removes snapshot dir.
func Delete(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrNotFound, dir)
		}
		return err
	}
	return os.RemoveAll(dir)
}

// skipped reports whether entry rel of a data directory is none of a
// snapshot's business: a socket, or output at the top.
func skipped(rel string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSocket != 0 {
		return true
	}
	return d.Type().IsRegular() && !strings.ContainsRune(rel, filepath.Separator) && filepath.Ext(rel) == ".log"
}

// copyTree copies the directories and regular files under from into to,
// which exists; other files and the skipped ones are left out.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil || rel == "." {
			return err
		}
		if skipped(rel, d) {
			return nil
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, dst)
		}
		return nil
	})
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
