// Command kafkago runs klog's compatibility scenarios with segmentio/kafka-go
// against any Kafka bootstrap address:
//
//	go run ./scripts/compat/kafkago BROKERS
//
// It prints one "RESULT kafka-go <scenario> PASS|FAIL|SKIP <detail>" line per
// scenario on stdout and progress on stderr; it exits 1 if any scenario
// failed. kafka-go has no idempotent or transactional producer, so those
// scenarios are skipped. scripts/compat/README.md describes the scenarios.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klogdev/klog/scripts/compat/harness"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

const client = "kafka-go"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kafkago BROKERS [scenario ...]")
		os.Exit(2)
	}
	noProducerState := func(what string) func(context.Context, *harness.Env) (string, error) {
		return func(context.Context, *harness.Env) (string, error) {
			return "", harness.Skipf("kafka-go's Writer has no %s producer", what)
		}
	}
	if harness.RunAll(client, os.Args[1], os.Args[2:], []harness.Scenario{
		{ID: "admin", Run: admin},
		{ID: "produce-consume", Run: produceConsume},
		{ID: "compression", Run: compression},
		{ID: "offsets-by-time", Run: offsetsByTime},
		{ID: "group", Run: group},
		{ID: "idempotent", Run: noProducerState("idempotent")},
		{ID: "transactions", Run: noProducerState("transactional")},
		{ID: "consume-transform-produce", Run: noProducerState("transactional")},
	}) > 0 {
		os.Exit(1)
	}
}

func newClient(e *harness.Env) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(e.Brokers...), Timeout: 10 * time.Second, Transport: transport(e)}
}

// transport is the Transport of Clients and Writers with the TLS and
// SASL of KLOG_COMPAT_SECURITY's file; nil (kafka-go's default) without.
func transport(e *harness.Env) kafka.RoundTripper {
	if e.Security == nil {
		return nil
	}
	return &kafka.Transport{TLS: e.Security.TLS, SASL: mechanism(e)}
}

// dialer is the Dialer of Readers, with the same security.
func dialer(e *harness.Env) *kafka.Dialer {
	if e.Security == nil {
		return nil
	}
	return &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: e.Security.TLS, SASLMechanism: mechanism(e)}
}

// mechanism is the SASL mechanism of the settings, nil without SASL.
func mechanism(e *harness.Env) sasl.Mechanism {
	s := e.Security
	if !s.SASL() {
		return nil
	}
	var m sasl.Mechanism
	var err error
	switch s.Mechanism {
	case "SCRAM-SHA-512":
		m, err = scram.Mechanism(scram.SHA512, s.Username, s.Password)
	case "SCRAM-SHA-256":
		m, err = scram.Mechanism(scram.SHA256, s.Username, s.Password)
	default:
		m = plain.Mechanism{Username: s.Username, Password: s.Password}
	}
	if err != nil {
		panic(fmt.Sprintf("SCRAM mechanism: %v", err)) // only for an empty user or password, which kafkaconn refuses
	}
	return m
}

// waitTopic waits until every broker's metadata lists every partition of
// topic with a leader: the writer asks any of them, and a loaded node of
// a cluster can learn of a new topic seconds after the others (kafka-go's
// writer gave up on UNKNOWN_TOPIC_OR_PARTITION within its 5 attempts).
func waitTopic(ctx context.Context, cl *kafka.Client, topic string, partitions int) error {
	return harness.WaitFor(ctx, fmt.Sprintf("topic %s has %d partitions with leaders on every broker", topic, partitions), func() (bool, error) {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil || !topicReady(md, topic, partitions) {
			return false, nil
		}
		for _, b := range md.Brokers {
			bmd, err := cl.Metadata(ctx, &kafka.MetadataRequest{Addr: kafka.TCP(net.JoinHostPort(b.Host, strconv.Itoa(b.Port))), Topics: []string{topic}})
			if err != nil || !topicReady(bmd, topic, partitions) {
				return false, nil
			}
		}
		return true, nil
	})
}

// topicReady reports whether md lists topic with its partitions, each
// with a leader.
func topicReady(md *kafka.MetadataResponse, topic string, partitions int) bool {
	if len(md.Topics) != 1 || md.Topics[0].Error != nil || len(md.Topics[0].Partitions) != partitions {
		return false
	}
	for _, p := range md.Topics[0].Partitions {
		if p.Error != nil || p.Leader.ID < 0 || p.Leader.Host == "" {
			return false
		}
	}
	return true
}

func createTopic(ctx context.Context, e *harness.Env, topic string, partitions int, configs ...kafka.ConfigEntry) error {
	cl := newClient(e)
	resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: configs,
	}}})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return waitTopic(ctx, cl, topic, partitions)
}

func admin(ctx context.Context, e *harness.Env) (string, error) {
	cl := newClient(e)
	topic := e.Name("admin", "t")
	if err := createTopic(ctx, e, topic, 3, kafka.ConfigEntry{ConfigName: "retention.ms", ConfigValue: "3600000"}); err != nil {
		return "", err
	}
	describeConfig := func(want string) error {
		resp, err := cl.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		}}})
		if err != nil {
			return fmt.Errorf("describe configs: %w", err)
		}
		if len(resp.Resources) != 1 {
			return fmt.Errorf("describe configs: %d resources", len(resp.Resources))
		}
		if resp.Resources[0].Error != nil {
			return fmt.Errorf("describe configs: %w", resp.Resources[0].Error)
		}
		for _, c := range resp.Resources[0].ConfigEntries {
			if c.ConfigName == "retention.ms" {
				if c.ConfigValue != want {
					return fmt.Errorf("retention.ms is %q, want %q", c.ConfigValue, want)
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
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return "", fmt.Errorf("metadata (all topics): %w", err)
	}
	if !slices.ContainsFunc(md.Topics, func(t kafka.Topic) bool { return t.Name == topic }) {
		return "", fmt.Errorf("metadata (all topics): %s missing", topic)
	}
	ia, err := cl.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", Value: "7200000", ConfigOperation: kafka.ConfigOperationSet}},
	}}})
	if err == nil && len(ia.Resources) == 1 {
		err = ia.Resources[0].Error
	}
	if err != nil {
		return "", fmt.Errorf("incremental alter configs: %w", err)
	}
	if err := checkConfig("7200000"); err != nil {
		return "", fmt.Errorf("after incremental alter: %w", err)
	}
	cp, err := cl.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 4}}})
	if err == nil {
		err = cp.Errors[topic]
	}
	if err != nil {
		return "", fmt.Errorf("create partitions: %w", err)
	}
	if err := waitTopic(ctx, cl, topic, 4); err != nil {
		return "", err
	}
	dt, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err == nil {
		err = dt.Errors[topic]
	}
	if err != nil {
		return "", fmt.Errorf("delete topic: %w", err)
	}
	if err := harness.WaitFor(ctx, "topic gone from metadata", func() (bool, error) {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
		if err != nil {
			return false, nil
		}
		return !slices.ContainsFunc(md.Topics, func(t kafka.Topic) bool { return t.Name == topic }), nil
	}); err != nil {
		return "", err
	}
	return "create(3 partitions, retention.ms) metadata describe-configs incremental-alter add-partitions(4) delete", nil
}

// header is a comparable record header.
type header struct{ key, value string }

// record is the part of a record the scenarios compare.
type record struct {
	key, value string
	headers    []header
	ts         int64 // milliseconds
	partition  int
	offset     int64
}

func fromKafkaGo(m kafka.Message) record {
	r := record{key: string(m.Key), value: string(m.Value), ts: m.Time.UnixMilli(), partition: m.Partition, offset: m.Offset}
	for _, h := range m.Headers {
		r.headers = append(r.headers, header{h.Key, string(h.Value)})
	}
	return r
}

func (r record) String() string {
	return fmt.Sprintf("{key=%q value=%q headers=%v ts=%d}", r.key, r.value, r.headers, r.ts)
}

func sameRecord(a, b record) bool {
	return a.key == b.key && a.value == b.value && a.ts == b.ts && slices.Equal(a.headers, b.headers)
}

func newWriter(e *harness.Env, topic string, codec compress.Compression) *kafka.Writer {
	return &kafka.Writer{
		Addr:         kafka.TCP(e.Brokers...),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		BatchTimeout: 10 * time.Millisecond,
		RequiredAcks: kafka.RequireAll,
		Compression:  codec,
		MaxAttempts:  5,
		Transport:    transport(e),
	}
}

// consumePartition reads n records from the start of one partition.
func consumePartition(ctx context.Context, e *harness.Env, topic string, partition, n int) ([]record, error) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   e.Brokers,
		Topic:     topic,
		Partition: partition,
		MinBytes:  1,
		MaxBytes:  1 << 20,
		MaxWait:   250 * time.Millisecond,
		Dialer:    dialer(e),
	})
	defer r.Close()
	var got []record
	for len(got) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return got, fmt.Errorf("read %d of %d records: %w", len(got), n, err)
		}
		got = append(got, fromKafkaGo(m))
	}
	return got, nil
}

func produceConsume(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("pc", "t")
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return "", err
	}
	w := newWriter(e, topic, 0)
	defer w.Close()
	base := time.Now().Add(-time.Hour).UnixMilli()
	var want []record
	var msgs []kafka.Message
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
		m := kafka.Message{Value: []byte(r.value), Time: time.UnixMilli(r.ts)}
		if r.key != "" {
			m.Key = []byte(r.key)
		}
		for _, h := range r.headers {
			m.Headers = append(m.Headers, kafka.Header{Key: h.key, Value: []byte(h.value)})
		}
		msgs = append(msgs, m)
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	got, err := consumePartition(ctx, e, topic, 0, len(want))
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
	codecs := []compress.Compression{kafka.Gzip, kafka.Snappy, kafka.Lz4, kafka.Zstd}
	var checked []string
	for _, codec := range codecs {
		topic := e.Name("comp", codec.String())
		if err := createTopic(ctx, e, topic, 1); err != nil {
			return "", err
		}
		w := newWriter(e, topic, codec)
		var want []string
		var msgs []kafka.Message
		for i := range 50 {
			v := fmt.Sprintf("%s-%d-%s", codec, i, strings.Repeat("abc", 30))
			want = append(want, v)
			msgs = append(msgs, kafka.Message{Value: []byte(v)})
		}
		err := w.WriteMessages(ctx, msgs...)
		w.Close()
		if err != nil {
			return "", fmt.Errorf("%s: produce: %w", codec, err)
		}
		got, err := consumePartition(ctx, e, topic, 0, len(want))
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
	if err := createTopic(ctx, e, topic, 1); err != nil {
		return "", err
	}
	w := newWriter(e, topic, 0)
	defer w.Close()
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	for i := range 10 {
		if err := w.WriteMessages(ctx, kafka.Message{Value: []byte(strconv.Itoa(i)), Time: time.UnixMilli(base + int64(i)*10_000)}); err != nil {
			return "", fmt.Errorf("produce: %w", err)
		}
	}
	cl := newClient(e)
	cases := []struct {
		ts   int64
		want int64 // -1: no record at or after ts
	}{
		{base - 1, 0},
		{base, 0},
		{base + 15_000, 2},
		{base + 30_000, 3},
		{base + 90_000, 9},
		{base + 95_000, -1},
	}
	for _, c := range cases {
		resp, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
			topic: {kafka.TimeOffsetOf(0, time.UnixMilli(c.ts))},
		}})
		if err != nil {
			return "", fmt.Errorf("list offsets at base%+dms: %w", c.ts-base, err)
		}
		ps := resp.Topics[topic]
		if len(ps) != 1 {
			return "", fmt.Errorf("list offsets at base%+dms: %d partitions in answer", c.ts-base, len(ps))
		}
		if ps[0].Error != nil {
			return "", fmt.Errorf("list offsets at base%+dms: %w", c.ts-base, ps[0].Error)
		}
		// kafka-go keys a timestamp answer by offset; Kafka's "no such
		// record" answer (offset -1, timestamp -1) leaves the map empty.
		got := int64(-1)
		for off := range ps[0].Offsets {
			got = off
		}
		if len(ps[0].Offsets) > 1 || got != c.want {
			return "", fmt.Errorf("list offsets at base%+dms: offsets %v, want %d", c.ts-base, ps[0].Offsets, c.want)
		}
	}
	return fmt.Sprintf("%d lookups with Client.ListOffsets (before, exact, between, last, after end) over 10 records", len(cases)), nil
}

// member is one consumer-group member: a group Reader and what it read.
type member struct {
	r  *kafka.Reader
	mu struct {
		sync.Mutex
		records []record
		err     error
	}
}

func newMember(e *harness.Env, groupName, topic string) *member {
	return &member{r: kafka.NewReader(kafka.ReaderConfig{
		Brokers:           e.Brokers,
		GroupID:           groupName,
		Topic:             topic,
		MinBytes:          1,
		MaxBytes:          1 << 20,
		MaxWait:           250 * time.Millisecond,
		HeartbeatInterval: 300 * time.Millisecond,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  200 * time.Millisecond,
		StartOffset:       kafka.FirstOffset,
		CommitInterval:    0, // synchronous commits
		Dialer:            dialer(e),
	})}
}

// run fetches and commits each record until ctx ends or an error.
func (m *member) run(ctx context.Context) {
	for {
		msg, err := m.r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				m.setErr(fmt.Errorf("fetch: %w", err))
			}
			return
		}
		m.mu.Lock()
		m.mu.records = append(m.mu.records, fromKafkaGo(msg))
		m.mu.Unlock()
		if err := m.r.CommitMessages(ctx, msg); err != nil {
			if ctx.Err() == nil {
				m.setErr(fmt.Errorf("commit: %w", err))
			}
			return
		}
	}
}

func (m *member) setErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.err == nil {
		m.mu.err = err
	}
}

func (m *member) snapshot() ([]record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.mu.records), m.mu.err
}

// assignments reads the group's members and partitions with DescribeGroups.
func assignments(ctx context.Context, cl *kafka.Client, groupName, topic string) (state string, parts [][]int, err error) {
	resp, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{groupName}})
	if err != nil {
		return "", nil, err
	}
	if len(resp.Groups) != 1 {
		return "", nil, fmt.Errorf("%d groups in answer", len(resp.Groups))
	}
	g := resp.Groups[0]
	if g.Error != nil {
		return "", nil, g.Error
	}
	for _, mem := range g.Members {
		var ps []int
		for _, t := range mem.MemberAssignments.Topics {
			if t.Topic == topic {
				ps = append(ps, t.Partitions...)
			}
		}
		slices.Sort(ps)
		parts = append(parts, ps)
	}
	return g.GroupState, parts, nil
}

func group(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("group", "t")
	groupName := e.Name("group", "g")
	const partitions = 4
	if err := createTopic(ctx, e, topic, partitions); err != nil {
		return "", err
	}
	cl := newClient(e)
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	var members []*member
	for range 2 {
		m := newMember(e, groupName, topic)
		defer m.r.Close()
		members = append(members, m)
		wg.Go(func() { m.run(runCtx) })
	}
	var split [][]int
	if err := harness.WaitFor(ctx, "group stable with both members assigned", func() (bool, error) {
		for _, m := range members {
			if _, err := m.snapshot(); err != nil {
				return false, err
			}
		}
		state, parts, err := assignments(ctx, cl, groupName, topic)
		if err != nil {
			return false, nil
		}
		split = parts
		return state == "Stable" && len(parts) == 2 && len(parts[0]) > 0 && len(parts[1]) > 0 && len(parts[0])+len(parts[1]) == partitions, nil
	}); err != nil {
		return "", fmt.Errorf("%w (assignments %v)", err, split)
	}

	produce := func(from, to int) error {
		w := newWriter(e, topic, 0)
		w.Balancer = kafka.BalancerFunc(func(m kafka.Message, _ ...int) int {
			n, _ := strconv.Atoi(string(m.Value))
			return n % partitions
		})
		defer w.Close()
		var msgs []kafka.Message
		for i := from; i < to; i++ {
			msgs = append(msgs, kafka.Message{Value: []byte(strconv.Itoa(i))})
		}
		return w.WriteMessages(ctx, msgs...)
	}
	const first = 40
	if err := produce(0, first); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	if err := harness.WaitFor(ctx, "members consume the first records", func() (bool, error) {
		a, errA := members[0].snapshot()
		b, errB := members[1].snapshot()
		if err := errors.Join(errA, errB); err != nil {
			return false, err
		}
		return len(a)+len(b) >= first, nil
	}); err != nil {
		return "", err
	}
	stop()
	wg.Wait()
	for _, m := range members {
		if err := m.r.Close(); err != nil {
			return "", fmt.Errorf("close reader: %w", err)
		}
	}
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
	offs, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: groupName, Topics: map[string][]int{topic: {0, 1, 2, 3}}})
	if err == nil {
		err = offs.Error
	}
	if err != nil {
		return "", fmt.Errorf("offset fetch: %w", err)
	}
	var committed int64
	for _, p := range offs.Topics[topic] {
		committed += p.CommittedOffset
	}
	if committed != first {
		return "", fmt.Errorf("committed offsets sum to %d, want %d", committed, first)
	}

	const second = 20
	if err := produce(first, first+second); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	m := newMember(e, groupName, topic)
	defer m.r.Close()
	runCtx2, stop2 := context.WithCancel(ctx)
	defer stop2()
	wg.Go(func() { m.run(runCtx2) })
	if err := harness.WaitFor(ctx, "restarted member consumes the new records", func() (bool, error) {
		recs, err := m.snapshot()
		if err != nil {
			return false, err
		}
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
	wg.Wait()
	if recs, _ := m.snapshot(); len(recs) != second {
		return "", fmt.Errorf("restarted member consumed %d records, want %d", len(recs), second)
	}
	return fmt.Sprintf("2 members split %v/%v, consumed %d+%d once, committed, restart resumed with %d new", split[0], split[1], counts[0], counts[1], second), nil
}
