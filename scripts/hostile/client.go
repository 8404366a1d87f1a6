package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clientTimeout bounds one operation of the normal client.
const clientTimeout = 8 * time.Second

// canary is the normal client of a probe: it produces one record with
// acks=all before, during and after the attack, and at the end reads the
// topic back read_committed to check that every acknowledged record is
// there.
type canary struct {
	n     *node
	topic string
	acked []string
	seq   int
}

// newCanary creates the canary topic.
func newCanary(ctx context.Context, n *node) (*canary, error) {
	c := &canary{n: n, topic: "hostile-canary"}
	return c, createTopic(ctx, n, c.topic, 1, nil)
}

// produce sends one record with a fresh client, so that each call also
// shows the node still accepts connections.
func (c *canary) produce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.n.Addr()), kgo.DefaultProduceTopic(c.topic),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return err
	}
	defer cl.Close()
	c.seq++
	v := fmt.Sprintf("canary-%d", c.seq)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
		return fmt.Errorf("produce %s: %w", v, err)
	}
	c.acked = append(c.acked, v)
	return nil
}

// verify reads the topic read_committed from the start until every
// acknowledged record has been seen.
func (c *canary) verify(ctx context.Context) error {
	seen, err := consumeValues(ctx, c.n, c.topic, len(c.acked))
	if err != nil {
		return err
	}
	for _, v := range c.acked {
		if !slices.Contains(seen, v) {
			return fmt.Errorf("acknowledged %s not read back (read %d records)", v, len(seen))
		}
	}
	return nil
}

// consumeValues reads the values of topic (all partitions) read_committed
// from the start until it has want records or clientTimeout passes.
func consumeValues(ctx context.Context, n *node, topic string, want int) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var seen []string
	for len(seen) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return seen, fmt.Errorf("read %d of %d records of %s: %w", len(seen), want, topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { seen = append(seen, string(r.Value)) })
	}
	return seen, nil
}

// admin runs fn with an admin client of the node.
func admin(ctx context.Context, n *node, fn func(ctx context.Context, adm *kadm.Client) error) error {
	return adminAt(ctx, n.Addr(), fn)
}

// adminAt runs fn with an admin client of the broker at addr.
func adminAt(ctx context.Context, addr string, fn func(ctx context.Context, adm *kadm.Client) error) error {
	ctx, cancel := context.WithTimeout(ctx, 3*clientTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(ctx, kadm.NewClient(cl))
}

// createTopic creates topic with partitions and the topic configs.
func createTopic(ctx context.Context, n *node, topic string, partitions int32, configs map[string]*string) error {
	return createTopicAt(ctx, n.Addr(), topic, partitions, configs)
}

// createTopicAt creates topic on the broker at addr.
func createTopicAt(ctx context.Context, addr, topic string, partitions int32, configs map[string]*string) error {
	return adminAt(ctx, addr, func(ctx context.Context, adm *kadm.Client) error {
		resp, err := adm.CreateTopic(ctx, partitions, 1, configs, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("create topic %s: %w", topic, err)
		}
		return nil
	})
}

// endOffset is the log end offset of topic partition p.
func endOffset(ctx context.Context, n *node, topic string, p int32) (int64, error) {
	var end int64
	err := admin(ctx, n, func(ctx context.Context, adm *kadm.Client) error {
		offs, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		o, ok := offs.Lookup(topic, p)
		if !ok {
			return fmt.Errorf("no end offset for %s[%d]", topic, p)
		}
		end = o.Offset
		return o.Err
	})
	return end, err
}

// produceValues produces records (one per value) to topic partition p
// with acks=all, batch size limit and record size allowing value sizes up
// to maxBytes.
func produceValues(ctx context.Context, n *node, topic string, p int32, maxBytes int32, values ...[]byte) error {
	ctx, cancel := context.WithTimeout(ctx, 3*clientTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr()), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(maxBytes),
		kgo.ProducerBatchCompression(kgo.NoCompression()), // the batch is as large on the node
		kgo.BrokerMaxWriteBytes(maxBytes+1<<20))
	if err != nil {
		return err
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Value: v, Partition: p})
	}
	return cl.ProduceSync(ctx, rs...).FirstErr()
}
