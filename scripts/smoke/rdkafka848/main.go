// Command rdkafka848 checks klog's KIP-848 consumer group protocol with
// librdkafka: the version bundled by confluent-kafka-go (Debian's
// librdkafka predates the protocol). Two consumers with
// group.protocol=consumer share a topic, every record is consumed exactly
// once, and one member leaving hands its partitions to the other.
//
//	go run ./scripts/smoke/rdkafka848 BROKERS
//
// It prints one line per step and exits 1 on the first failure.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

const (
	partitions = 4
	records    = 200
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rdkafka848 BROKERS")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Println("    rdkafka848: FAIL:", err)
		os.Exit(1)
	}
}

func run(brokers string) error {
	_, ver := kafka.LibraryVersion()
	topic := fmt.Sprintf("smoke-rdkafka848-%d", time.Now().UnixNano())
	group := topic + "-g"
	fmt.Printf("    rdkafka848: librdkafka %s, topic %s\n", ver, topic)

	admin, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": brokers})
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx, cancel := contextWithTimeout(30 * time.Second)
	defer cancel()
	res, err := admin.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}})
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	if res[0].Error.Code() != kafka.ErrNoError {
		return fmt.Errorf("create topic: %v", res[0].Error)
	}

	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": brokers, "enable.idempotence": true})
	if err != nil {
		return err
	}
	delivered := make(chan error, 1)
	go func() {
		var first error
		n := 0
		for ev := range p.Events() {
			if m, ok := ev.(*kafka.Message); ok {
				if m.TopicPartition.Error != nil && first == nil {
					first = m.TopicPartition.Error
				}
				if n++; n == records {
					break
				}
			}
		}
		delivered <- first
	}()
	for i := range records {
		part := int32(i % partitions)
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part}, Value: []byte(strconv.Itoa(i))}, nil); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
	select {
	case err := <-delivered:
		if err != nil {
			return fmt.Errorf("delivery: %w", err)
		}
	case <-time.After(30 * time.Second):
		return fmt.Errorf("records not delivered within 30s")
	}
	p.Close()

	newConsumer := func() (*kafka.Consumer, error) {
		return kafka.NewConsumer(&kafka.ConfigMap{
			"bootstrap.servers":  brokers,
			"group.id":           group,
			"group.protocol":     "consumer",
			"auto.offset.reset":  "earliest",
			"enable.auto.commit": false,
		})
	}
	a, err := newConsumer()
	if err != nil {
		return err
	}
	b, err := newConsumer()
	if err != nil {
		return err
	}
	for _, c := range []*kafka.Consumer{a, b} {
		if err := c.Subscribe(topic, nil); err != nil {
			return err
		}
	}

	seen := map[string]string{}
	perMember := map[string]int{}
	poll := func(name string, c *kafka.Consumer) error {
		ev := c.Poll(100)
		switch e := ev.(type) {
		case *kafka.Message:
			v := string(e.Value)
			if prev, dup := seen[v]; dup {
				return fmt.Errorf("record %s consumed by %s and again by %s", v, prev, name)
			}
			seen[v] = name
			perMember[name]++
			if _, err := c.CommitMessage(e); err != nil {
				return fmt.Errorf("%s: commit: %w", name, err)
			}
		case kafka.Error:
			if e.IsFatal() {
				return fmt.Errorf("%s: %v", name, e)
			}
		}
		return nil
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(seen) < records {
		if time.Now().After(deadline) {
			return fmt.Errorf("consumed %d of %d records", len(seen), records)
		}
		if err := poll("a", a); err != nil {
			return err
		}
		if err := poll("b", b); err != nil {
			return err
		}
	}
	fmt.Printf("    rdkafka848: %d records consumed once each (a %d, b %d)\n", records, perMember["a"], perMember["b"])

	// Both members hold partitions once the group settles.
	for {
		aa, err := a.Assignment()
		if err != nil {
			return err
		}
		ba, err := b.Assignment()
		if err != nil {
			return err
		}
		if len(aa) > 0 && len(ba) > 0 && len(aa)+len(ba) == partitions {
			fmt.Printf("    rdkafka848: assignment a=%d b=%d partitions\n", len(aa), len(ba))
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("group did not settle: a has %d, b has %d partitions", len(aa), len(ba))
		}
		if err := poll("a", a); err != nil {
			return err
		}
		if err := poll("b", b); err != nil {
			return err
		}
	}

	// b leaves; a takes every partition.
	if err := b.Close(); err != nil {
		return fmt.Errorf("close b: %w", err)
	}
	for {
		aa, err := a.Assignment()
		if err != nil {
			return err
		}
		if len(aa) == partitions {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after b left, a has %d of %d partitions", len(aa), partitions)
		}
		if err := poll("a", a); err != nil {
			return err
		}
	}
	fmt.Println("    rdkafka848: after b left, a owns every partition")

	committed, err := a.Committed([]kafka.TopicPartition{{Topic: &topic, Partition: 0}, {Topic: &topic, Partition: 1}, {Topic: &topic, Partition: 2}, {Topic: &topic, Partition: 3}}, 10_000)
	if err != nil {
		return fmt.Errorf("committed: %w", err)
	}
	for _, tp := range committed {
		if tp.Offset != kafka.Offset(records/partitions) {
			return fmt.Errorf("partition %d committed at %v, want %d", tp.Partition, tp.Offset, records/partitions)
		}
	}
	fmt.Println("    rdkafka848: committed offsets at the end of every partition")
	return a.Close()
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
