package loadgen

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// e2eStamp is the size of the two times every e2e record value starts
// with: when it was due and when it was handed to the producer.
const e2eStamp = 16

// E2E produces c.Rate records a second for c.Duration and consumes them in
// the same process, and measures the latency from producing each record
// to consuming it, twice: from the moment the record was handed to the
// producer, and from the moment the schedule said it was due, which also
// counts any time the producer fell behind the rate (so a stalled broker
// cannot hide behind a stalled client). Records are at least 16 bytes,
// the two times.
func E2E(ctx context.Context, c Config) (*Result, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if c.Rate <= 0 || c.Duration <= 0 {
		return nil, fmt.Errorf("%w: e2e needs a rate and a duration above zero", ErrConfig)
	}
	size := max(c.Size, e2eStamp)
	total := int64(float64(c.Rate) * c.Duration.Seconds())
	r := &Result{TopicCreated: createTopic(ctx, &c)}

	prod, err := kgo.NewClient(producerOpts(&c)...)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()
	if err := warmUp(ctx, prod, &c); err != nil {
		return nil, err
	}
	cons, err := e2eConsumer(ctx, &c)
	if err != nil {
		return nil, err
	}
	defer cons.Close()

	var t e2eTally
	consumed := make(chan error, 1)
	go func() { consumed <- t.consume(ctx, cons, total) }()
	stopProgress := progress(&c, t.got.Load)
	defer stopProgress()
	w := startWindow(c.BrokerPIDs)
	if err := produceE2E(ctx, prod, w.start, c.Rate, total, size); err != nil {
		return nil, err
	}
	produced := time.Since(w.start).Seconds()
	if err := <-consumed; err != nil {
		return nil, err
	}
	r.Records = total
	r.Bytes = total * int64(size)
	if err := w.stop(r, r.Bytes); err != nil {
		return r, fmt.Errorf("broker sample: %w", err)
	}
	r.rates()
	r.AchievedRate = float64(total) / produced
	r.Latency = t.fromSend.percentiles()
	r.FromSchedule = t.fromSchedule.percentiles()
	return r, nil
}

// e2eConsumer starts the consumer of an e2e run at the end offsets after
// the warm-up, so that it reads exactly the records of this run, from
// every partition.
func e2eConsumer(ctx context.Context, c *Config) (*kgo.Client, error) {
	ends, err := endOffsets(ctx, c, false)
	if err != nil {
		return nil, err
	}
	start := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) { start[o.Partition] = kgo.NewOffset().At(o.Offset) })
	cons, err := c.newClient(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{c.Topic: start}),
		kgo.FetchMaxBytes(int32(c.FetchMaxBytes)),
		kgo.FetchMaxPartitionBytes(int32(c.FetchMaxPartitionBytes)),
	)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	return cons, nil
}

// e2eTally is what the consumer of an e2e run measures: each record's
// latency from when it was handed to the producer and from when it was
// due, and the records consumed so far.
type e2eTally struct {
	fromSend, fromSchedule histogram
	got                    atomic.Int64
}

// consume reads total records from cons and adds their latencies to t;
// it returns once it has them all, or with why it stopped short.
func (t *e2eTally) consume(ctx context.Context, cons *kgo.Client, total int64) error {
	for t.got.Load() < total {
		fetches := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consumed %d of %d records: %w", t.got.Load(), total, err)
		}
		if err := fetchErr(fetches); err != nil {
			return err
		}
		now := time.Now()
		fetches.EachRecord(func(rec *kgo.Record) {
			if len(rec.Value) < e2eStamp {
				return
			}
			due := int64(binary.BigEndian.Uint64(rec.Value))
			sent := int64(binary.BigEndian.Uint64(rec.Value[8:]))
			t.fromSchedule.add(now.Sub(time.Unix(0, due)))
			t.fromSend.add(now.Sub(time.Unix(0, sent)))
			t.got.Add(1)
		})
	}
	return nil
}

// produceE2E sends total records of size bytes through prod, rate a
// second from start, each value stamped with when it was due and when it
// was handed to the producer, and waits until all are acknowledged; it
// fails with the first record that failed.
func produceE2E(ctx context.Context, prod *kgo.Client, start time.Time, rate int, total int64, size int) error {
	var failed atomic.Int64
	var mu sync.Mutex
	var firstErr error
	promise := func(_ *kgo.Record, err error) {
		if err != nil && failed.Add(1) == 1 {
			mu.Lock()
			firstErr = err
			mu.Unlock()
		}
	}
	interval := time.Second / time.Duration(rate)
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
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
	mu.Lock()
	ferr := firstErr
	mu.Unlock()
	if ferr != nil {
		return fmt.Errorf("%d of %d records failed, first: %w", failed.Load(), total, ferr)
	}
	return nil
}
