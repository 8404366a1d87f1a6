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
// The leader keeps a ReplicaState per follower (replica.go), updated by
// UpdateFollower from each replica fetch with Kafka's last-caught-up rule,
// and moves the high watermark to the smallest log end offset of the ISR
// (and of followers caught up within replica.lag.time.max.ms, about to
// join), never backwards, waking waiters when it advances; with no other
// replica it follows the log end on every append. The ISR decisions are
// pure functions over those states — OutOfSync (shrink after
// replica.lag.time.max.ms) and CanJoinISR (at the HW and past the start of
// the leader's epoch) — and the partition only proposes the new ISR
// (ProposedISRShrink, FollowerUpdate.ProposedISR): the controller decides
// it (AlterPartition), and its answer comes back as a new LeaderState. A
// replica that does not lead appends its leader's bytes
// (AppendReplicated), truncates (TruncateTo, where
// store/log.FollowerTruncation says) and takes its high watermark from the
// leader's fetch responses (UpdateHighWatermarkFromLeader). The fetchers
// that call these live outside this package. The read bounds distinguish
// HW (consumers) from LEO (followers).
package partition
