package log

import "math"

// Config holds the per-topic settings the log obeys. Field meanings follow
// Kafka's topic configs of the same names.
type Config struct {
	SegmentBytes         int64 // segment.bytes: roll when the active segment would exceed it
	SegmentMs            int64 // segment.ms: roll a non-empty segment this old
	SegmentJitterMs      int64 // segment.jitter.ms: subtracted from segment.ms
	IndexIntervalBytes   int32 // index.interval.bytes: bytes between offset index entries
	SegmentIndexBytes    int32 // segment.index.bytes: roll when an index would outgrow it
	RetentionMs          int64 // retention.ms; -1 keeps forever
	RetentionBytes       int64 // retention.bytes; -1 is unlimited
	FlushMessages        int64 // flush.messages: fsync after this many unflushed records
	FlushMs              int64 // flush.ms: fsync when the oldest unflushed data is this old
	MaxMessageBytes      int32 // max.message.bytes: largest accepted batch
	LogAppendTime        bool  // message.timestamp.type == LogAppendTime
	TimestampBeforeMaxMs int64 // message.timestamp.before.max.ms
	TimestampAfterMaxMs  int64 // message.timestamp.after.max.ms
	FileDeleteDelayMs    int64 // file.delete.delay.ms; accepted, deletion is immediate (see package doc)
	// ProducerIDExpirationMs is producer.id.expiration.ms: a producer
	// idle this long is forgotten (Manager.ExpireProducers, Log.ExpireProducers).
	ProducerIDExpirationMs int64
	// CleanupPolicy is cleanup.policy. RetentionMs and RetentionBytes
	// apply only when it includes CleanupDelete, as in Kafka: a log that
	// is compacted only (__consumer_offsets, __transaction_state) never
	// loses segments to their age or the log's size.
	CleanupPolicy CleanupPolicy
	// The log cleaner's settings (see "Compaction" in the package doc):
	// min.cleanable.dirty.ratio, min.compaction.lag.ms,
	// max.compaction.lag.ms and delete.retention.ms.
	MinCleanableDirtyRatio float64
	MinCompactionLagMs     int64
	MaxCompactionLagMs     int64
	DeleteRetentionMs      int64
}

// CleanupPolicy is a set of cleanup.policy values.
type CleanupPolicy uint8

const (
	// CleanupDelete deletes old segments by retention.ms and
	// retention.bytes ("delete").
	CleanupDelete CleanupPolicy = 1 << iota
	// CleanupCompact keeps at least the last record of every key
	// ("compact").
	CleanupCompact
)

// Delete reports whether retention by time and size applies.
func (p CleanupPolicy) Delete() bool { return p&CleanupDelete != 0 }

// Compact reports whether the log is compacted.
func (p CleanupPolicy) Compact() bool { return p&CleanupCompact != 0 }

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:         1 << 30,
		SegmentMs:            7 * 24 * 3600 * 1000,
		IndexIntervalBytes:   4096,
		SegmentIndexBytes:    10 << 20,
		RetentionMs:          7 * 24 * 3600 * 1000,
		RetentionBytes:       -1,
		FlushMessages:        math.MaxInt64,
		FlushMs:              math.MaxInt64,
		MaxMessageBytes:      1048588,
		TimestampBeforeMaxMs: math.MaxInt64,
		TimestampAfterMaxMs:  3600000,
		FileDeleteDelayMs:    60000,

		ProducerIDExpirationMs: 86400000,
		CleanupPolicy:          CleanupDelete,

		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLagMs:     math.MaxInt64,
		DeleteRetentionMs:      86400000,
	}
}

// sanitized replaces impossible values with safe ones so that a bad topic
// config can never make the log misbehave (zero-size segments, negative
// index intervals).
func (c Config) sanitized() Config {
	d := DefaultConfig()
	if c.SegmentBytes < minSegmentBytes {
		c.SegmentBytes = minSegmentBytes
	}
	if c.SegmentBytes > math.MaxInt32 {
		c.SegmentBytes = math.MaxInt32
	}
	if c.SegmentMs <= 0 {
		c.SegmentMs = d.SegmentMs
	}
	if c.SegmentJitterMs < 0 || c.SegmentJitterMs >= c.SegmentMs {
		c.SegmentJitterMs = 0
	}
	if c.IndexIntervalBytes < 0 {
		c.IndexIntervalBytes = d.IndexIntervalBytes
	}
	if c.SegmentIndexBytes < 4*timeEntrySize {
		c.SegmentIndexBytes = 4 * timeEntrySize
	}
	if c.FlushMessages <= 0 {
		c.FlushMessages = 1
	}
	if c.FlushMs < 0 {
		c.FlushMs = 0
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = d.MaxMessageBytes
	}
	if c.TimestampBeforeMaxMs < 0 {
		c.TimestampBeforeMaxMs = d.TimestampBeforeMaxMs
	}
	if c.TimestampAfterMaxMs < 0 {
		c.TimestampAfterMaxMs = d.TimestampAfterMaxMs
	}
	if c.ProducerIDExpirationMs <= 0 {
		c.ProducerIDExpirationMs = d.ProducerIDExpirationMs
	}
	if !(c.MinCleanableDirtyRatio >= 0 && c.MinCleanableDirtyRatio <= 1) {
		c.MinCleanableDirtyRatio = d.MinCleanableDirtyRatio
	}
	if c.MinCompactionLagMs < 0 {
		c.MinCompactionLagMs = 0
	}
	if c.MaxCompactionLagMs <= 0 {
		c.MaxCompactionLagMs = d.MaxCompactionLagMs
	}
	if c.DeleteRetentionMs < 0 {
		c.DeleteRetentionMs = 0
	}
	return c
}

// minSegmentBytes is Kafka's lower bound for segment.bytes (14 bytes, the
// size of the smallest legacy message); anything smaller cannot hold a batch
// header, so klog rolls after every batch instead.
const minSegmentBytes = 14
