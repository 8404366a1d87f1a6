// Command franzgo runs klog's compatibility scenarios with franz-go (kgo and
// kadm) against any Kafka bootstrap address:
//
//	go run ./scripts/compat/franzgo BROKERS
//
// It prints one "RESULT franz-go <scenario> PASS|FAIL|SKIP <detail>" line per
// scenario on stdout and progress on stderr; it exits 1 if any scenario
// failed. scripts/compat/README.md describes the scenarios.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/klogdev/klog/scripts/compat/harness"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const client = "franz-go"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: franzgo BROKERS [scenario ...]")
		os.Exit(2)
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

// baseOpts are the seed brokers and the security (KLOG_COMPAT_SECURITY)
// every client here starts from.
func baseOpts(e *harness.Env) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(e.Brokers...)}
	if e.Security != nil {
		opts = append(opts, e.Security.Kgo...)
	}
	return opts
}

func newClient(e *harness.Env, opts ...kgo.Opt) (*kgo.Client, error) {
	opts = append(baseOpts(e), opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	return cl, nil
}

// createTopic creates a topic and waits until its metadata lists every
// partition with a leader.
func createTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) error {
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return harness.WaitFor(ctx, "topic "+topic+" has leaders", func() (bool, error) {
		tds, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return false, nil
		}
		td, ok := tds[topic]
		if !ok || td.Err != nil || int32(len(td.Partitions)) != partitions {
			return false, nil
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

func admin(ctx context.Context, e *harness.Env) (string, error) {
	cl, err := newClient(e)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := e.Name("admin", "t")

	if err := createTopic(ctx, adm, topic, 3, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}); err != nil {
		return "", err
	}
	describeConfig := func(want string) error {
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			return fmt.Errorf("describe configs: %w", err)
		}
		rc, err := rcs.On(topic, nil)
		if err != nil {
			return fmt.Errorf("describe configs: %w", err)
		}
		if rc.Err != nil {
			return fmt.Errorf("describe configs: %w", rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == "retention.ms" {
				if c.MaybeValue() != want {
					return fmt.Errorf("retention.ms is %q, want %q", c.MaybeValue(), want)
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
	// ListTopics may go to a broker that learns of the topic a moment
	// after the one that answered createTopic, as on any Kafka cluster.
	if err := harness.Eventually(ctx, harness.ConfigWait, func() error {
		listed, err := adm.ListTopics(ctx)
		if err != nil {
			return fmt.Errorf("list topics: %w", err)
		}
		if !listed.Has(topic) {
			return fmt.Errorf("list topics: %s missing", topic)
		}
		return nil
	}); err != nil {
		return "", err
	}

	alt, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("7200000")}}, topic)
	if err != nil {
		return "", fmt.Errorf("incremental alter configs: %w", err)
	}
	for _, r := range alt {
		if r.Err != nil {
			return "", fmt.Errorf("incremental alter configs: %w", r.Err)
		}
	}
	if err := checkConfig("7200000"); err != nil {
		return "", fmt.Errorf("after alter: %w", err)
	}

	cps, err := adm.UpdatePartitions(ctx, 4, topic)
	if err != nil {
		return "", fmt.Errorf("create partitions: %w", err)
	}
	if cp, err := cps.On(topic, nil); err != nil || cp.Err != nil {
		return "", fmt.Errorf("create partitions: %v %v", err, cp.Err)
	}
	if err := harness.WaitFor(ctx, "4 partitions in metadata", func() (bool, error) {
		tds, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return false, nil
		}
		return len(tds[topic].Partitions) == 4, nil
	}); err != nil {
		return "", err
	}

	drs, err := adm.DeleteTopics(ctx, topic)
	if err != nil {
		return "", fmt.Errorf("delete topic: %w", err)
	}
	if dr, err := drs.On(topic, nil); err != nil || dr.Err != nil {
		return "", fmt.Errorf("delete topic: %v %v", err, dr.Err)
	}
	if err := harness.WaitFor(ctx, "topic gone from metadata", func() (bool, error) {
		tds, err := adm.ListTopics(ctx)
		if err != nil {
			return false, nil
		}
		return !tds.Has(topic), nil
	}); err != nil {
		return "", err
	}
	return "create(3 partitions, retention.ms) list describe-configs incremental-alter add-partitions(4) delete", nil
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

func fromKgo(r *kgo.Record) record {
	out := record{key: string(r.Key), value: string(r.Value), ts: r.Timestamp.UnixMilli(), partition: r.Partition, offset: r.Offset}
	for _, h := range r.Headers {
		out.headers = append(out.headers, header{h.Key, string(h.Value)})
	}
	return out
}

func (r record) String() string {
	return fmt.Sprintf("{key=%q value=%q headers=%v ts=%d}", r.key, r.value, r.headers, r.ts)
}

func sameRecord(a, b record) bool {
	return a.key == b.key && a.value == b.value && a.ts == b.ts && slices.Equal(a.headers, b.headers)
}

// consumeN reads n records from the start of every partition of topic with
// a direct (non-group) consumer.
func consumeN(ctx context.Context, e *harness.Env, topic string, n int, opts ...kgo.Opt) ([]record, error) {
	opts = append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)
	cl, err := newClient(e, opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var got []record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return got, fmt.Errorf("consumed %d of %d records: %w", len(got), n, ctx.Err())
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err) })
		if ferr != nil {
			return got, ferr
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fromKgo(r)) })
	}
	return got, nil
}

func produceConsume(ctx context.Context, e *harness.Env) (string, error) {
	cl, err := newClient(e)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := e.Name("pc", "t")
	if err := createTopic(ctx, adm, topic, 1, nil); err != nil {
		return "", err
	}
	base := time.Now().Add(-time.Hour).UnixMilli()
	var want []record
	var batch []*kgo.Record
	for i := range 20 {
		r := record{
			key:   fmt.Sprintf("key-%d", i%5),
			value: fmt.Sprintf("value-%d", i),
			ts:    base + int64(i)*1000,
			headers: []header{
				{"h1", "a" + strconv.Itoa(i)},
				{"dup", "first"},
				{"dup", "second"},
				{"empty", ""},
			},
		}
		if i == 7 {
			r.key = "" // a record without a key
			r.headers = nil
		}
		want = append(want, r)
		kr := &kgo.Record{Topic: topic, Value: []byte(r.value), Timestamp: time.UnixMilli(r.ts)}
		if r.key != "" {
			kr.Key = []byte(r.key)
		}
		for _, h := range r.headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.key, Value: []byte(h.value)})
		}
		batch = append(batch, kr)
	}
	if err := cl.ProduceSync(ctx, batch...).FirstErr(); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	got, err := consumeN(ctx, e, topic, len(want))
	if err != nil {
		return "", err
	}
	if len(got) != len(want) {
		return "", fmt.Errorf("consumed %d records, want %d", len(got), len(want))
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
	cl, err := newClient(e)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
	}{
		{"gzip", kgo.GzipCompression()},
		{"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()},
		{"zstd", kgo.ZstdCompression()},
	}
	var checked []string
	for _, c := range codecs {
		topic := e.Name("comp", c.name)
		if err := createTopic(ctx, adm, topic, 1, nil); err != nil {
			return "", err
		}
		p, err := newClient(e, kgo.ProducerBatchCompression(c.codec), kgo.ProducerLinger(50*time.Millisecond))
		if err != nil {
			return "", err
		}
		var want []string
		var batch []*kgo.Record
		for i := range 50 {
			v := fmt.Sprintf("%s-%d-%s", c.name, i, bytes.Repeat([]byte("abc"), 30))
			want = append(want, v)
			batch = append(batch, &kgo.Record{Topic: topic, Value: []byte(v)})
		}
		err = p.ProduceSync(ctx, batch...).FirstErr()
		p.Close()
		if err != nil {
			return "", fmt.Errorf("%s: produce: %w", c.name, err)
		}
		got, err := consumeN(ctx, e, topic, len(want))
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.name, err)
		}
		for i := range want {
			if got[i].value != want[i] {
				return "", fmt.Errorf("%s: record %d is %q, want %q", c.name, i, got[i].value, want[i])
			}
		}
		checked = append(checked, c.name)
	}
	return fmt.Sprintf("codecs %v, 50 records each", checked), nil
}

func offsetsByTime(ctx context.Context, e *harness.Env) (string, error) {
	cl, err := newClient(e)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := e.Name("obt", "t")
	if err := createTopic(ctx, adm, topic, 1, nil); err != nil {
		return "", err
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	// Records at base, base+10s, ..., base+90s, each its own produce so they
	// land in separate batches.
	for i := range 10 {
		r := &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i)), Timestamp: time.UnixMilli(base + int64(i)*10_000)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return "", fmt.Errorf("produce: %w", err)
		}
	}
	cases := []struct {
		ts   int64
		want int64
	}{
		{base - 1, 0},       // before everything: the first offset
		{base, 0},           // exact match
		{base + 15_000, 2},  // between records: the next one
		{base + 30_000, 3},  // exact match in the middle
		{base + 90_000, 9},  // the last record
		{base + 95_000, 10}, // after everything: the end offset
	}
	for _, c := range cases {
		los, err := adm.ListOffsetsAfterMilli(ctx, c.ts, topic)
		if err != nil {
			return "", fmt.Errorf("list offsets at %d: %w", c.ts, err)
		}
		lo, ok := los.Lookup(topic, 0)
		if !ok {
			return "", fmt.Errorf("list offsets at %d: partition 0 missing", c.ts)
		}
		if lo.Err != nil {
			return "", fmt.Errorf("list offsets at %d: %w", c.ts, lo.Err)
		}
		if lo.Offset != c.want {
			return "", fmt.Errorf("list offsets at base%+dms: offset %d, want %d", c.ts-base, lo.Offset, c.want)
		}
	}
	return fmt.Sprintf("%d lookups (before, exact, between, last, after end) over 10 records", len(cases)), nil
}

// member is one consumer-group member collecting what it polls.
type member struct {
	cl *kgo.Client
	mu struct {
		sync.Mutex
		records  []record
		assigned map[int32]bool
	}
}

func newMember(e *harness.Env, groupName, topic string) (*member, error) {
	m := &member{}
	m.mu.assigned = map[int32]bool{}
	cl, err := newClient(e,
		kgo.ConsumerGroup(groupName),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range a[topic] {
				m.mu.assigned[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range r[topic] {
				delete(m.mu.assigned, p)
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range r[topic] {
				delete(m.mu.assigned, p)
			}
		}),
	)
	if err != nil {
		return nil, err
	}
	m.cl = cl
	return m, nil
}

// poll runs until ctx ends, collecting records.
func (m *member) poll(ctx context.Context) {
	for ctx.Err() == nil {
		fs := m.cl.PollFetches(ctx)
		m.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) { m.mu.records = append(m.mu.records, fromKgo(r)) })
		m.mu.Unlock()
	}
}

func (m *member) snapshot() (records []record, assigned []int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.mu.assigned {
		assigned = append(assigned, p)
	}
	slices.Sort(assigned)
	return slices.Clone(m.mu.records), assigned
}

func group(ctx context.Context, e *harness.Env) (string, error) {
	cl, err := newClient(e)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := e.Name("group", "t")
	groupName := e.Name("group", "g")
	const partitions = 4
	if err := createTopic(ctx, adm, topic, partitions, nil); err != nil {
		return "", err
	}

	pollCtx, stopPolling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopPolling()
	var members []*member
	for range 2 {
		m, err := newMember(e, groupName, topic)
		if err != nil {
			return "", err
		}
		defer m.cl.Close()
		members = append(members, m)
		wg.Go(func() { m.poll(pollCtx) })
	}
	// Both members must own a share of the partitions before anything is
	// produced, so the records are split between them.
	var split [2][]int32
	if err := harness.WaitFor(ctx, "both members assigned", func() (bool, error) {
		_, a := members[0].snapshot()
		_, b := members[1].snapshot()
		split = [2][]int32{a, b}
		all := append(slices.Clone(a), b...)
		slices.Sort(all)
		return len(a) > 0 && len(b) > 0 && slices.Equal(slices.Compact(all), all) && len(all) == partitions, nil
	}); err != nil {
		return "", fmt.Errorf("%w (assignments %v)", err, split)
	}

	produce := func(from, to int) error {
		var batch []*kgo.Record
		for i := from; i < to; i++ {
			batch = append(batch, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: []byte(strconv.Itoa(i))})
		}
		p, err := newClient(e, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			return err
		}
		defer p.Close()
		return p.ProduceSync(ctx, batch...).FirstErr()
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
	stopPolling()
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
	for _, m := range members {
		if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
			return "", fmt.Errorf("commit: %w", err)
		}
	}
	for _, m := range members {
		m.cl.Close()
	}

	offs, err := adm.FetchOffsets(ctx, groupName)
	if err != nil {
		return "", fmt.Errorf("offset fetch: %w", err)
	}
	var committed int64
	offs.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != first {
		return "", fmt.Errorf("committed offsets sum to %d, want %d", committed, first)
	}

	// A restarted member resumes from the committed offsets: it sees only
	// the records produced after the commit.
	const second = 20
	if err := produce(first, first+second); err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	m, err := newMember(e, groupName, topic)
	if err != nil {
		return "", err
	}
	defer m.cl.Close()
	var got []record
	for len(got) < second {
		fs := m.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return "", fmt.Errorf("restarted member consumed %d of %d: %w", len(got), second, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fromKgo(r)) })
	}
	for _, r := range got {
		if n, _ := strconv.Atoi(r.value); n < first {
			return "", fmt.Errorf("restarted member re-read record %s (before the committed offset)", r.value)
		}
	}
	if len(got) != second {
		return "", fmt.Errorf("restarted member consumed %d records, want %d", len(got), second)
	}
	return fmt.Sprintf("2 members split %v/%v, consumed %d+%d once, committed, restart resumed with %d new", split[0], split[1], counts[0], counts[1], second), nil
}

func idempotent(ctx context.Context, e *harness.Env) (string, error) {
	cl, err := newClient(e, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(1000))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := e.Name("idem", "t")
	if err := createTopic(ctx, adm, topic, 3, nil); err != nil {
		return "", err
	}
	const n = 500
	var batch []*kgo.Record
	for i := range n {
		batch = append(batch, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(strconv.Itoa(i))})
	}
	var pids []int64
	for _, r := range cl.ProduceSync(ctx, batch...) {
		if r.Err != nil {
			return "", fmt.Errorf("produce: %w", r.Err)
		}
		if r.Record.ProducerID < 0 {
			return "", errors.New("produce: record has no producer id; idempotence not in use")
		}
		pids = append(pids, r.Record.ProducerID)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return "", fmt.Errorf("list end offsets: %w", err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != n {
		return "", fmt.Errorf("end offsets sum to %d, want %d", total, n)
	}
	got, err := consumeN(ctx, e, topic, n)
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
	return fmt.Sprintf("%d records over 3 partitions landed once (producer id %d)", n, pids[0]), nil
}

func transactions(ctx context.Context, e *harness.Env) (string, error) {
	topic := e.Name("txn", "t")
	{
		cl, err := newClient(e)
		if err != nil {
			return "", err
		}
		err = createTopic(ctx, kadm.NewClient(cl), topic, 2, nil)
		cl.Close()
		if err != nil {
			return "", err
		}
	}
	p, err := newClient(e, kgo.TransactionalID(e.Name("txn", "id")), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return "", err
	}
	defer p.Close()
	txn := func(prefix string, n int, commit kgo.TransactionEndTry) error {
		if err := p.BeginTransaction(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		var batch []*kgo.Record
		for i := range n {
			batch = append(batch, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: fmt.Appendf(nil, "%s-%d", prefix, i)})
		}
		if err := p.ProduceSync(ctx, batch...).FirstErr(); err != nil {
			return fmt.Errorf("produce %s: %w", prefix, err)
		}
		if err := p.EndTransaction(ctx, commit); err != nil {
			return fmt.Errorf("end %s: %w", prefix, err)
		}
		return nil
	}
	if err := txn("committed1", 10, kgo.TryCommit); err != nil {
		return "", err
	}
	if err := txn("aborted", 10, kgo.TryAbort); err != nil {
		return "", err
	}
	if err := txn("committed2", 10, kgo.TryCommit); err != nil {
		return "", err
	}
	got, err := consumeN(ctx, e, topic, 20, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return "", err
	}
	for _, r := range got {
		if !bytes.HasPrefix([]byte(r.value), []byte("committed")) {
			return "", fmt.Errorf("read_committed consumer saw %q", r.value)
		}
	}
	// Everything after the abort was read, so nothing aborted can come later;
	// a read_uncommitted consumer sees all 30 records.
	all, err := consumeN(ctx, e, topic, 30)
	if err != nil {
		return "", fmt.Errorf("read_uncommitted: %w", err)
	}
	return fmt.Sprintf("commit 10, abort 10, commit 10: read_committed saw 20, read_uncommitted %d", len(all)), nil
}

func consumeTransformProduce(ctx context.Context, e *harness.Env) (string, error) {
	in, out := e.Name("ctp", "in"), e.Name("ctp", "out")
	groupName := e.Name("ctp", "g")
	const n = 60
	{
		cl, err := newClient(e, kgo.DefaultProduceTopic(in))
		if err != nil {
			return "", err
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		for _, t := range []string{in, out} {
			if err := createTopic(ctx, adm, t, 2, nil); err != nil {
				return "", err
			}
		}
		var batch []*kgo.Record
		for i := range n {
			batch = append(batch, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(strconv.Itoa(i))})
		}
		if err := cl.ProduceSync(ctx, batch...).FirstErr(); err != nil {
			return "", fmt.Errorf("produce input: %w", err)
		}
	}
	sess, err := kgo.NewGroupTransactSession(append(baseOpts(e),
		kgo.TransactionalID(e.Name("ctp", "id")),
		kgo.ConsumerGroup(groupName),
		kgo.ConsumeTopics(in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DefaultProduceTopic(out),
	)...)
	if err != nil {
		return "", fmt.Errorf("new session: %w", err)
	}
	defer sess.Close()
	processed, txns := 0, 0
	for processed < n {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			return "", fmt.Errorf("transformed %d of %d: %w", processed, n, ctx.Err())
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err) })
		if ferr != nil {
			return "", ferr
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return "", fmt.Errorf("begin: %w", err)
		}
		var batch []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			batch = append(batch, &kgo.Record{Key: r.Key, Value: append([]byte("out-"), r.Value...)})
		})
		perr := sess.ProduceSync(ctx, batch...).FirstErr()
		committed, err := sess.End(ctx, perr == nil)
		if perr != nil {
			return "", fmt.Errorf("produce output: %w", perr)
		}
		if err != nil {
			return "", fmt.Errorf("end transaction: %w", err)
		}
		if committed {
			processed += len(batch)
			txns++
		}
	}
	sess.Close()

	got, err := consumeN(ctx, e, out, n, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
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
	cl, err := newClient(e)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, groupName)
	if err != nil {
		return "", fmt.Errorf("offset fetch: %w", err)
	}
	var committed int64
	offs.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != n {
		return "", fmt.Errorf("group committed offsets sum to %d, want %d", committed, n)
	}
	return fmt.Sprintf("%d records in %d transactions (GroupTransactSession), output exactly once, offsets committed in the transaction", n, txns), nil
}
