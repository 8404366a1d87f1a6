package loadgen

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sendStamp is a record's context carrying when it was handed to the
// producer: the record's own timestamp is cut to milliseconds.
type sendStamp struct {
	context.Context
	at time.Time
}

// Produce sends c.Records records (or records for c.Duration) of c.Size
// bytes to c.Topic, at most c.Rate a second when it is set, and measures
// the throughput and each record's latency to its acknowledgement.
func Produce(ctx context.Context, c Config) (*Result, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if c.Records == 0 && c.Duration <= 0 {
		return nil, fmt.Errorf("%w: produce needs records or a duration", ErrConfig)
	}
	r := &Result{TopicCreated: createTopic(ctx, &c)}
	var batches batchCounter
	var throttles throttleTally
	cl, err := kgo.NewClient(append(producerOpts(&c), kgo.WithHooks(&batches, &throttles))...)
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	defer cl.Close()
	if err := warmUp(ctx, cl, &c); err != nil {
		return nil, err
	}
	batches.batches.Store(0)
	batches.requests.Store(0)

	value := make([]byte, c.Size)
	for i := range value {
		value[i] = byte(i*131 + 7)
	}
	var t produceTally
	stopProgress := progress(&c, t.acked.Load)
	w := startWindow(c.BrokerPIDs)
	sendRecords(ctx, cl, &c, w.start, value, t.promise)
	err = cl.Flush(ctx)
	stopProgress()
	r.Records, r.Errors, r.Batches, r.Requests = t.acked.Load(), t.failed.Load(), batches.batches.Load(), batches.requests.Load()
	r.Throttles = throttles.get()
	r.Bytes = r.Records * int64(c.Size)
	if werr := w.stop(r, r.Bytes); werr != nil {
		return r, fmt.Errorf("broker sample: %w", werr)
	}
	r.rates()
	t.mu.Lock()
	r.Latency = t.lat.percentiles()
	t.mu.Unlock()
	if err != nil {
		return r, fmt.Errorf("flush: %w", err)
	}
	if t.firstErr != nil {
		return r, fmt.Errorf("%d of %d records failed, first: %w", r.Errors, r.Errors+r.Records, t.firstErr)
	}
	return r, nil
}

// produceTally counts a produce run's acknowledged and failed records,
// keeps the first failure, and the latency of each acknowledgement.
type produceTally struct {
	acked, failed atomic.Int64
	mu            sync.Mutex
	firstErr      error
	lat           histogram
}

// promise is the producer's callback for one record sent by sendRecords.
func (t *produceTally) promise(rec *kgo.Record, err error) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.failed.Add(1) == 1 {
			t.firstErr = err
		}
		return
	}
	t.acked.Add(1)
	t.lat.add(now.Sub(rec.Context.(*sendStamp).at))
}

// sendRecords hands the records of a produce run, each of value, to cl,
// from start: all c.Records of them, or as many as c.Duration allows (at
// most c.Records when both are set), at most c.Rate a second when it is
// set, until ctx ends. Each record carries when it was handed over, in a
// sendStamp.
func sendRecords(ctx context.Context, cl *kgo.Client, c *Config, start time.Time, value []byte, promise func(*kgo.Record, error)) {
	var interval time.Duration
	if c.Rate > 0 {
		interval = time.Second / time.Duration(c.Rate)
	}
	var end time.Time
	if c.Duration > 0 {
		end = start.Add(c.Duration)
	}
	for i := 0; ; i++ {
		if end.IsZero() && i >= c.Records || !end.IsZero() && (i&63 == 0 && time.Now().After(end) || c.Records > 0 && i >= c.Records) {
			break
		}
		if interval > 0 {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
		}
		if ctx.Err() != nil {
			break
		}
		rec := &kgo.Record{Value: value, Context: &sendStamp{ctx, time.Now()}}
		if c.PartitionRun > 0 {
			rec.Partition = int32(i / c.PartitionRun % c.Partitions)
		}
		cl.Produce(ctx, rec, promise)
	}
}

// batchCounter counts the record batches a producer writes, and the
// Produce requests they go in.
type batchCounter struct{ batches, requests atomic.Int64 }

func (b *batchCounter) OnProduceBatchWritten(kgo.BrokerMetadata, string, int32, kgo.ProduceBatchMetrics) {
	b.batches.Add(1)
}

func (b *batchCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == kmsg.Produce.Int16() && err == nil {
		b.requests.Add(1)
	}
}
