package broker

import (
	"errors"
	"maps"
	"time"

	"github.com/klogdev/klog/store/log"
)

// maintainLogs runs time-based rolls and timed flushes every tick,
// retention every log.retention.check.interval.ms (Kafka's
// kafka-log-retention task), and drops expired producer ids every
// producer.id.expiration.check.interval.ms (Kafka's
// PeriodicProducerExpirationCheck): a pass visits every producer of every
// partition under the partition's lock, too much work for every tick. The
// active controller's node removes lapsed delegation tokens every
// delegation.token.expiry.check.interval.ms.
func (n *Node) maintainLogs() {
	defer n.wg.Done()
	interval := n.settings().LogRetentionCheckInterval
	// Rolls and flushes by time need a finer tick than retention; one
	// second matches Kafka's scheduler granularity for flush.ms closely
	// enough for a development broker.
	tick := time.Second
	if interval > 0 && interval < tick {
		tick = interval
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	retention := time.NewTicker(interval)
	defer retention.Stop()
	expiry := time.NewTicker(n.settings().ProducerIDExpiryCheck)
	defer expiry.Stop()
	hws := time.NewTicker(n.settings().Replica.HighWatermarkCheckpointInterval)
	defer hws.Stop()
	tokens := time.NewTicker(n.settings().DelegationToken.ExpiryCheck)
	defer tokens.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			n.logs.Maintain(n.clock.Now())
			n.flushSecurityEvents()
		case <-retention.C:
			n.logs.ApplyRetention(n.clock.Now())
		case <-expiry.C:
			n.logs.ExpireProducers(n.clock.Now())
		case <-tokens.C:
			n.sweepDelegationTokens(n.ctx)
		case <-hws.C:
			if err := n.checkpointHighWatermarks(); err != nil && !errors.Is(err, log.ErrClosed) {
				n.logger.Warn("high watermark checkpoint failed", "err", err)
			}
		}
	}
}

// checkpointHighWatermarks writes every local replica's high watermark to
// replication-offset-checkpoint, every
// replica.high.watermark.checkpoint.interval.ms and at Close, as Kafka's
// ReplicaManager does; a replica opened at the next start takes its high
// watermark from it. Nothing is written when no high watermark moved.
func (n *Node) checkpointHighWatermarks() error {
	n.mu.RLock()
	hws := make(map[log.TopicPartition]int64, len(n.mu.parts))
	for key, p := range n.mu.parts {
		hws[log.TopicPartition{Topic: key.topic, Partition: key.partition}] = p.HighWatermark()
	}
	n.mu.RUnlock()
	n.hwMu.Lock()
	defer n.hwMu.Unlock()
	if n.hwMu.written != nil && maps.Equal(hws, n.hwMu.written) {
		return nil
	}
	if err := n.logs.CheckpointHighWatermarks(hws); err != nil {
		return err
	}
	n.hwMu.written = hws
	return nil
}
