package broker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

// TestReconcileReloadsRecreatedInternalTopic: an internal topic deleted
// and created again between two reconciles shares partition indexes and
// leader epochs with the old one but none of its records, and its keys may
// hash elsewhere: every partition of the old topic is unloaded from the
// coordinator and those of the new one loaded. A partition led again at a
// newer leader epoch, another node having led it in between (in an image
// this node missed), is loaded afresh; a new partition epoch alone (an
// ISR change) changes nothing.
func TestReconcileReloadsRecreatedInternalTopic(t *testing.T) {
	n := &Node{logger: testkit.Logger(t, slog.LevelDebug), ctx: context.Background()}
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	it := &internalTopic{
		name:        "__transaction_state",
		coordinator: "test",
		load: func(_ context.Context, p, _ int32) error {
			record(fmt.Sprintf("load %d", p))
			return nil
		},
		unload: func(p int32) { record(fmt.Sprintf("unload %d", p)) },
		loaded: make(map[int32]int32),
	}
	image := func(id byte, partitions int, epochs ...int32) *metadata.Image {
		img := metadata.Empty()
		t := &metadata.Topic{Name: it.name, ID: [16]byte{id}, Internal: true}
		for i := range partitions {
			p := metadata.Partition{Index: int32(i), Leader: 0, Replicas: []int32{0}, ISR: []int32{0}}
			if i < len(epochs) {
				p.LeaderEpoch, p.PartitionEpoch = epochs[i], epochs[i]
			}
			t.Partitions = append(t.Partitions, p)
		}
		img.Topics[it.name] = t
		return img
	}
	step := func(img *metadata.Image, want ...string) {
		t.Helper()
		events = nil
		n.reconcileInternalTopic(img, it)
		n.wg.Wait()
		slices.Sort(events)
		if !slices.Equal(events, want) {
			t.Errorf("events %q, want %q", events, want)
		}
	}
	step(image(1, 1), "load 0")
	step(image(1, 1))
	step(image(2, 3), "load 0", "load 1", "load 2", "unload 0")
	step(image(2, 3, 0, 2), "load 1", "unload 1")
	partitionEpoch := image(2, 3, 0, 2)
	partitionEpoch.Topics[it.name].Partitions[1].PartitionEpoch = 5
	step(partitionEpoch)
	step(metadata.Empty(), "unload 0", "unload 1", "unload 2")
}
