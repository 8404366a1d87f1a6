// Command sarama runs klog's compatibility scenarios with IBM/sarama against
// any Kafka bootstrap address:
//
//	go run ./scripts/compat/sarama BROKERS
//
// It prints one "RESULT sarama <scenario> PASS|FAIL|SKIP <detail>" line per
// scenario on stdout and progress on stderr; it exits 1 if any scenario
// failed. sarama does not negotiate versions: it speaks the protocol of
// Config.Version, sarama.DefaultVersion unless KLOG_COMPAT_SARAMA_VERSION
// names another (for example 3.6.0). scripts/compat/README.md describes the
// scenarios.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klogdev/klog/scripts/compat/harness"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
)

const client = "sarama"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sarama BROKERS [scenario ...]")
		os.Exit(2)
	}
	if v := os.Getenv("KLOG_COMPAT_SARAMA_VERSION"); v != "" {
		parsed, err := sarama.ParseKafkaVersion(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "KLOG_COMPAT_SARAMA_VERSION: %v\n", err)
			os.Exit(2)
		}
		version = parsed
	}
	if harness.RunAll(client, os.Args[1], os.Args[2:], []harness.Scenario{
		{ID: "admin", Run: admin},
		{ID: "produce-consume", Run: produceConsume},
		{ID: "compression", Run: compression},
		{ID: "offsets-by-time", Run: offsetsByTime},
		{ID: "group", Run: group},
		{ID: "idempotent", Run: idempotent},
		{ID: "transactions", Run: transactions},
		{ID: "consume-transform-produce", Run: consumeTransformProduce},
	}) > 0 {
		os.Exit(1)
	}
}

// version is the protocol version every sarama client here speaks.
var version = sarama.DefaultVersion

func config() *sarama.Config {
	c := sarama.NewConfig()
	c.Version = version
	c.ClientID = "klog-compat-sarama"
	c.Net.DialTimeout = 5 * time.Second
	c.Net.ReadTimeout = 15 * time.Second
	c.Net.WriteTimeout = 5 * time.Second
	c.Metadata.Retry.Max = 10
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	c.Producer.Return.Successes = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Retry.Backoff = 100 * time.Millisecond
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.MaxWaitTime = 200 * time.Millisecond
	secure(c)
	return c
}

// secure sets c's TLS and SASL from KLOG_COMPAT_SECURITY's file; RunAll
// fails every scenario when it cannot be read.
func secure(c *sarama.Config) {
	sec, err := harness.LoadSecurity()
	if err != nil || sec == nil {
		return
	}
	if sec.TLS != nil {
		c.Net.TLS.Enable = true
		c.Net.TLS.Config = sec.TLS
	}
	if !sec.SASL() {
		return
	}
	c.Net.SASL.Enable = true
	c.Net.SASL.Handshake = true
	c.Net.SASL.Version = sarama.SASLHandshakeV1
	c.Net.SASL.User = sec.Username
	c.Net.SASL.Password = sec.Password
	c.Net.SASL.Mechanism = sarama.SASLMechanism(sec.Mechanism)
	switch sec.Mechanism {
	case sarama.SASLTypeSCRAMSHA512:
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: scram.SHA512} }
	case sarama.SASLTypeSCRAMSHA256:
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: scram.SHA256} }
	}
}

// scramClient is sarama's SCRAM conversation over xdg-go/scram, as
// sarama's documentation has an application write it.
type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (s *scramClient) Begin(user, password, authzID string) error {
	c, err := s.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}

func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }

func (s *scramClient) Done() bool { return s.conv.Done() }

// createTopic creates a topic and waits until its metadata lists every
// partition with a leader.
func createTopic(ctx context.Context, e *harness.Env, topic string, partitions int32, configs map[string]*string) error {
	adm, err := sarama.NewClusterAdmin(e.Brokers, config())
	if err != nil {
		return fmt.Errorf("new cluster admin: %w", err)
	}
	defer adm.Close()
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: configs}, false); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return waitTopic(ctx, e.Brokers, topic, partitions)
}

// waitTopic waits until every broker's metadata lists topic with its
// partitions, each with a leader. On a cluster a broker learns of a new
// topic a little after the controller answered (Kafka's admin client
// documents that it "may take several seconds" for all brokers to be
// aware), and sarama sends ListTopics, and a new consumer's first
// ListOffsets, to any broker: asking only the one ClusterAdmin picks would
// leave the others behind.
func waitTopic(ctx context.Context, brokers []string, topic string, partitions int32) error {
	cfg := config()
	cl, err := sarama.NewClient(brokers, cfg)
	if err != nil {
		return fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()
	return harness.WaitFor(ctx, fmt.Sprintf("topic %s has %d partitions with leaders on every broker", topic, partitions), func() (bool, error) {
		for _, b := range cl.Brokers() {
			if err := b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
				return false, nil
			}
			md, err := b.GetMetadata(sarama.NewMetadataRequest(cfg.Version, []string{topic}))
			if err != nil || len(md.Topics) != 1 || md.Topics[0].Err != sarama.ErrNoError || int32(len(md.Topics[0].Partitions)) != partitions {
				return false, nil
			}
			for _, p := range md.Topics[0].Partitions {
				if p.Err != sarama.ErrNoError || p.Leader < 0 {
					return false, nil
				}
			}
		}
		return true, nil
	})
}

func admin(ctx context.Context, e *harness.Env) (string, error) {
	adm, err := sarama.NewClusterAdmin(e.Brokers, config())
	if err != nil {
		return "", fmt.Errorf("new cluster admin: %w", err)
	}
	defer adm.Close()
	topic := e.Name("admin", "t")
	retention := "3600000"
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": &retention}}, false); err != nil {
		return "", fmt.Errorf("create topic: %w", err)
	}
	if err := waitTopic(ctx, e.Brokers, topic, 3); err != nil {
		return "", err
	}
	topics, err := adm.ListTopics()
	if err != nil {
		return "", fmt.Errorf("list topics: %w", err)
	}
	td, ok := topics[topic]
	if !ok {
		return "", fmt.Errorf("list topics: %s missing", topic)
	}
	if td.NumPartitions != 3 {
		return "", fmt.Errorf("list topics: %d partitions, want 3", td.NumPartitions)
	}
	describeConfig := func(want string) error {
		res, err := adm.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic}}, sarama.DescribeConfigsOptions{IncludeSynonyms: true})
		if err != nil {
			return fmt.Errorf("describe configs: %w", err)
		}
		if len(res) != 1 {
			return fmt.Errorf("describe configs: %d resources in answer", len(res))
		}
		if res[0].ErrorCode != sarama.ErrNoError {
			return fmt.Errorf("describe configs: %w: %s", res[0].ErrorCode, res[0].ErrorMsg)
		}
		for _, c := range res[0].Configs {
			if c.Name == "retention.ms" {
				if c.Value != want {
					return fmt.Errorf("retention.ms is %q, want %q", c.Value, want)
				}
				return nil
			}
		}
		return errors.New("describe configs: retention.ms missing")
	}
	// Kafka shows a config change a moment after acknowledging it.
	checkConfig := func(want string) error {
		return harness.Eventually(ctx, harness.ConfigWait, func() error { return describeConfig(want) })
	}
	if err := checkConfig("3600000"); err != nil {
		return "", fmt.Errorf("after create: %w", err)
	}
	v := "7200000"
	if err := adm.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v},
	}, false); err != nil {
		return "", fmt.Errorf("incremental alter configs: %w", err)
	}
	if err := checkConfig(v); err != nil {
		return "", fmt.Errorf("after incremental alter: %w", err)
	}
	// AlterConfigs (the legacy, non-incremental form) replaces the topic's
	// overrides with the given set.
	v2 := "10800000"
	if err := adm.AlterConfig(sarama.TopicResource, topic, map[string]*string{"retention.ms": &v2}, false); err != nil {
		return "", fmt.Errorf("alter configs: %w", err)
	}
	if err := checkConfig(v2); err != nil {
		return "", fmt.Errorf("after alter: %w", err)
	}
	if err := adm.CreatePartitions(topic, 4, nil, false); err != nil {
		return "", fmt.Errorf("create partitions: %w", err)
	}
	if err := waitTopic(ctx, e.Brokers, topic, 4); err != nil {
		return "", err
	}
	if err := adm.DeleteTopic(topic); err != nil {
		return "", fmt.Errorf("delete topic: %w", err)
	}
	if err := harness.WaitFor(ctx, "topic gone from list", func() (bool, error) {
		topics, err := adm.ListTopics()
		if err != nil {
			return false, nil
		}
		_, ok := topics[topic]
		return !ok, nil
	}); err != nil {
		return "", err
	}
	return fmt.Sprintf("version %s: create(3 partitions, retention.ms) list describe-configs incremental-alter alter add-partitions(4) delete", version), nil
}

// header is a comparable record header.
type header struct{ key, value string }

// record is the part of a record the scenarios compare.
type record struct {
	key, value string
	headers    []header
	ts         int64 // milliseconds
	partition  int32
	offset     int64
}

func fromSarama(m *sarama.ConsumerMessage) record {
	r := record{key: string(m.Key), value: string(m.Value), ts: m.Timestamp.UnixMilli(), partition: m.Partition, offset: m.Offset}
	for _, h := range m.Headers {
		r.headers = append(r.headers, header{string(h.Key), string(h.Value)})
	}
	return r
}

func (r record) String() string {
	return fmt.Sprintf("{key=%q value=%q headers=%v ts=%d}", r.key, r.value, r.headers, r.ts)
}

func sameRecord(a, b record) bool {
	return a.key == b.key && a.value == b.value && a.ts == b.ts && slices.Equal(a.headers, b.headers)
}

// consumeN reads n records from the start of every partition of topic with
// partition consumers (no group).
func consumeN(ctx context.Context, e *harness.Env, topic string, n int, isolation sarama.IsolationLevel) ([]record, error) {
	cfg := config()
	cfg.Consumer.IsolationLevel = isolation
	c, err := sarama.NewConsumer(e.Brokers, cfg)
	if err != nil {
		return nil, fmt.Errorf("new consumer: %w", err)
	}
	defer c.Close()
	parts, err := c.Partitions(topic)
	if err != nil {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	msgs := make(chan *sarama.ConsumerMessage)
	errs := make(chan error, len(parts))
	var wg sync.WaitGroup
	defer wg.Wait()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, p := range parts {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, fmt.Errorf("consume partition %d: %w", p, err)
		}
		wg.Go(func() {
			defer pc.Close()
			for {
				select {
				case <-cctx.Done():
					return
				case m := <-pc.Messages():
					select {
					case msgs <- m:
					case <-cctx.Done():
						return
					}
				case err := <-pc.Errors():
					errs <- err
					return
				}
			}
		})
	}
	var got []record
	for len(got) < n {
		select {
		case m := <-msgs:
			got = append(got, fromSarama(m))
		case err := <-errs:
			return got, fmt.Errorf("consume: %w", err)
		case <-ctx.Done():
			return got, fmt.Errorf("consumed %d of %d records: %w", len(got), n, ctx.Err())
		}
	}
	return got, nil
}

func produceConsume(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("pc", "t")
	if err := createTopic(ctx, e, topic, 1, nil); err != nil {
		return "", err
	}
	p, err := sarama.NewSyncProducer(e.Brokers, config())
	if err != nil {
		return "", fmt.Errorf("new producer: %w", err)
	}
	defer p.Close()
	base := time.Now().Add(-time.Hour).UnixMilli()
	var want []record
	var batch []*sarama.ProducerMessage
	for i := range 20 {
		r := record{
			key:     fmt.Sprintf("key-%d", i%5),
			value:   fmt.Sprintf("value-%d", i),
			ts:      base + int64(i)*1000,
			headers: []header{{"h1", "a" + strconv.Itoa(i)}, {"dup", "first"}, {"dup", "second"}, {"empty", ""}},
		}
		if i == 7 {
			r.key = ""
			r.headers = nil
		}
		want = append(want, r)
		m := &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(r.value), Timestamp: time.UnixMilli(r.ts)}
		if r.key != "" {
			m.Key = sarama.StringEncoder(r.key)
		}
		for _, h := range r.headers {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.key), Value: []byte(h.value)})
		}
		batch = append(batch, m)
	}
	if err := p.SendMessages(batch); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	got, err := consumeN(ctx, e, topic, len(want), sarama.ReadUncommitted)
	if err != nil {
		return "", err
	}
	for i := range want {
		if !sameRecord(got[i], want[i]) {
			return "", fmt.Errorf("record %d: got %v, want %v", i, got[i], want[i])
		}
		if got[i].offset != int64(i) {
			return "", fmt.Errorf("record %d at offset %d", i, got[i].offset)
		}
	}
	return fmt.Sprintf("%d records: keys, null key, headers incl. duplicate keys and empty value, explicit timestamps", len(want)), nil
}

func compression(ctx context.Context, e *harness.Env) (string, error) {
	codecs := []sarama.CompressionCodec{sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD}
	var checked []string
	for _, codec := range codecs {
		topic := e.Name("comp", codec.String())
		if err := createTopic(ctx, e, topic, 1, nil); err != nil {
			return "", err
		}
		cfg := config()
		cfg.Producer.Compression = codec
		cfg.Producer.Flush.Messages = 50
		cfg.Producer.Flush.Frequency = 50 * time.Millisecond
		p, err := sarama.NewSyncProducer(e.Brokers, cfg)
		if err != nil {
			return "", fmt.Errorf("%s: new producer: %w", codec, err)
		}
		var want []string
		var batch []*sarama.ProducerMessage
		for i := range 50 {
			v := fmt.Sprintf("%s-%d-%s", codec, i, strings.Repeat("abc", 30))
			want = append(want, v)
			batch = append(batch, &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(v)})
		}
		err = p.SendMessages(batch)
		p.Close()
		if err != nil {
			return "", fmt.Errorf("%s: produce: %w", codec, err)
		}
		got, err := consumeN(ctx, e, topic, len(want), sarama.ReadUncommitted)
		if err != nil {
			return "", fmt.Errorf("%s: %w", codec, err)
		}
		for i := range want {
			if got[i].value != want[i] {
				return "", fmt.Errorf("%s: record %d is %q, want %q", codec, i, got[i].value, want[i])
			}
		}
		checked = append(checked, codec.String())
	}
	return fmt.Sprintf("codecs %v, 50 records each", checked), nil
}

func offsetsByTime(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("obt", "t")
	if err := createTopic(ctx, e, topic, 1, nil); err != nil {
		return "", err
	}
	p, err := sarama.NewSyncProducer(e.Brokers, config())
	if err != nil {
		return "", fmt.Errorf("new producer: %w", err)
	}
	defer p.Close()
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	for i := range 10 {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(strconv.Itoa(i)), Timestamp: time.UnixMilli(base + int64(i)*10_000)}); err != nil {
			return "", fmt.Errorf("produce: %w", err)
		}
	}
	cl, err := sarama.NewClient(e.Brokers, config())
	if err != nil {
		return "", fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()
	cases := []struct {
		ts   int64
		want int64
	}{
		{base - 1, 0},
		{base, 0},
		{base + 15_000, 2},
		{base + 30_000, 3},
		{base + 90_000, 9},
		{base + 95_000, -1}, // no record at or after: Kafka answers offset -1
	}
	for _, c := range cases {
		off, err := cl.GetOffset(topic, 0, c.ts)
		if err != nil {
			return "", fmt.Errorf("list offsets at base%+dms: %w", c.ts-base, err)
		}
		if off != c.want {
			return "", fmt.Errorf("list offsets at base%+dms: offset %d, want %d", c.ts-base, off, c.want)
		}
	}
	return fmt.Sprintf("%d lookups with Client.GetOffset (before, exact, between, last, after end → -1) over 10 records", len(cases)), nil
}

// member is one consumer-group member: a sarama.ConsumerGroup and the
// handler that records its claims and records.
type member struct {
	cg    sarama.ConsumerGroup
	topic string
	mu    struct {
		sync.Mutex
		records  []record
		assigned []int32
	}
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.assigned = slices.Clone(s.Claims()[m.topic])
	slices.Sort(m.mu.assigned)
	return nil
}

func (m *member) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.assigned = nil
	return nil
}

func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		m.mu.Lock()
		m.mu.records = append(m.mu.records, fromSarama(msg))
		m.mu.Unlock()
		s.MarkMessage(msg, "")
		s.Commit()
	}
	return nil
}

func (m *member) snapshot() ([]record, []int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.mu.records), slices.Clone(m.mu.assigned)
}

// run calls Consume until ctx ends, as sarama requires after each
// rebalance; the first error other than a closed group is sent on errs.
func (m *member) run(ctx context.Context, errs chan<- error) {
	for ctx.Err() == nil {
		if err := m.cg.Consume(ctx, []string{m.topic}, m); err != nil {
			if errors.Is(err, sarama.ErrClosedConsumerGroup) || ctx.Err() != nil {
				return
			}
			select {
			case errs <- err:
			default:
			}
			return
		}
	}
}

func newMember(e *harness.Env, groupName, topic string) (*member, error) {
	cfg := config()
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	cg, err := sarama.NewConsumerGroup(e.Brokers, groupName, cfg)
	if err != nil {
		return nil, fmt.Errorf("new consumer group: %w", err)
	}
	return &member{cg: cg, topic: topic}, nil
}

func group(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("group", "t")
	groupName := e.Name("group", "g")
	const partitions = 4
	if err := createTopic(ctx, e, topic, partitions, nil); err != nil {
		return "", err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	errs := make(chan error, 3)
	var members []*member
	for range 2 {
		m, err := newMember(e, groupName, topic)
		if err != nil {
			return "", err
		}
		defer m.cg.Close()
		members = append(members, m)
		wg.Go(func() { m.run(runCtx, errs) })
	}
	var split [2][]int32
	if err := harness.WaitFor(ctx, "both members assigned", func() (bool, error) {
		select {
		case err := <-errs:
			return false, err
		default:
		}
		_, a := members[0].snapshot()
		_, b := members[1].snapshot()
		split = [2][]int32{a, b}
		all := append(slices.Clone(a), b...)
		slices.Sort(all)
		return len(a) > 0 && len(b) > 0 && len(slices.Compact(slices.Clone(all))) == partitions && len(all) == partitions, nil
	}); err != nil {
		return "", fmt.Errorf("%w (assignments %v)", err, split)
	}

	produce := func(from, to int) error {
		cfg := config()
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
		p, err := sarama.NewSyncProducer(e.Brokers, cfg)
		if err != nil {
			return fmt.Errorf("new producer: %w", err)
		}
		defer p.Close()
		var batch []*sarama.ProducerMessage
		for i := from; i < to; i++ {
			batch = append(batch, &sarama.ProducerMessage{Topic: topic, Partition: int32(i % partitions), Value: sarama.StringEncoder(strconv.Itoa(i))})
		}
		return p.SendMessages(batch)
	}
	const first = 40
	if err := produce(0, first); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	if err := harness.WaitFor(ctx, "members consume the first records", func() (bool, error) {
		a, _ := members[0].snapshot()
		b, _ := members[1].snapshot()
		return len(a)+len(b) >= first, nil
	}); err != nil {
		return "", err
	}
	stop()
	for _, m := range members {
		if err := m.cg.Close(); err != nil {
			return "", fmt.Errorf("close member: %w", err)
		}
	}
	wg.Wait()
	seen := map[string]int{}
	var counts [2]int
	for i, m := range members {
		recs, _ := m.snapshot()
		counts[i] = len(recs)
		for _, r := range recs {
			seen[r.value]++
		}
	}
	if len(seen) != first || counts[0]+counts[1] != first {
		return "", fmt.Errorf("members consumed %d+%d records, %d distinct, want %d each once", counts[0], counts[1], len(seen), first)
	}
	if counts[0] == 0 || counts[1] == 0 {
		return "", fmt.Errorf("records not shared: members consumed %d and %d", counts[0], counts[1])
	}

	adm, err := sarama.NewClusterAdmin(e.Brokers, config())
	if err != nil {
		return "", fmt.Errorf("new cluster admin: %w", err)
	}
	defer adm.Close()
	offs, err := adm.ListConsumerGroupOffsets(groupName, map[string][]int32{topic: {0, 1, 2, 3}})
	if err != nil {
		return "", fmt.Errorf("offset fetch: %w", err)
	}
	var committed int64
	for _, b := range offs.Blocks[topic] {
		committed += b.Offset
	}
	if committed != first {
		return "", fmt.Errorf("committed offsets sum to %d, want %d", committed, first)
	}

	const second = 20
	if err := produce(first, first+second); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	m, err := newMember(e, groupName, topic)
	if err != nil {
		return "", err
	}
	defer m.cg.Close()
	runCtx2, stop2 := context.WithCancel(ctx)
	defer stop2()
	wg.Go(func() { m.run(runCtx2, errs) })
	if err := harness.WaitFor(ctx, "restarted member consumes the new records", func() (bool, error) {
		select {
		case err := <-errs:
			return false, err
		default:
		}
		recs, _ := m.snapshot()
		for _, r := range recs {
			if n, _ := strconv.Atoi(r.value); n < first {
				return false, fmt.Errorf("restarted member re-read record %s (before the committed offset)", r.value)
			}
		}
		return len(recs) >= second, nil
	}); err != nil {
		return "", err
	}
	stop2()
	m.cg.Close()
	wg.Wait()
	if recs, _ := m.snapshot(); len(recs) != second {
		return "", fmt.Errorf("restarted member consumed %d records, want %d", len(recs), second)
	}
	return fmt.Sprintf("2 members split %v/%v, consumed %d+%d once, committed, restart resumed with %d new", split[0], split[1], counts[0], counts[1], second), nil
}

func idempotentConfig() *sarama.Config {
	cfg := config()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Retry.Max = 5
	return cfg
}

func idempotent(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("idem", "t")
	if err := createTopic(ctx, e, topic, 3, nil); err != nil {
		return "", err
	}
	p, err := sarama.NewSyncProducer(e.Brokers, idempotentConfig())
	if err != nil {
		return "", fmt.Errorf("new producer: %w", err)
	}
	defer p.Close()
	const n = 500
	var batch []*sarama.ProducerMessage
	for i := range n {
		batch = append(batch, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(strconv.Itoa(i)), Value: sarama.StringEncoder(strconv.Itoa(i))})
	}
	if err := p.SendMessages(batch); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	cl, err := sarama.NewClient(e.Brokers, config())
	if err != nil {
		return "", fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()
	var total int64
	for part := range int32(3) {
		off, err := cl.GetOffset(topic, part, sarama.OffsetNewest)
		if err != nil {
			return "", fmt.Errorf("end offset of partition %d: %w", part, err)
		}
		total += off
	}
	if total != n {
		return "", fmt.Errorf("end offsets sum to %d, want %d", total, n)
	}
	got, err := consumeN(ctx, e, topic, n, sarama.ReadUncommitted)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.value] {
			return "", fmt.Errorf("record %s twice", r.value)
		}
		seen[r.value] = true
	}
	return fmt.Sprintf("%d records over 3 partitions landed once", n), nil
}

func transactionalConfig(id string) *sarama.Config {
	cfg := idempotentConfig()
	cfg.Producer.Transaction.ID = id
	cfg.Producer.Transaction.Timeout = 30 * time.Second
	cfg.Producer.Transaction.Retry.Backoff = 100 * time.Millisecond
	return cfg
}

func transactions(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("txn", "t")
	if err := createTopic(ctx, e, topic, 2, nil); err != nil {
		return "", err
	}
	p, err := sarama.NewSyncProducer(e.Brokers, transactionalConfig(e.Name("txn", "id")))
	if err != nil {
		return "", fmt.Errorf("new transactional producer: %w", err)
	}
	defer p.Close()
	txn := func(prefix string, n int, commit bool) error {
		if err := p.BeginTxn(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		var batch []*sarama.ProducerMessage
		for i := range n {
			batch = append(batch, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(strconv.Itoa(i)), Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", prefix, i))})
		}
		if err := p.SendMessages(batch); err != nil {
			return fmt.Errorf("produce %s: %w", prefix, err)
		}
		if commit {
			if err := p.CommitTxn(); err != nil {
				return fmt.Errorf("commit %s: %w", prefix, err)
			}
			return nil
		}
		if err := p.AbortTxn(); err != nil {
			return fmt.Errorf("abort %s: %w", prefix, err)
		}
		return nil
	}
	if err := txn("committed1", 10, true); err != nil {
		return "", err
	}
	if err := txn("aborted", 10, false); err != nil {
		return "", err
	}
	if err := txn("committed2", 10, true); err != nil {
		return "", err
	}
	got, err := consumeN(ctx, e, topic, 20, sarama.ReadCommitted)
	if err != nil {
		return "", err
	}
	for _, r := range got {
		if !strings.HasPrefix(r.value, "committed") {
			return "", fmt.Errorf("read_committed consumer saw %q", r.value)
		}
	}
	all, err := consumeN(ctx, e, topic, 30, sarama.ReadUncommitted)
	if err != nil {
		return "", fmt.Errorf("read_uncommitted: %w", err)
	}
	return fmt.Sprintf("commit 10, abort 10, commit 10: read_committed saw 20, read_uncommitted %d", len(all)), nil
}

// transformer is a group handler that copies each input record to the
// output topic in its own transaction, with the input offset committed in
// the same transaction.
type transformer struct {
	p         sarama.SyncProducer
	groupName string
	out       string
	mu        struct {
		sync.Mutex // serialises transactions across claims
		done       int
		err        error
	}
}

func (t *transformer) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (t *transformer) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (t *transformer) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		if err := t.transform(msg); err != nil {
			t.mu.Lock()
			if t.mu.err == nil {
				t.mu.err = err
			}
			t.mu.Unlock()
			return err
		}
	}
	return nil
}

func (t *transformer) transform(msg *sarama.ConsumerMessage) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.p.BeginTxn(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	out := &sarama.ProducerMessage{Topic: t.out, Key: sarama.ByteEncoder(msg.Key), Value: sarama.StringEncoder("out-" + string(msg.Value))}
	if _, _, err := t.p.SendMessage(out); err != nil {
		_ = t.p.AbortTxn()
		return fmt.Errorf("produce: %w", err)
	}
	if err := t.p.AddMessageToTxn(msg, t.groupName, nil); err != nil {
		_ = t.p.AbortTxn()
		return fmt.Errorf("add offsets to txn: %w", err)
	}
	if err := t.p.CommitTxn(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	t.mu.done++
	return nil
}

func (t *transformer) state() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.done, t.mu.err
}

func consumeTransformProduce(ctx context.Context, e *harness.Env) (string, error) {
	in, out := e.Name("ctp", "in"), e.Name("ctp", "out")
	groupName := e.Name("ctp", "g")
	const n = 30
	for _, t := range []string{in, out} {
		if err := createTopic(ctx, e, t, 2, nil); err != nil {
			return "", err
		}
	}
	{
		p, err := sarama.NewSyncProducer(e.Brokers, config())
		if err != nil {
			return "", fmt.Errorf("new producer: %w", err)
		}
		var batch []*sarama.ProducerMessage
		for i := range n {
			batch = append(batch, &sarama.ProducerMessage{Topic: in, Key: sarama.StringEncoder(strconv.Itoa(i)), Value: sarama.StringEncoder(strconv.Itoa(i))})
		}
		err = p.SendMessages(batch)
		p.Close()
		if err != nil {
			return "", fmt.Errorf("produce input: %w", err)
		}
	}
	p, err := sarama.NewSyncProducer(e.Brokers, transactionalConfig(e.Name("ctp", "id")))
	if err != nil {
		return "", fmt.Errorf("new transactional producer: %w", err)
	}
	defer p.Close()
	cfg := config()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cg, err := sarama.NewConsumerGroup(e.Brokers, groupName, cfg)
	if err != nil {
		return "", fmt.Errorf("new consumer group: %w", err)
	}
	defer cg.Close()
	t := &transformer{p: p, groupName: groupName, out: out}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	consumeErr := make(chan error, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for runCtx.Err() == nil {
			if err := cg.Consume(runCtx, []string{in}, t); err != nil {
				if !errors.Is(err, sarama.ErrClosedConsumerGroup) && runCtx.Err() == nil {
					consumeErr <- err
				}
				return
			}
		}
	})
	if err := harness.WaitFor(ctx, "all input transformed", func() (bool, error) {
		select {
		case err := <-consumeErr:
			return false, err
		default:
		}
		done, err := t.state()
		return done >= n, err
	}); err != nil {
		return "", err
	}
	stop()
	cg.Close()
	wg.Wait()

	got, err := consumeN(ctx, e, out, n, sarama.ReadCommitted)
	if err != nil {
		return "", fmt.Errorf("read output: %w", err)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.value] {
			return "", fmt.Errorf("output has %s twice", r.value)
		}
		seen[r.value] = true
	}
	for i := range n {
		if !seen["out-"+strconv.Itoa(i)] {
			return "", fmt.Errorf("output misses out-%d", i)
		}
	}
	adm, err := sarama.NewClusterAdmin(e.Brokers, config())
	if err != nil {
		return "", fmt.Errorf("new cluster admin: %w", err)
	}
	defer adm.Close()
	offs, err := adm.ListConsumerGroupOffsets(groupName, map[string][]int32{in: {0, 1}})
	if err != nil {
		return "", fmt.Errorf("offset fetch: %w", err)
	}
	var committed int64
	for _, b := range offs.Blocks[in] {
		committed += b.Offset
	}
	if committed != n {
		return "", fmt.Errorf("group committed offsets sum to %d, want %d", committed, n)
	}
	return fmt.Sprintf("%d records, one transaction each with AddMessageToTxn, output exactly once, offsets committed in the transaction", n), nil
}
