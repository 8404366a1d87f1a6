package coordinator

import "context"

// Record is one record of an internal topic as a coordinator sees it: a
// key and a value (nil for a tombstone) in the coordinator's own schemas.
// Replay also flags the records of transactional batches and the
// transaction markers of control batches; Append writes plain records.
type Record struct {
	Key, Value []byte
	// ProducerID is the producer of a transactional record or a marker;
	// ignored otherwise.
	ProducerID int64
	// Transactional marks a record of a transactional batch, pending until
	// its producer's marker.
	Transactional bool
	// Control marks a COMMIT or ABORT marker of ProducerID; Commit tells
	// which. A marker has no key or value.
	Control bool
	Commit  bool
}

// Store persists and replays the records of an internal topic's
// partitions (implemented by the broker over its partitions).
type Store interface {
	// Append writes records as one batch to partition p and returns once
	// committed. An error wrapping ErrNotLeader means this node no longer
	// leads p.
	Append(ctx context.Context, partition int32, records []Record) error
	// Replay calls fn with every record of partition p from log start to
	// the log end, in order, and returns once they are committed (a new
	// leader's high watermark trails its log end), the records of
	// transactional batches and the markers of control batches included,
	// flagged as the Record doc says.
	Replay(ctx context.Context, partition int32, fn func(Record) error) error
}

// TopicInfo is what a coordinator needs to know of a topic of the cluster.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Partitions int32
}
