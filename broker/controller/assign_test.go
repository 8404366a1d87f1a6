package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
)

// TestManualAssignment checks CreatePartitions and CreateTopics with
// replicas assigned by hand: the partitions get them in order, the first
// leading, and each bad assignment Kafka's code and message.
func TestManualAssignment(t *testing.T) {
	c := start(t, testConfig(t, ""))
	ctx := ctxT(t)
	withBrokers(t, c, metadata.Broker{ID: 2, Host: "h", Port: 2}, metadata.Broker{ID: 3, Host: "h", Port: 3}, metadata.Broker{ID: 4, Host: "h", Port: 4, Fenced: true})
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "t", Partitions: 1, ReplicationFactor: 2}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePartitions(ctx, "t", 3, [][]int32{{3, 1}, {4, 2}}, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []metadata.Partition{
		{Index: 1, Leader: 3, Replicas: []int32{3, 1}, ISR: []int32{3, 1}},
		{Index: 2, Leader: 2, Replicas: []int32{4, 2}, ISR: []int32{2}}, // 4 is fenced
	} {
		got := partitionOf(t, c, "t", want.Index)
		if got.Leader != want.Leader || !slices.Equal(got.Replicas, want.Replicas) || !slices.Equal(got.ISR, want.ISR) {
			t.Errorf("partition %d: leader %d replicas %v isr %v; want %d %v %v", want.Index, got.Leader, got.Replicas, got.ISR, want.Leader, want.Replicas, want.ISR)
		}
	}
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "m", Partitions: -1, ReplicationFactor: -1,
		Assignment: []PartitionReplicas{{1, []int32{2, 3}}, {0, []int32{3, 2}}}}, false); err != nil {
		t.Fatal(err)
	}
	if p := partitionOf(t, c, "m", 0); p.Leader != 3 || !slices.Equal(p.Replicas, []int32{3, 2}) {
		t.Errorf("m-0: leader %d replicas %v, want 3 [3 2]", p.Leader, p.Replicas)
	}

	grow := func(total int32, assignment ...[]int32) func() error {
		return func() error { return c.CreatePartitions(ctx, "t", total, assignment, false) }
	}
	create := func(partitions int32, rf int16, assignment ...PartitionReplicas) func() error {
		return func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "bad", Partitions: partitions, ReplicationFactor: rf, Assignment: assignment}, false)
			return err
		}
	}
	for _, tc := range []struct {
		name string
		err  error
		msg  string
		call func() error
	}{
		{"too few", ErrInvalidReplicaAssignment, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.", grow(5, []int32{1, 2})},
		{"none for one", ErrInvalidReplicaAssignment, "Attempted to add 1 additional partition(s), but only 0 assignment(s) were specified.", grow(4, [][]int32{}...)},
		{"unknown broker", ErrInvalidReplicaAssignment, "The manual partition assignment includes broker 7, but no such broker is registered.", grow(4, []int32{7, 1})},
		{"broker twice", ErrInvalidReplicaAssignment, "The manual partition assignment includes the broker 2 more than once.", grow(4, []int32{2, 2})},
		// Checked in broker id order, as Kafka does.
		{"unknown after twice", ErrInvalidReplicaAssignment, "The manual partition assignment includes the broker 1 more than once.", grow(4, []int32{9, 1, 1})},
		{"empty", ErrInvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.", grow(4, []int32{})},
		{"replication factor", ErrInvalidReplicaAssignment, "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s).", grow(4, []int32{1})},
		{"create partition twice", ErrInvalidReplicaAssignment, "Found multiple manual partition assignments for partition 0", create(-1, -1, PartitionReplicas{0, []int32{1}}, PartitionReplicas{0, []int32{2}})},
		{"create replica counts", ErrInvalidReplicaAssignment, "The manual partition assignment includes a partition with 2 replica(s), but this is not consistent with previous partitions, which have 1 replica(s).", create(-1, -1, PartitionReplicas{0, []int32{1}}, PartitionReplicas{1, []int32{1, 2}})},
		{"create only fenced", ErrInvalidReplicaAssignment, "All brokers specified in the manual partition assignment for partition 0 are fenced or in controlled shutdown.", create(-1, -1, PartitionReplicas{0, []int32{4}})},
		{"create with both", ErrInvalidRequest, "A manual partition assignment was specified, but replication factor was not set to -1.", create(1, 1, PartitionReplicas{0, []int32{1}})},
	} {
		err := tc.call()
		if msg, _ := errmsg.Wire(err); !errors.Is(err, tc.err) || msg != tc.msg {
			t.Errorf("%s: %v (%q), want %v (%q)", tc.name, err, msg, tc.err, tc.msg)
		}
	}
	if n := len(c.Image().Topics["t"].Partitions); n != 3 {
		t.Errorf("t has %d partitions after refused growths, want 3", n)
	}
}
