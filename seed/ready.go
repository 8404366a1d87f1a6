package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ProbeTopic is the topic WaitReady creates, produces to and deletes.
const ProbeTopic = "__klog_ready_probe"

// readyPoll is how often WaitReady asks again.
const readyPoll = 20 * time.Millisecond

// WaitReady returns once the cluster serves clients: a metadata request
// lists at least brokers brokers and a controller, and a record produced
// with acks=all to a topic of its own is acknowledged (the topic is then
// deleted). It returns ctx's error, with what it last saw, when ctx ends
// first.
func WaitReady(ctx context.Context, cl *kgo.Client, brokers int) error {
	adm := kadm.NewClient(cl)
	var last error
	for {
		if last = probe(ctx, adm, cl, brokers); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not ready: %w (last: %v)", ctx.Err(), last)
		case <-time.After(readyPoll):
		}
	}
}

func probe(ctx context.Context, adm *kadm.Client, cl *kgo.Client, brokers int) error {
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if len(md.Brokers) < brokers || md.Controller < 0 {
		return fmt.Errorf("metadata lists %d of %d brokers, controller %d", len(md.Brokers), brokers, md.Controller)
	}
	if r, err := adm.CreateTopic(ctx, 1, -1, nil, ProbeTopic); err != nil {
		return fmt.Errorf("create %s: %w", ProbeTopic, err)
	} else if r.Err != nil && !isExists(r.Err) {
		return fmt.Errorf("create %s: %w", ProbeTopic, r.Err)
	}
	rec := &kgo.Record{Topic: ProbeTopic, Value: []byte("ready")}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("produce to %s: %w", ProbeTopic, err)
	}
	if _, err := adm.DeleteTopic(ctx, ProbeTopic); err != nil {
		return fmt.Errorf("delete %s: %w", ProbeTopic, err)
	}
	return nil
}
