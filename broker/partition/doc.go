// Package partition is one replica of a topic partition: it wraps the
// partition's log (store/log) with the offsets Kafka clients see — log start
// offset, high watermark (HW), last stable offset (LSO) and log end offset
// (LEO) — the partition's leader state, and the "new data" signal that
// long-polling fetches wait on.
//
// # What it owns
//
// The leader state — leader id, leader epoch, partition epoch, replicas and
// in-sync replicas (ISR) — is one immutable LeaderState, fed from the
// metadata image by the node (SetLeaderState) and replaced whole, never a
// field at a time. Readers load it lock-free and always see one consistent
// value. Writers of the log (Append, AppendMarker) check leadership, and
// any condition of the caller such as min.insync.replicas, and take the
// epoch they stamp on the batches in the same critical section that
// appends: SetLeaderState waits for an append in flight, and once it
// returns no append under the old state can still happen.
//
// Handlers reach the log only through the partition, which applies the
// read bounds: the records and aborted transactions of a fetch stop at the
// high watermark (or the LSO for read_committed) taken once for the read,
// timestamp lookups at the high watermark. The log itself stays private;
// Snapshot gives inspection tools a plain copy of the offsets and the
// leader state.
//
// # Locking
//
// Partition.mu serialises writers — appends, leader-state changes, Close —
// and guards the registered fetch waiters. The leader state and the high
// watermark are stored only with mu held and published atomically, so
// reads (Read, Fetch, the offsets, IsLeader, CheckLeader) never take mu;
// Snapshot does, to see the offsets and the state between two writes. Lock
// order: broker.Node.mu (the partition registry), then Partition.mu, then
// store/log's Log.mu; fetch waiters are woken after mu is released.
//
// # Replication
//
// With a single replica the ISR is this node alone, so the high watermark
// follows the log end offset on every append. The follower role will add,
// behind the same LeaderState seam: a follower state (leader id to fetch
// from, truncation to the leader's epoch end offset on a state change),
// the leader tracking each follower's fetch position, the HW as the
// smallest LEO of the ISR, and ISR shrink and expand proposed to the
// controller at the partition epoch. The read bounds below already
// distinguish HW (consumers) from LEO (followers).
package partition
