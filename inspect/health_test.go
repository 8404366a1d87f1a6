package inspect

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestPartitionProblems: a partition is healthy with a leader and an ISR
// of min.insync.replicas, or of all its replicas when it has fewer; a
// replica not among the brokers is added to the nodes to check.
func TestPartitionProblems(t *testing.T) {
	md := kadm.Metadata{Topics: kadm.TopicDetails{
		"a": {Topic: "a", Partitions: kadm.PartitionDetails{
			0: {Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}}, // at min.insync.replicas
			1: {Partition: 1, Leader: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{2}},    // under
			2: {Partition: 2, Leader: -1, Replicas: []int32{1, 2, 3}, ISR: []int32{}},    // no leader
		}},
		"one": {Topic: "one", Partitions: kadm.PartitionDetails{0: {Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}},    // full
		"cfg": {Topic: "cfg", Partitions: kadm.PartitionDetails{0: {Leader: 4, Replicas: []int32{1, 4}, ISR: []int32{4}}}}, // min.insync.replicas unknown: 1
	}}
	nodes := map[int32]*NodeHealth{1: {NodeID: 1}, 2: {NodeID: 2}, 3: {NodeID: 3}}
	n, bad := partitionProblems(md, map[string]int{"a": 2, "one": 2}, nodes)
	want := []string{
		"a/1 has ISR [2] of replicas [1 2 3], under min.insync.replicas 2",
		"a/2 has no leader (replicas [1 2 3])",
	}
	if n != 5 || !slices.Equal(bad, want) {
		t.Errorf("partitionProblems = %d, %q; want 5, %q", n, bad, want)
	}
	if nodes[4] == nil || nodes[4].Address != "" {
		t.Errorf("replica 4 not added to the nodes: %+v", nodes)
	}
}
