package broker

import (
	"math"
	"strings"

	"github.com/klogdev/klog/store/log"
)

// topicLogConfig resolves a topic's configs (override > broker static >
// default) into the settings its logs run with.
func (n *Node) topicLogConfig(topic string) log.Config {
	var overrides map[string]string
	if n.ctrl != nil {
		if t, ok := n.ctrl.Image().Topic(topic); ok {
			overrides = t.Configs
		}
	}
	return n.logConfig(overrides)
}

func (n *Node) logConfig(overrides map[string]string) log.Config {
	b := n.broker
	i64 := func(name string) int64 { return b.TopicInt64(overrides, name) }
	clampInt32 := func(v int64) int32 {
		if v > math.MaxInt32 {
			return math.MaxInt32
		}
		return int32(v)
	}
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = i64("segment.bytes")
	cfg.SegmentMs = i64("segment.ms")
	cfg.IndexIntervalBytes = clampInt32(i64("index.interval.bytes"))
	cfg.SegmentIndexBytes = clampInt32(i64("segment.index.bytes"))
	cfg.RetentionMs = i64("retention.ms")
	cfg.RetentionBytes = i64("retention.bytes")
	cfg.FlushMessages = i64("flush.messages")
	cfg.FlushMs = i64("flush.ms")
	cfg.MaxMessageBytes = clampInt32(i64("max.message.bytes"))
	cfg.LogAppendTime = strings.EqualFold(b.TopicString(overrides, "message.timestamp.type"), "LogAppendTime")
	cfg.TimestampBeforeMaxMs = i64("message.timestamp.before.max.ms")
	cfg.TimestampAfterMaxMs = i64("message.timestamp.after.max.ms")
	cfg.ProducerIDExpirationMs = b.Int64("producer.id.expiration.ms")
	cfg.CleanupPolicy = cleanupPolicy(b.TopicString(overrides, "cleanup.policy"))
	return cfg
}

// cleanupPolicy parses cleanup.policy ("delete", "compact" or both, comma
// separated; validated when set).
func cleanupPolicy(v string) log.CleanupPolicy {
	var p log.CleanupPolicy
	for _, s := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "delete":
			p |= log.CleanupDelete
		case "compact":
			p |= log.CleanupCompact
		}
	}
	return p
}
