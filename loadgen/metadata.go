package loadgen

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata sends c.Records Metadata requests for c.Topic one after
// another on one connection, and measures their latency: what a client
// pays to learn a topic's partitions and leaders.
func Metadata(ctx context.Context, c Config) (*Result, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if c.Records == 0 {
		return nil, fmt.Errorf("%w: metadata needs a number of requests", ErrConfig)
	}
	r := &Result{TopicCreated: createTopic(ctx, &c)}
	cl, err := c.newClient()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(c.Topic)
	req.Topics = append(req.Topics, t)
	// The first request opens the connection outside the measurement.
	if _, err := req.RequestWith(ctx, cl); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	var lat histogram
	w := startWindow(c.BrokerPIDs)
	for range c.Records {
		t0 := time.Now()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
		lat.add(time.Since(t0))
		if len(resp.Topics) != 1 {
			return nil, fmt.Errorf("metadata of %s: %d topics answered", c.Topic, len(resp.Topics))
		}
		if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata of %s: %w", c.Topic, err)
		}
		r.Records++
	}
	if err := w.stop(r, 0); err != nil {
		return r, fmt.Errorf("broker sample: %w", err)
	}
	r.rates()
	r.Latency = lat.percentiles()
	return r, nil
}
