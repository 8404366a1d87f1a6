// Package group is klog's group coordinator: consumer groups over the classic
// protocol (JoinGroup/SyncGroup/Heartbeat/LeaveGroup, eager and cooperative
// rebalancing, static membership) and the consumer protocol
// (ConsumerGroupHeartbeat, server-side assignment), and the committed offsets
// of every group.
//
// # Actors
//
// Each group is one single-threaded actor of the coordinator runtime
// (broker/coordinator): a goroutine that owns the group's state and drains a
// bounded channel of events (requests and its own timer).
// Timers are deadlines kept in the group and checked by the same loop, so a
// session expiry never races with a heartbeat. Requests for different groups
// never wait on each other. A request that must wait for a rebalance
// (JoinGroup, SyncGroup) leaves a one-slot reply channel in the group and
// waits on it, bounded by its context and the protocol's timeouts.
//
// # Persistence
//
// Offsets and classic group metadata live in the compacted internal topic
// __consumer_offsets, in the key/value schemas other tools read:
//
//	key   = int16 key version | key fields (big endian, int16-length strings)
//	value = int16 value version | value fields, or no value (tombstone)
//
//	key version 0/1: OffsetCommitKey   group, topic, partition int32
//	key version 2:   GroupMetadataKey  group
//	OffsetCommitValue version 3:  offset int64, leader epoch int32,
//	                              metadata string, commit timestamp int64
//	GroupMetadataValue version 3: protocol type, generation int32, protocol,
//	                              leader, current state timestamp int64,
//	                              members [member id, instance id, client id,
//	                              client host, rebalance timeout int32,
//	                              session timeout int32, subscription bytes,
//	                              assignment bytes]
//
// Every change is appended through Store (acks=all) before the request that
// caused it is answered. LoadPartition replays a partition: the latest value
// of a key wins and a tombstone deletes it. Groups that use the consumer
// protocol keep their membership in memory only (their offsets are
// persisted): after a coordinator move, a member's heartbeat answers
// UNKNOWN_MEMBER_ID and it rejoins with epoch 0.
//
// # Transactional offset commits
//
// TxnOffsetCommit writes offsets as one transactional batch of the
// producer (through the TxnStore extension of Store) and keeps them pending
// per producer: OffsetFetch does not show them, and with RequireStable it
// answers UNSTABLE_OFFSET_COMMIT for their partitions. The broker writes the
// transaction's COMMIT or ABORT marker into the group's partition and calls
// CompleteTransaction: a commit makes each pending offset the committed one
// unless a record later in the log already replaced it (the later record
// wins, whichever kind), an abort drops them. A tombstone of a partition
// drops its pending offsets too. Replay delivers transactional records and
// markers in log order (see Record), so a load rebuilds what is still
// pending and applies the rest at its markers; markers reported during a
// load are applied when it ends.
//
// # Not implemented
//
//   - Records of consumer-protocol groups (their schemas are not in kmsg).
//   - Online migration of a non-empty group between the classic and the
//     consumer protocol: JoinGroup on a non-empty consumer group answers
//     INCONSISTENT_GROUP_PROTOCOL, ConsumerGroupHeartbeat on a non-empty
//     classic group GROUP_ID_NOT_FOUND. Empty groups switch freely.
//   - Rack-aware assignment.
//
// SubscribedTopicRegex is Go's RE2 syntax and must match a whole topic name;
// internal topics are matched like any other.
//
// This package imports nothing from broker/ above it; Kafka error codes are
// the wire answers it builds with kerr.
package group
