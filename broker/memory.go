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
