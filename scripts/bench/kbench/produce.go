package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// producerOpts is the reference producer: acks=all, idempotent (kgo's
// default, up to 5 requests in flight), the given linger, batch max, buffer
// and no compression. A failed record is an error, never a silent retry.
func producerOpts(c config) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(c.brokers...),
		kgo.DefaultProduceTopic(c.topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(c.linger),
		kgo.ProducerBatchMaxBytes(int32(c.batchMax)),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(c.buffered),
		kgo.RecordRetries(0),
		kgo.AllowAutoTopicCreation(),
	}
}

// createTopic creates the one-partition topic, with -replication-factor
// replicas, and waits until it has a leader. A broker that cannot create topics through the admin API still
// gets its topic auto-created by the warm-up record, so a refusal is logged
// and not fatal.
func createTopic(ctx context.Context, c config, log *slog.Logger) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers...))
	if err != nil {
		log.Warn("create topic: client", "err", err)
		return false
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, c.createWait)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, 1, int16(c.rf), nil, c.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		log.Warn("create topic failed; relying on auto-creation", "topic", c.topic, "err", err)
		return false
	}
	for {
		md, err := adm.Metadata(ctx, c.topic)
		if err == nil {
			if t, ok := md.Topics[c.topic]; ok && t.Err == nil && len(t.Partitions) > 0 {
				ready := true
				for _, p := range t.Partitions {
					ready = ready && p.Err == nil && p.Leader >= 0
				}
				if ready {
					return true
				}
			}
		}
		select {
		case <-ctx.Done():
			log.Warn("topic has no leader yet; relying on the warm-up record", "topic", c.topic)
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// warmUp produces the warm-up record, retrying a retriable error for up
// to wait: on a cluster, the topic's new leader may not know the topic yet
// when another node's Metadata already names it (UNKNOWN_TOPIC_ID), and the
// producer itself retries nothing.
func warmUp(ctx context.Context, cl *kgo.Client, wait time.Duration) (*kgo.Record, error) {
	deadline := time.Now().Add(wait)
	for {
		r, err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).First()
		if err == nil {
			return r, nil
		}
		if !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return nil, fmt.Errorf("warm-up produce: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("warm-up produce: %w", err)
		case <-time.After(50 * time.Millisecond): // a bounded retry of a retriable error
		}
	}
}

func runProduce(ctx context.Context, c config, m map[string]any, log *slog.Logger) error {
	m["records"] = c.records
	m["size"] = c.size
	m["acks"] = "all"
	m["idempotent"] = true
	m["linger_ms"] = ms(c.linger)
	m["batch_max"] = c.batchMax
	m["max_buffered"] = c.buffered
	m["compression"] = "none"
	m["topic_created"] = createTopic(ctx, c, log)

	cl, err := kgo.NewClient(producerOpts(c)...)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	// Connection, metadata and producer ID are set up before timing starts.
	if _, err := warmUp(ctx, cl, c.createWait); err != nil {
		return err
	}

	value := make([]byte, c.size)
	for i := range value {
		value[i] = byte(i*131 + 7)
	}
	var acked, failed atomic.Int64
	var firstErr atomic.Pointer[error]
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			if failed.Add(1) == 1 {
				firstErr.Store(&err)
			}
			return
		}
		acked.Add(1)
	}
	w := startWindow(c.serverPID)
	for i := 0; i < c.records; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	elapsed := time.Since(w.start).Seconds()
	n := acked.Load()
	bytes := n * int64(c.size)
	if err := w.stop(m, bytes); err != nil {
		return fmt.Errorf("broker sample: %w", err)
	}
	m["elapsed_s"] = round3(elapsed)
	m["acked"] = n
	m["errors"] = failed.Load()
	m["records_per_s"] = round3(float64(n) / elapsed)
	m["MBps"] = round3(float64(bytes) / elapsed / 1e6)
	if p := firstErr.Load(); p != nil {
		return fmt.Errorf("%d of %d records failed, first: %w", failed.Load(), c.records, *p)
	}
	return nil
}
