package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/vfs"
)

// TestLeaderPartition: the lookup the partition handlers share answers
// UNKNOWN_TOPIC_OR_PARTITION for what the metadata image does not have and
// NOT_LEADER_OR_FOLLOWER for a partition this node does not lead.
func TestLeaderPartition(t *testing.T) {
	const self, other = 1, 2
	img := metadata.Empty()
	img.Topics["t"] = &metadata.Topic{Name: "t", ID: [16]byte{1}, Partitions: []metadata.Partition{
		{Index: 0, Leader: self, Replicas: []int32{self}},         // led here
		{Index: 1, Leader: other, Replicas: []int32{self, other}}, // followed here
		{Index: 2, Leader: other, Replicas: []int32{other}},       // no replica here
		{Index: 3, Leader: self, Replicas: []int32{self}},         // not opened yet
	}}
	img.TopicIDs[[16]byte{1}] = "t"

	n := &Node{}
	n.mu.parts = make(map[partitionKey]*partition.Partition)
	local := func(index, leader int32) *partition.Partition {
		l, err := log.Open(vfs.NewMem(), fmt.Sprintf("/t-%d", index), log.DefaultConfig(), log.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := l.Close(); err != nil {
				t.Error(err)
			}
		})
		p := partition.New("t", index, [16]byte{1}, l, partition.Options{ReplicaID: self})
		p.SetLeaderState(partition.LeaderState{Leader: leader, Replicas: []int32{self, other}})
		n.mu.parts[partitionKey{"t", index}] = p
		return p
	}
	leader := local(0, self)
	local(1, other)
	// A replica of a partition the image does not have, as reconcile may
	// leave behind for a moment: the image decides.
	local(9, self)

	for _, tc := range []struct {
		topic string
		index int32
		want  *partition.Partition
		err   *kerr.Error
	}{
		{"t", 0, leader, nil},
		{"t", 1, nil, kerr.NotLeaderForPartition},
		{"t", 2, nil, kerr.NotLeaderForPartition},
		{"t", 3, nil, kerr.NotLeaderForPartition},
		{"t", -1, nil, kerr.UnknownTopicOrPartition},
		{"t", 4, nil, kerr.UnknownTopicOrPartition},
		{"t", 9, nil, kerr.UnknownTopicOrPartition},
		{"missing", 0, nil, kerr.UnknownTopicOrPartition},
		{"", 0, nil, kerr.UnknownTopicOrPartition},
	} {
		p, err := n.leaderPartition(img, tc.topic, tc.index)
		if p != tc.want || err != tc.err {
			t.Errorf("leaderPartition(%q, %d) = %p, %v; want %p, %v", tc.topic, tc.index, p, err, tc.want, tc.err)
		}
	}
}
