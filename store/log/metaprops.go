package log

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/klogdev/klog/store/vfs"
)

// MetaPropertiesFile, at the top of a data directory, names the cluster
// and the node the directory belongs to, as Kafka's meta.properties does.
const MetaPropertiesFile = "meta.properties"

// ErrNotThisCluster means a data directory belongs to another cluster or
// node than the one opening it: its meta.properties says so. Kafka
// refuses to start on it (InconsistentClusterIdException).
var ErrNotThisCluster = errors.New("data directory belongs to another cluster")

// MetaProperties is the content of meta.properties:
//
//	version=1
//	cluster.id=q1Sh-9_ISia_zwGINzRvyQ
//	node.id=1
//
// Lines starting with '#' and blank lines are ignored, as are keys klog
// does not use (Kafka's directory.id).
type MetaProperties struct {
	ClusterID string
	NodeID    int32
}

// ReadMetaProperties reads dir's meta.properties: fs.ErrNotExist when it
// has none, ErrCorrupt when it is unreadable.
func ReadMetaProperties(fsys vfs.FS, dir string) (MetaProperties, error) {
	name := path.Join(dir, MetaPropertiesFile)
	b, err := readFile(fsys, name, 4096)
	if err != nil {
		return MetaProperties{}, err
	}
	kv := map[string]string{}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return MetaProperties{}, fmt.Errorf("%w: %s: line %q", ErrCorrupt, name, line)
		}
		kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	id, err := strconv.ParseInt(kv["node.id"], 10, 32)
	if kv["version"] != "1" || kv["cluster.id"] == "" || err != nil {
		return MetaProperties{}, fmt.Errorf("%w: %s: want version=1, a cluster.id and a node.id", ErrCorrupt, name)
	}
	return MetaProperties{ClusterID: kv["cluster.id"], NodeID: int32(id)}, nil
}

// WriteMetaProperties replaces dir's meta.properties with p, durably.
func WriteMetaProperties(fsys vfs.FS, dir string, p MetaProperties) error {
	b := fmt.Appendf(nil, "version=1\ncluster.id=%s\nnode.id=%d\n", p.ClusterID, p.NodeID)
	return writeFileAtomic(fsys, path.Join(dir, MetaPropertiesFile), b)
}

// CheckMetaProperties refuses the data directory dir for cluster
// clusterID and node nodeID when its meta.properties names another
// (ErrNotThisCluster), and writes one when it has none.
func CheckMetaProperties(fsys vfs.FS, dir, clusterID string, nodeID int32) error {
	p, err := ReadMetaProperties(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return WriteMetaProperties(fsys, dir, MetaProperties{ClusterID: clusterID, NodeID: nodeID})
	}
	if err != nil {
		return err
	}
	if p.ClusterID != clusterID {
		return fmt.Errorf("%w: %s holds cluster %s's data (%s), but the metadata store is of cluster %s; "+
			"start the node with the data directory of its cluster, or move this one aside to start afresh",
			ErrNotThisCluster, dir, p.ClusterID, MetaPropertiesFile, clusterID)
	}
	if p.NodeID != nodeID {
		return fmt.Errorf("%w: %s holds node %d's data (%s), not node %d's; start node %d on it, or give node %d its own data directory",
			ErrNotThisCluster, dir, p.NodeID, MetaPropertiesFile, nodeID, p.NodeID, nodeID)
	}
	return nil
}

// PartitionDirs returns the names of the partition directories in dir
// ("<topic>-<partition>"), the logs OpenManager would open.
func PartitionDirs(fsys vfs.FS, dir string) ([]string, error) {
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("list data dir %s: %w", dir, err)
	}
	var out []string
	for _, n := range names {
		if _, ok := parsePartitionDir(n); !ok {
			continue
		}
		if st, err := fsys.Stat(path.Join(dir, n)); err != nil || !st.IsDir() {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}
