package broker_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/testkit"
)

// DescribeLogDirs on three nodes, as kadm's DescribeAllLogDirs (and
// kafka-log-dirs.sh --describe) asks every broker: each node answers its
// own data directory with every replica it holds, leader or follower, its
// size (the same on every replica once the followers caught up: their logs
// are byte-identical), offset lag 0 (Kafka's max(HW - LEO, 0) of the
// node's own replica, which only a future replica could make positive)
// and IsFuture false; a replica the node does not hold is not listed, also
// when asked for by name.
func TestDescribeLogDirsCluster(t *testing.T) {
	q := newQuorum(t, 3, nil)
	ctx := testkit.Context(t)
	const rf3, rf1 = "dirs-rf3", "dirs-rf1"
	mt := replicatedTopic(t, ctx, q.nodes, rf3)
	cl := q.client(0)
	q.createTopic(ctx, cl, rf1, 0, 1, 2)
	r := dialRaw(t, q.nodes[mt.Partitions[0].Leader].Advertised())
	for range 3 {
		if got := produceTo(t, r, mt, -1, 10000, rawBatch("a", "b", "c")); got.ErrorCode != 0 {
			t.Fatalf("produce to %s: %v", rf3, kerr.ErrorForCode(got.ErrorCode))
		}
	}
	pcl := q.client(0, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(3) {
		if err := pcl.ProduceSync(ctx, &kgo.Record{Topic: rf1, Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce to %s/%d: %v", rf1, p, err)
		}
	}
	testkit.WaitFor(t, "every replica of "+rf3+" at offset 9", func() (bool, string) {
		for i, n := range q.nodes {
			if end := n.PartitionForTest(rf3, 0).LogEndOffset(); end != 9 {
				return false, fmt.Sprintf("node %d at %d", i, end)
			}
		}
		return true, ""
	})

	adm := kadm.NewClient(cl)
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("log dirs of brokers %v, want 0, 1, 2", all)
	}
	size := q.nodes[mt.Partitions[0].Leader].PartitionForTest(rf3, 0).Size()
	for i := range int32(3) {
		want, err := filepath.Abs(q.cfgs[i].DataDir)
		if err != nil {
			t.Fatal(err)
		}
		dirs := all[i]
		d, ok := dirs[want]
		if len(dirs) != 1 || !ok || d.Err != nil || d.TotalBytes <= 0 || d.UsableBytes <= 0 {
			t.Fatalf("node %d: dirs %v, want one, %s", i, dirs, want)
		}
		dp, ok := dirs.Lookup(want, rf3, 0)
		if !ok || dp.Size != size || size <= 0 || dp.OffsetLag != 0 || dp.IsFuture {
			t.Errorf("node %d: %s/0 listed %v as %+v, want size %d, lag 0, not future", i, rf3, ok, dp, size)
		}
		for p := range int32(3) {
			dp, ok := dirs.Lookup(want, rf1, p)
			if ok != (p == i) || ok && (dp.Size <= 0 || dp.OffsetLag != 0 || dp.IsFuture) {
				t.Errorf("node %d: %s/%d listed %v as %+v; only node %d holds it", i, rf1, p, ok, dp, p)
			}
		}
	}

	// Asked by name: only the node holding the replica lists it.
	some, err := adm.DescribeAllLogDirs(ctx, kadm.TopicsSet{rf1: {1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range int32(3) {
		want, err := filepath.Abs(q.cfgs[i].DataDir)
		if err != nil {
			t.Fatal(err)
		}
		topics := 0
		for _, d := range some[i] {
			topics += len(d.Topics)
		}
		_, ok := some[i].Lookup(want, rf1, 1)
		if holds := i == 1; ok != holds || topics != map[bool]int{true: 1, false: 0}[holds] {
			t.Errorf("node %d asked for %s/1: %d topics, %s/1 listed %v", i, rf1, topics, rf1, ok)
		}
	}

	// AlterReplicaLogDirs to a node's own directory: its replica is
	// there; a partition it holds no replica of is REPLICA_NOT_AVAILABLE,
	// Kafka's answer to NOT_LEADER_OR_FOLLOWER for this API.
	dir0, err := filepath.Abs(q.cfgs[0].DataDir)
	if err != nil {
		t.Fatal(err)
	}
	alter, err := adm.AlterBrokerReplicaLogDirs(ctx, 0, kadm.AlterReplicaLogDirsReq{dir0: {rf1: {0: {}, 1: {}}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int32]error{0: nil, 1: kerr.ReplicaNotAvailable} {
		if r, ok := alter[rf1][i]; !ok || !errors.Is(r.Err, want) {
			t.Errorf("node 0: move %s/%d to its own directory: %+v (listed %v), want %v", rf1, i, r, ok, want)
		}
	}
}
