// Package coordinator is the one runtime of klog's coordinators: the group
// coordinator (broker/group) and the transaction coordinator (broker/txn)
// run on it, and so does any later one (share groups, streams groups).
//
// A coordinator keeps its state in an internal topic (__consumer_offsets,
// __transaction_state) whose keys (group ids, transactional ids) hash to
// partitions (PartitionOf). The runtime owns what every such coordinator
// needs and none should write again:
//
//   - the partitions this node serves: Begin, Serve and Fail load one
//     (replayed by the user from its Store), Unload stops serving one,
//     Close stops everything and waits for it;
//   - the served check every request makes: ErrNotAvailable after Close,
//     ErrNotCoordinator for a partition not led here, ErrLoadInProgress
//     while it loads (Code maps them to Kafka's codes);
//   - one actor per key: a goroutine that owns the key's State and drains
//     a bounded queue of events (Config.Queue; senders wait, bounded by
//     their context), runs the state's deadlines (State.Deadline, Tick),
//     counts the events in flight, and reaps the key once its state is
//     Reapable and nothing is queued;
//   - the Store, Record and TopicInfo shapes of an internal topic, and the
//     one Store over the partitions of an internal topic this node leads
//     (PartitionStore: uncompressed batches answered once committed,
//     replay to the log end, a lost leadership as ErrNotLeader);
//   - Peers, the node's client of the other nodes for the coordinators'
//     inter-broker requests (WriteTxnMarkers, AddPartitionsToTxn);
//   - the handing over of the partitions this node leads, at their leader
//     epochs, as metadata images arrive (Handoff: a recreated topic or a
//     new leader epoch reloads).
//
// # Writing a coordinator on it
//
// A new coordinator is a package beside broker/group and broker/txn that:
//
//  1. defines its per-key state and implements State on it;
//  2. builds a Runtime with New(Config{Topic, PartitionCount, Queue, ...}),
//     and, if it indexes keys (by producer id, ...), guards the index with
//     the runtime's Lock and keeps it current through Config.Removed and
//     Config.Dropped;
//  3. loads a partition as Begin, Store.Replay into states, then Serve
//     starting each key's actor with StartLocked (Fail on a replay error);
//  4. answers each request with Run(ctx, key, create, fn), fn running on
//     the key's actor, and maps a runtime error with Code;
//  5. writes through its Store from events, with a context bounded by the
//     actor's Context, and answers LostLeadership errors NOT_COORDINATOR.
//
// The broker root keeps only what needs the node: one internal topic
// description per coordinator (its creation settings, a Handoff naming the
// coordinator's load and unload, a PartitionStore over the node's
// partitions) and the coordinator's construction from the broker's
// configs. A share or streams group coordinator is one more such
// description; nothing of the runtime is copied.
//
// # Imports
//
// The runtime imports broker/metadata (the key-to-partition hash),
// broker/partition and store/log (the Store over partitions) and
// broker/wire (Peers, the coordinators' client of the other nodes) only. It never
// imports its users (broker/group, broker/txn), nor the broker root; and
// broker/partition, broker/replica, broker/metadata and broker/config never
// import it.
package coordinator
