package inspect

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestOverviewCounts: a partition without leader is offline, one whose
// ISR is smaller than its replicas under-replicated; a topic answered
// with an error is counted apart.
func TestOverviewCounts(t *testing.T) {
	rack := "r1"
	md := kadm.Metadata{
		Cluster: "c", Controller: 2,
		Brokers: kadm.BrokerDetails{{NodeID: 2, Host: "h", Port: 2}, {NodeID: 1, Host: "h", Port: 1, Rack: &rack}},
		Topics: kadm.TopicDetails{
			"a": {Topic: "a", Partitions: kadm.PartitionDetails{
				0: {Partition: 0, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
				1: {Partition: 1, Leader: 2, Replicas: []int32{1, 2}, ISR: []int32{2}},
				2: {Partition: 2, Leader: -1, Replicas: []int32{1, 2}, ISR: []int32{}},
			}},
			"b":    {Topic: "b", Partitions: kadm.PartitionDetails{0: {Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}},
			"gone": {Topic: "gone", Err: errors.New("unknown topic")},
		},
	}
	o := overviewOf(md)
	if o.Topics != 2 || o.Partitions != 4 || o.UnderReplicated != 2 || o.Offline != 1 || o.TopicErrors != 1 {
		t.Errorf("counts = %+v", o)
	}
	want := []Broker{{NodeID: 1, Address: "h:1", Rack: "r1"}, {NodeID: 2, Address: "h:2", Controller: true}}
	if len(o.Brokers) != 2 || o.Brokers[0] != want[0] || o.Brokers[1] != want[1] || o.Controller != 2 || o.ClusterID != "c" {
		t.Errorf("brokers = %+v", o)
	}
}
