// Package share holds share groups' (KIP-932) state on a partition's
// leader: the share-partition of each group and partition, and the share
// sessions of the members fetching from this node.
//
// # The share-partition
//
// A Partition is the state machine of one group's reading of one
// partition, as Kafka 4.4's SharePartition keeps it:
//
//	log:      ... | archived/acked | in flight                | not yet read ...
//	                               ^ start (SPSO)             ^ end (SPEO)
//
// Every offset in [start, end) has a record: its state (Available,
// Acquired, Acknowledged, Archived), how many times it was delivered, the
// member holding it and, while Acquired, when its lock lapses. Acquire
// hands a member Available records (again) and records past end (new),
// each delivery counting; Acknowledge moves a member's Acquired records
// to Acknowledged (ACCEPT), Archived (REJECT, GAP) or back to Available
// (RELEASE), or renews their locks (RENEW); a record released, or whose
// lock lapsed, as many times as the delivery count limit is Archived
// instead. The start moves past every Acknowledged or Archived record at
// its front. end - start never exceeds the record lock limit
// (group.share.partition.max.record.locks), so a stuck record at the
// start stops new acquisitions, not the node's memory.
//
// A Partition does no locking and reads no clock: its owner (Manager)
// serialises calls and passes the time, so tests drive lock expiry with a
// clock of their own. Locks lapse when Expire runs, which the Manager
// does before every operation.
//
// # Share sessions
//
// Sessions is the cache of share sessions (KIP-932's ShareFetch and
// ShareAcknowledge epochs): one per group and member, opened at epoch 0,
// advanced by one with every request, closed at epoch -1, and bounded by
// group.share.max.share.sessions.
//
// # Not yet
//
// The state is in memory only: Kafka persists it in __share_group_state
// through its share coordinator (WriteShareGroupState and its siblings),
// so a new leader or a restart starts a share-partition again from
// share.auto.offset.reset.
//
// This package imports nothing of broker/; Kafka error codes are chosen by
// the handlers from the sentinel errors in errors.go.
package share
