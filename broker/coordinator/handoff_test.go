package coordinator_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/klogdev/klog/broker/coordinator"
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
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	h := &coordinator.Handoff{
		Topic:       "__transaction_state",
		Coordinator: "test",
		Load: func(_ context.Context, p, _ int32) error {
			record(fmt.Sprintf("load %d", p))
			return nil
		},
		Unload: func(p int32) { record(fmt.Sprintf("unload %d", p)) },
		Logger: testkit.Logger(t, slog.LevelDebug),
	}
	image := func(id byte, partitions int, epochs ...int32) *metadata.Image {
		img := metadata.Empty()
		t := &metadata.Topic{Name: h.Topic, ID: [16]byte{id}, Internal: true}
		for i := range partitions {
			p := metadata.Partition{Index: int32(i), Leader: 0, Replicas: []int32{0}, ISR: []int32{0}}
			if i < len(epochs) {
				p.LeaderEpoch, p.PartitionEpoch = epochs[i], epochs[i]
			}
			t.Partitions = append(t.Partitions, p)
		}
		img.Topics[h.Topic] = t
		return img
	}
	var wg sync.WaitGroup
	step := func(img *metadata.Image, want ...string) {
		t.Helper()
		events = nil
		h.Reconcile(context.Background(), img, 0, &wg)
		wg.Wait()
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
	partitionEpoch.Topics[h.Topic].Partitions[1].PartitionEpoch = 5
	step(partitionEpoch)
	step(metadata.Empty(), "unload 0", "unload 1", "unload 2")
}
