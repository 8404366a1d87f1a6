package controller

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/klogdev/klog/broker/metadata"
)

// maxSnapshotBytes bounds the size of a snapshot Restore reads.
const maxSnapshotBytes = 1 << 30

// applyResult is what the state machine returns for each applied entry.
type applyResult struct {
	// prev and next are the images before and after the entry.
	prev, next *metadata.Image
	// err is the rejection of an invalid record, if any.
	err error
}

// fsm applies Raft log entries to the metadata image. Raft calls Apply,
// Snapshot and Restore from one goroutine at a time, so the only shared
// state is the published image.
type fsm struct {
	c *Controller
}

var _ raft.FSM = (*fsm)(nil)

// Apply decodes and applies one entry. A record that does not decode or is
// rejected still advances the image's index, so every node agrees on it.
func (f *fsm) Apply(l *raft.Log) any {
	prev := f.c.Image()
	rec, err := metadata.Decode(l.Data)
	var next *metadata.Image
	if err != nil {
		f.c.log.Error("undecodable metadata record", "index", l.Index, "err", err)
		n := *prev
		n.Index = l.Index
		next = &n
	} else {
		next, err = prev.ApplyEntry(l.Index, rec)
		if err != nil {
			f.c.log.Debug("metadata record rejected", "index", l.Index, "type", rec.Type(), "err", err)
		}
	}
	if reg, ok := rec.(*metadata.RegisterBrokerRecord); err == nil && ok {
		b := next.Brokers[reg.Broker.ID]
		if old, ok := prev.Brokers[b.ID]; ok && old.Incarnation != b.Incarnation {
			f.c.log.Info("broker registered a new incarnation: fenced until it has left every ISR and leadership",
				"broker", b.ID, "incarnation", b.Incarnation, "previous", old.Incarnation, "unclean_shutdown", b.UncleanShutdown)
		}
		// A broker fenced, unfenced, shutting down or back: the active
		// controller's liveness loop moves leaders and ISRs (elect.go).
		f.c.wakeRepair()
	}
	if un, ok := rec.(*metadata.UnregisterBrokerRecord); err == nil && ok {
		if un.ID == f.c.cfg.NodeID && un.Incarnation == f.c.cfg.Self.Incarnation {
			f.c.unregistered.Store(true)
			f.c.log.Warn("this node's broker registration was removed (UnregisterBroker): it stays unregistered until it restarts")
		}
		f.c.wakeRepair() // its leaderships and ISR places go
	}
	res := applyResult{prev: prev, next: next, err: err}
	f.c.keepResult(l.Index, res)
	if next != prev {
		f.c.publish(next)
	}
	return res
}

// Snapshot captures the current image; images are immutable, so holding
// the pointer is enough.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return imageSnapshot{img: f.c.Image()}, nil
}

// Restore replaces the image with a snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxSnapshotBytes+1))
	if err != nil {
		return fmt.Errorf("read metadata snapshot: %w", err)
	}
	if len(b) > maxSnapshotBytes {
		return fmt.Errorf("metadata snapshot larger than %d bytes", maxSnapshotBytes)
	}
	img, err := metadata.DecodeImage(b)
	if err != nil {
		return fmt.Errorf("restore metadata snapshot: %w", err)
	}
	f.c.publish(img)
	return nil
}

type imageSnapshot struct {
	img *metadata.Image
}

func (s imageSnapshot) Persist(sink raft.SnapshotSink) error {
	b, err := metadata.EncodeImage(s.img)
	if err == nil {
		_, err = sink.Write(b)
	}
	if err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist metadata snapshot: %w", err)
	}
	return sink.Close()
}

func (imageSnapshot) Release() {}

// Snapshot has Raft take a snapshot of the image now, as it does on its
// own after enough entries, so that a restart restores the image from it
// and replays only what follows.
func (c *Controller) Snapshot() error {
	if err := c.raft.Snapshot().Error(); err != nil {
		return fmt.Errorf("controller: snapshot: %w", err)
	}
	return nil
}
