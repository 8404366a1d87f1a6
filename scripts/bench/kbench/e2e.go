package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// e2eStamp is the size of the two times every e2e record value starts with:
// when it was scheduled and when it was handed to the producer.
const e2eStamp = 16

// runE2E produces at a fixed rate for a duration and consumes the same
// records in the same process, and reports the latency from produce to
// consume. Latency is measured twice: from the moment the record was handed
// to the producer, and from the moment the schedule said it was due, which
// also counts any time the producer fell behind the rate (so a stalled
// broker cannot hide behind a stalled client).
func runE2E(ctx context.Context, c config, m map[string]any, log *slog.Logger) error {
	if c.rate <= 0 || c.duration <= 0 {
		return fmt.Errorf("%w: e2e needs -rate and -duration above zero", errBadFlags)
	}
	size := max(c.size, e2eStamp)
	total := int(float64(c.rate) * c.duration.Seconds())
	m["rate"] = c.rate
	m["duration_s"] = round3(c.duration.Seconds())
	m["size"] = size
	m["acks"] = "all"
	m["linger_ms"] = ms(c.linger)
	m["topic_created"] = createTopic(ctx, c, log)

	prod, err := kgo.NewClient(producerOpts(c)...)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()
	warm, err := warmUp(ctx, prod, c.createWait)
	if err != nil {
		return err
	}

	cons, err := kgo.NewClient(
		kgo.SeedBrokers(c.brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
			c.topic: {warm.Partition: kgo.NewOffset().At(warm.Offset + 1)},
		}),
		kgo.FetchMaxBytes(int32(c.fetchMax)),
		kgo.FetchMaxPartitionBytes(int32(c.fetchPart)),
	)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer cons.Close()

	fromSend := make([]time.Duration, 0, total)
	fromSchedule := make([]time.Duration, 0, total)
	consumed := make(chan error, 1)
	go func() {
		for len(fromSend) < total {
			fetches := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				consumed <- fmt.Errorf("consumed %d of %d records: %w", len(fromSend), total, err)
				return
			}
			var ferr error
			fetches.EachError(func(t string, p int32, err error) {
				if ferr == nil {
					ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
				}
			})
			if ferr != nil {
				consumed <- ferr
				return
			}
			now := time.Now()
			fetches.EachRecord(func(r *kgo.Record) {
				if len(r.Value) < e2eStamp {
					return
				}
				due := int64(binary.BigEndian.Uint64(r.Value))
				sent := int64(binary.BigEndian.Uint64(r.Value[8:]))
				fromSchedule = append(fromSchedule, now.Sub(time.Unix(0, due)))
				fromSend = append(fromSend, now.Sub(time.Unix(0, sent)))
			})
		}
		consumed <- nil
	}()

	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	promise := func(_ *kgo.Record, err error) {
		if err != nil && failed.Add(1) == 1 {
			firstErr.Store(&err)
		}
	}
	w := startWindow(c.serverPID)
	interval := time.Second / time.Duration(c.rate)
	for i := range total {
		due := w.start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		v := make([]byte, size)
		binary.BigEndian.PutUint64(v, uint64(due.UnixNano()))
		binary.BigEndian.PutUint64(v[8:], uint64(time.Now().UnixNano()))
		prod.Produce(ctx, &kgo.Record{Value: v}, promise)
	}
	if err := prod.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	produced := time.Since(w.start).Seconds()
	if p := firstErr.Load(); p != nil {
		return fmt.Errorf("%d of %d records failed, first: %w", failed.Load(), total, *p)
	}
	if err := <-consumed; err != nil {
		return err
	}
	if err := w.stop(m, int64(total)*int64(size)); err != nil {
		return fmt.Errorf("broker sample: %w", err)
	}
	m["records"] = total
	m["achieved_rate"] = round3(float64(total) / produced)
	addPercentiles(m, "e2e", fromSend)
	addPercentiles(m, "e2e_from_schedule", fromSchedule)
	return nil
}

// addPercentiles adds prefix_p50_ms, _p99_ms, _p999_ms and _max_ms of d.
func addPercentiles(m map[string]any, prefix string, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	m[prefix+"_p50_ms"] = ms(at(0.50))
	m[prefix+"_p99_ms"] = ms(at(0.99))
	m[prefix+"_p999_ms"] = ms(at(0.999))
	m[prefix+"_max_ms"] = ms(d[len(d)-1])
}
