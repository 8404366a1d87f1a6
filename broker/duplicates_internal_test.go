package broker

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestOccurrences(t *testing.T) {
	keys := []string{"a", "b", "a", "c", "a"}
	o := make(occurrences[string])
	for _, k := range keys {
		o.add(k)
	}
	var got []occurrence
	for _, k := range keys {
		got = append(got, o.next(k))
	}
	want := []occurrence{firstOfMany, once, repeated, once, repeated}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDistinctKeepsFirstAndNil(t *testing.T) {
	if got := distinct([]int32{3, 1, 3, 2, 1}, identity[int32]); !reflect.DeepEqual(got, []int32{3, 1, 2}) {
		t.Errorf("distinct: %v", got)
	}
	if got := distinct([]string(nil), identity[string]); got != nil {
		t.Errorf("distinct(nil) = %#v, want nil", got)
	}
	if got := distinct([]string{}, identity[string]); got == nil {
		t.Error("distinct(empty) = nil, want empty")
	}
}

// TestMergeOffsetFetchGroups: a group named twice asks for the union of its
// entries' partitions, or every partition when one entry asks for all.
func TestMergeOffsetFetchGroups(t *testing.T) {
	group := func(id string, topics ...kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchRequestGroup {
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group, g.Topics = id, topics
		return g
	}
	topic := func(name string, partitions ...int32) kmsg.OffsetFetchRequestGroupTopic {
		t := kmsg.NewOffsetFetchRequestGroupTopic()
		t.Topic, t.Partitions = name, partitions
		return t
	}
	in := []kmsg.OffsetFetchRequestGroup{
		group("a", topic("x", 0, 1), topic("y", 0)),
		group("b"), // every partition
		group("a", topic("x", 1, 2)),
		group("b", topic("x", 0)),
		group("c", []kmsg.OffsetFetchRequestGroupTopic{}...), // no partition
		group("c", []kmsg.OffsetFetchRequestGroupTopic{}...),
	}
	got := mergeOffsetFetchGroups(in)
	type summary struct {
		group  string
		all    bool
		topics map[string][]int32
	}
	var sum []summary
	for _, g := range got {
		s := summary{group: g.Group, all: g.Topics == nil, topics: map[string][]int32{}}
		for _, gt := range g.Topics {
			if _, dup := s.topics[gt.Topic]; dup {
				t.Errorf("group %s: topic %s twice", g.Group, gt.Topic)
			}
			s.topics[gt.Topic] = gt.Partitions
		}
		sum = append(sum, s)
	}
	want := []summary{
		{"a", false, map[string][]int32{"x": {0, 1, 2}, "y": {0}}},
		{"b", true, map[string][]int32{}},
		{"c", false, map[string][]int32{}},
	}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("got %+v\nwant %+v", sum, want)
	}
}
