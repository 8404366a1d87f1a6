package loadgen

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Consume reads c.Records records of c.Topic from offset 0 of every
// partition, without a consumer group, or with c.Records 0 every record
// up to the end offsets found when it starts.
func Consume(ctx context.Context, c Config) (*Result, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	want := int64(c.Records)
	if want == 0 {
		held, err := recordsHeld(ctx, &c)
		if err != nil {
			return nil, err
		}
		if held == 0 {
			return nil, fmt.Errorf("%w: topic %s holds no records to consume", ErrConfig, c.Topic)
		}
		want = held
	}
	var throttles throttleTally
	cl, err := c.newClient(
		kgo.WithHooks(&throttles),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(int32(c.FetchMaxBytes)),
		kgo.FetchMaxPartitionBytes(int32(c.FetchMaxPartitionBytes)),
	)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()

	r := &Result{}
	var n atomic.Int64
	stopProgress := progress(&c, n.Load)
	defer stopProgress()
	w := startWindow(c.BrokerPIDs)
	for n.Load() < want {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("consumed %d of %d records: %w", n.Load(), want, err)
		}
		if err := fetchErr(fetches); err != nil {
			return nil, err
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			if n.Add(1) == 1 {
				r.FirstRecord = time.Since(w.start)
			}
			r.Bytes += int64(len(rec.Value))
		})
	}
	r.Records = n.Load()
	r.Throttles = throttles.get()
	if err := w.stop(r, r.Bytes); err != nil {
		return r, fmt.Errorf("broker sample: %w", err)
	}
	r.rates()
	return r, nil
}

// endOffsets lists the end offsets of c.Topic's partitions, or with
// start their log start offsets.
func endOffsets(ctx context.Context, c *Config, start bool) (kadm.ListedOffsets, error) {
	cl, err := c.newClient()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	list, what := adm.ListEndOffsets, "end"
	if start {
		list, what = adm.ListStartOffsets, "start"
	}
	offs, err := list(ctx, c.Topic)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("%s offsets of %s: %w", what, c.Topic, err)
	}
	return offs, nil
}

// recordsHeld is the offsets c.Topic's partitions hold, end less start:
// its records, and its transaction markers if any.
func recordsHeld(ctx context.Context, c *Config) (int64, error) {
	ends, err := endOffsets(ctx, c, false)
	if err != nil {
		return 0, err
	}
	starts, err := endOffsets(ctx, c, true)
	if err != nil {
		return 0, err
	}
	var held int64
	ends.Each(func(o kadm.ListedOffset) {
		held += o.Offset
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok {
			held -= s.Offset
		}
	})
	return held, nil
}
