package controller

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// The stable-store keys hashicorp/raft writes (its raft.go), with klog's
// own (keyNodeID): Clone copies these, as a StableStore cannot list its
// keys.
var (
	keyCurrentTerm  = []byte("CurrentTerm")
	keyLastVoteTerm = []byte("LastVoteTerm")
	keyLastVoteCand = []byte("LastVoteCand")
)

// Clone returns a copy of m that a controller can start on while m goes
// on being used: the Raft log, the stable state and the latest snapshot.
// readdress renames voters' quorum addresses (old host:port to new) in
// every configuration the copy holds, so that a copy of a quorum's
// stores can run beside the original, each voter on a port of its own;
// nil keeps them. Take it while no controller runs on m, or what it
// holds may be torn between two writes. The copies of a quorum's stores
// are for its voters to start on together: the first controller on a
// copy starts the first election at once, as on a new quorum, rather
// than after the heartbeat timeout.
func (m *MemoryStores) Clone(readdress map[string]string) (*MemoryStores, error) {
	c := NewMemoryStores()
	c.together = true
	addr := func(a raft.ServerAddress) raft.ServerAddress {
		if to, ok := readdress[string(a)]; ok {
			return raft.ServerAddress(to)
		}
		return a
	}
	conf := func(cfg raft.Configuration) raft.Configuration {
		out := cfg.Clone()
		for i := range out.Servers {
			out.Servers[i].Address = addr(out.Servers[i].Address)
		}
		return out
	}

	first, err := m.store.FirstIndex()
	if err != nil {
		return nil, err
	}
	last, err := m.store.LastIndex()
	if err != nil {
		return nil, err
	}
	if first > 0 {
		logs := make([]*raft.Log, 0, last-first+1)
		for i := first; i <= last; i++ {
			l := new(raft.Log)
			if err := m.store.GetLog(i, l); err != nil {
				return nil, fmt.Errorf("controller: clone raft log %d: %w", i, err)
			}
			if l.Type == raft.LogConfiguration && len(readdress) > 0 {
				l.Data = raft.EncodeConfiguration(conf(raft.DecodeConfiguration(l.Data)))
			}
			logs = append(logs, l)
		}
		if err := c.store.StoreLogs(logs); err != nil {
			return nil, err
		}
	}

	for _, key := range [][]byte{keyCurrentTerm, keyLastVoteTerm, keyNodeID} {
		v, err := m.store.GetUint64(key)
		if err != nil {
			return nil, err
		}
		if err := c.store.SetUint64(key, v); err != nil {
			return nil, err
		}
	}
	if cand, err := m.store.Get(keyLastVoteCand); err == nil {
		if err := c.store.Set(keyLastVoteCand, []byte(addr(raft.ServerAddress(cand)))); err != nil {
			return nil, err
		}
	}

	metas, err := m.snaps.List()
	if err != nil {
		return nil, err
	}
	for _, meta := range metas {
		if err := copySnapshot(c.snaps, m.snaps, meta, conf(meta.Configuration)); err != nil {
			return nil, fmt.Errorf("controller: clone raft snapshot %s: %w", meta.ID, err)
		}
	}
	return c, nil
}

// copySnapshot copies snapshot meta of from to to, with configuration cfg.
func copySnapshot(to, from *raft.InmemSnapshotStore, meta *raft.SnapshotMeta, cfg raft.Configuration) error {
	_, rc, err := from.Open(meta.ID)
	if err != nil {
		return err
	}
	defer rc.Close()
	// The transport only encodes the legacy peer list of the snapshot's
	// metadata, which klog never reads.
	_, trans := raft.NewInmemTransport("")
	defer trans.Close()
	sink, err := to.Create(meta.Version, meta.Index, meta.Term, cfg, meta.ConfigurationIndex, trans)
	if err != nil {
		return err
	}
	if _, err := io.Copy(sink, rc); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}
