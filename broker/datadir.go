package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/vfs"
)

// Start-up checks of a node's data directory. The cluster's metadata (the
// topics, their IDs, the producer ID blocks handed out) lives in the Raft
// store under raft/; the partition logs beside it are the data of that
// cluster, and meta.properties says which cluster and node they belong
// to. A node must not start a new cluster over another's logs: the new
// topics would meet the old logs and the new producer IDs the old
// producers' state.

// ErrMetadataStoreMissing is returned by Start when the data directory
// holds partition logs, or names its cluster, but has no Raft store: the
// node would otherwise form a new cluster over them.
var ErrMetadataStoreMissing = errors.New("metadata store missing")

// checkRaftStoreKept refuses a data directory whose Raft store, raft.db, is
// missing or empty while the directory holds partition logs or a
// meta.properties.
func checkRaftStoreKept(fsys vfs.FS, dataDir string) error {
	db := filepath.Join(dataDir, controller.RaftDBFile)
	if st, err := fsys.Stat(db); err == nil && st.Size() > 0 {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("broker: %w", err)
	}
	if _, err := fsys.Stat(dataDir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	parts, err := log.PartitionDirs(fsys, dataDir)
	if err != nil {
		return err
	}
	meta, metaErr := log.ReadMetaProperties(fsys, dataDir)
	if len(parts) == 0 && errors.Is(metaErr, fs.ErrNotExist) {
		return nil
	}
	whose := "an earlier cluster"
	if metaErr == nil {
		whose = "cluster " + meta.ClusterID
	}
	held := log.MetaPropertiesFile
	if len(parts) == 1 {
		held = "the partition log " + parts[0]
	} else if len(parts) > 1 {
		held = fmt.Sprintf("%d partition logs (%s, ...)", len(parts), strings.Join(parts[:min(3, len(parts))], ", "))
	}
	return fmt.Errorf("%w: %s holds %s of %s, but its metadata store %s is missing or empty, "+
		"and starting would form a new cluster over that data; restore %s from a backup, or move the data directory aside to start afresh",
		ErrMetadataStoreMissing, dataDir, held, whose, db, filepath.Dir(db))
}

// topicIDs returns the topic IDs of img, for log.ManagerOptions.TopicID.
func topicIDs(img *metadata.Image) func(string) ([16]byte, bool) {
	return func(topic string) ([16]byte, bool) {
		t, ok := img.Topic(topic)
		if !ok {
			return [16]byte{}, false
		}
		return t.ID, true
	}
}

// uncleanShutdown reports whether the data directory dir holds data left
// without the clean-shutdown marker its logs' Close writes: the node's
// last run was killed or crashed, and recovery may cut its logs short.
// It is read before the logs open (and remove the marker), for the
// node's registration. An empty or new directory is not unclean.
func uncleanShutdown(fs vfs.FS, dir string) bool {
	names, err := fs.List(dir)
	if err != nil || len(names) == 0 {
		return false
	}
	_, err = fs.Stat(path.Join(dir, log.CleanShutdownFile))
	return err != nil
}
