package broker

import (
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/store/vfs"
)

// MemoryState is where a node started with Config.Memory keeps its files
// and its Raft state. A node started again on the same MemoryState (or on
// what Killed or Crashed return) finds them, as a restarted process finds
// its data directory: broker/brokertest restarts, kills and crashes one
// node of an in-process cluster this way. Only one running node may use a
// MemoryState at a time.
type MemoryState struct {
	fs   *vfs.MemFS
	raft *controller.MemoryStores
}

// NewMemoryState returns an empty state: a node started on it starts
// afresh.
func NewMemoryState() *MemoryState {
	return &MemoryState{fs: vfs.NewMem(), raft: controller.NewMemoryStores()}
}

// Killed returns what a node running on s leaves if its process is killed
// at this instant: every byte written, synced or not, since the operating
// system keeps them. Take it before closing the node, and start the node
// again on the result. The Raft state is shared, not copied: each of its
// writes is durable when it returns.
func (s *MemoryState) Killed() *MemoryState {
	return &MemoryState{fs: s.fs.Clone(), raft: s.raft}
}

// Crashed returns what a node running on s leaves if its machine loses
// power at this instant: only the bytes it synced and the file names it
// made durable. As with Killed, take it before closing the node.
func (s *MemoryState) Crashed() *MemoryState {
	return &MemoryState{fs: s.fs.CrashClone(), raft: s.raft}
}

// Clone returns a copy of s, files and Raft state alike, that another
// node can run on while a node goes on running on s: a snapshot of a
// node, each copy of which starts as its own. Take it while no node runs
// on s, as after Close, so that the copy is not torn between two writes.
// readdress renames the quorum voters' addresses (old host:port to new)
// in the Raft state, for a copy of a cluster whose voters listen on other
// ports; nil keeps them.
func (s *MemoryState) Clone(readdress map[string]string) (*MemoryState, error) {
	raft, err := s.raft.Clone(readdress)
	if err != nil {
		return nil, err
	}
	return &MemoryState{fs: s.fs.Clone(), raft: raft}, nil
}
