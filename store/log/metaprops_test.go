package log

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/klogdev/klog/store/vfs"
)

// TestCheckMetaProperties: a data directory without meta.properties gets
// one; the same cluster and node pass; another cluster or node is refused
// with ErrNotThisCluster naming the directory, the file left as it was.
func TestCheckMetaProperties(t *testing.T) {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("/data"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetaProperties(fsys, "/data"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of a missing file: %v", err)
	}
	if err := CheckMetaProperties(fsys, "/data", "clusterA", 1); err != nil {
		t.Fatal(err)
	}
	if err := CheckMetaProperties(fsys, "/data", "clusterA", 1); err != nil {
		t.Fatalf("same cluster and node refused: %v", err)
	}
	for _, tc := range []struct {
		cluster string
		node    int32
		says    string
	}{{"clusterB", 1, "cluster clusterA"}, {"clusterA", 2, "node 1"}} {
		err := CheckMetaProperties(fsys, "/data", tc.cluster, tc.node)
		if !errors.Is(err, ErrNotThisCluster) || !strings.Contains(err.Error(), "/data") || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("cluster %s node %d: %v", tc.cluster, tc.node, err)
		}
	}
	if p, err := ReadMetaProperties(fsys, "/data"); err != nil || p != (MetaProperties{ClusterID: "clusterA", NodeID: 1}) {
		t.Errorf("meta.properties now %+v %v", p, err)
	}

	// As Kafka writes it.
	kafka := "#\n#Mon Dec 07 02:00:00 UTC 2026\nnode.id=3\ndirectory.id=pZ4dgVwTQq2aQlRG1tCwAA\nversion=1\ncluster.id=4L6g3nShT-eMCtK--X86sw\n"
	if err := writeFileAtomic(fsys, "/data/"+MetaPropertiesFile, []byte(kafka)); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadMetaProperties(fsys, "/data"); err != nil || p != (MetaProperties{ClusterID: "4L6g3nShT-eMCtK--X86sw", NodeID: 3}) {
		t.Errorf("Kafka's meta.properties read as %+v %v", p, err)
	}
	if err := writeFileAtomic(fsys, "/data/"+MetaPropertiesFile, []byte("version=1\nnode.id=3\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetaProperties(fsys, "/data"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("meta.properties without cluster.id: %v", err)
	}
}
