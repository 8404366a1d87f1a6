package coordinator

import (
	"context"
	"log/slog"
	"sync"

	"github.com/klogdev/klog/broker/metadata"
)

// Handoff hands the partitions of an internal topic that this node leads
// to the topic's coordinator, at their leader epochs, and takes back the
// others. The node calls Reconcile with each new metadata image.
type Handoff struct {
	// Topic is the internal topic; Coordinator names its coordinator in
	// logs ("group", "transaction").
	Topic       string
	Coordinator string
	// Load hands a partition, at its leader epoch, to the coordinator;
	// Unload takes it back.
	Load   func(ctx context.Context, partition, leaderEpoch int32) error
	Unload func(partition int32)
	Logger *slog.Logger

	// loaded maps each partition handed to the coordinator to the leader
	// epoch it was loaded at; loadedID is the id of the topic they belong
	// to. Reconcile is never called concurrently (the node serializes it).
	loaded   map[int32]int32
	loadedID [16]byte
}

// Reconcile loads into the coordinator every partition of the topic that
// node self leads in img, at its leader epoch, and unloads the others.
// Each load runs on its own goroutine, counted in wg and bounded by ctx; a
// canceled ctx (the node closing) does nothing: closing unloads
// everything. Calls must not overlap.
func (h *Handoff) Reconcile(ctx context.Context, img *metadata.Image, self int32, wg *sync.WaitGroup) {
	if ctx.Err() != nil {
		return
	}
	if h.loaded == nil {
		h.loaded = make(map[int32]int32)
	}
	lead := make(map[int32]int32)
	var id [16]byte
	if t, ok := img.Topic(h.Topic); ok {
		id = t.ID
		for _, p := range t.Partitions {
			if p.Leader == self {
				lead[p.Index] = p.LeaderEpoch
			}
		}
	}
	// A topic deleted and created again — perhaps with another partition
	// count, so keys hash elsewhere — between two reconciles shares
	// partition indexes with the old one but none of its records: unload
	// everything of the old topic.
	recreated := id != h.loadedID
	h.loadedID = id
	// A leader epoch moves only with the leader: a partition this node
	// leads again at a newer epoch than it loaded was led elsewhere in an
	// image this node did not see (Kafka's coordinators see every
	// resignation), so what it loaded may be stale: it is loaded afresh.
	// The transaction coordinator's markers also carry the epoch loaded.
	for p, epoch := range h.loaded {
		if e, ok := lead[p]; recreated || !ok || e != epoch {
			delete(h.loaded, p)
			h.Unload(p)
		}
	}
	for p, epoch := range lead {
		if _, ok := h.loaded[p]; ok {
			continue
		}
		h.loaded[p] = epoch
		wg.Go(func() {
			if err := h.Load(ctx, p, epoch); err != nil && ctx.Err() == nil && h.Logger != nil {
				h.Logger.Error("load "+h.Coordinator+" partition", "partition", p, "err", err)
			}
		})
	}
}
