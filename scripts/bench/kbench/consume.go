package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// runConsume reads c.records records of the topic from offset 0 without a
// consumer group.
func runConsume(ctx context.Context, c config, m map[string]any) error {
	m["records"] = c.records
	m["fetch_max_bytes"] = c.fetchMax
	m["fetch_max_partition_bytes"] = c.fetchPart
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.brokers...),
		kgo.ConsumeTopics(c.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().At(0)),
		kgo.FetchMaxBytes(int32(c.fetchMax)),
		kgo.FetchMaxPartitionBytes(int32(c.fetchPart)),
	)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()

	w := startWindow(c.serverPID)
	var n, bytes int64
	var first time.Duration
	for n < int64(c.records) {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consumed %d of %d records: %w", n, c.records, err)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if n == 0 {
				first = time.Since(w.start)
			}
			n++
			bytes += int64(len(r.Value))
		})
	}
	elapsed := time.Since(w.start).Seconds()
	if err := w.stop(m, bytes); err != nil {
		return fmt.Errorf("broker sample: %w", err)
	}
	m["consumed"] = n
	m["elapsed_s"] = round3(elapsed)
	m["first_record_ms"] = ms(first)
	m["records_per_s"] = round3(float64(n) / elapsed)
	m["MBps"] = round3(float64(bytes) / elapsed / 1e6)
	return nil
}
