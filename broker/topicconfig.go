package broker

import (
	"strings"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/store/log"
)

// topicConfigs are the typed configs of every topic of a metadata image, by
// name.
type topicConfigs map[string]resolvedTopic

// resolvedTopic is a topic's typed configs and the image's topic they were
// resolved from.
type resolvedTopic struct {
	meta *metadata.Topic
	cfg  config.Topic
}

// topicConfig returns the typed configs of t: those the last reconcile
// resolved when t is the topic they were resolved from (images share
// unchanged topics), else resolved now.
func (n *Node) topicConfig(t *metadata.Topic) config.Topic {
	if m := n.topics.Load(); m != nil {
		if rt, ok := (*m)[t.Name]; ok && rt.meta == t {
			return rt.cfg
		}
	}
	return n.resolveTopicConfig(t.Configs)
}

// resolveTopicConfig resolves a topic's overrides (override > broker static
// > default) into typed configs.
func (n *Node) resolveTopicConfig(overrides map[string]string) config.Topic {
	tc, err := n.broker.Load().Topic(overrides)
	if err != nil {
		// Overrides are validated before they are committed; an old
		// value that no longer parses reads as 0, as it always has.
		n.logger.Warn("topic configs", "err", err)
	}
	return tc
}

// topicLogConfig is the log settings of a topic by name, for the log
// manager; a topic not in the metadata (yet) gets the defaults.
func (n *Node) topicLogConfig(topic string) log.Config {
	if n.ctrl != nil {
		if t, ok := n.ctrl.Image().Topic(topic); ok {
			return n.logConfig(n.topicConfig(t))
		}
	}
	return n.logConfig(n.resolveTopicConfig(nil))
}

// logConfig is the settings a topic's logs run with.
func (n *Node) logConfig(t config.Topic) log.Config {
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = int64(t.SegmentBytes)
	if t.InternalSegmentBytes != 0 {
		cfg.SegmentBytes = int64(t.InternalSegmentBytes)
	}
	cfg.SegmentMs = t.SegmentMs
	cfg.IndexIntervalBytes = t.IndexIntervalBytes
	cfg.SegmentIndexBytes = t.SegmentIndexBytes
	cfg.RetentionMs = t.RetentionMs
	cfg.RetentionBytes = t.RetentionBytes
	cfg.FlushMessages = t.FlushMessages
	cfg.FlushMs = t.FlushMs
	cfg.MaxMessageBytes = t.MaxMessageBytes
	cfg.LogAppendTime = t.LogAppendTime
	cfg.TimestampBeforeMaxMs = t.TimestampBeforeMaxMs
	cfg.TimestampAfterMaxMs = t.TimestampAfterMaxMs
	cfg.ProducerIDExpirationMs = n.settings().ProducerIDExpiration.Milliseconds()
	cfg.CleanupPolicy = cleanupPolicy(t.CleanupPolicy)
	cfg.MinCleanableDirtyRatio = t.MinCleanableDirtyRatio
	cfg.MinCompactionLagMs = t.MinCompactionLagMs
	cfg.MaxCompactionLagMs = t.MaxCompactionLagMs
	cfg.DeleteRetentionMs = t.DeleteRetentionMs
	return cfg
}

// cleanupPolicy maps cleanup.policy's values ("delete", "compact" or
// both; validated when set) to the log's.
func cleanupPolicy(values []string) log.CleanupPolicy {
	var p log.CleanupPolicy
	for _, v := range values {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "delete":
			p |= log.CleanupDelete
		case "compact":
			p |= log.CleanupCompact
		}
	}
	return p
}
