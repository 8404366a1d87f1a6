package broker_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
)

// nameClient is a client capped at the last Produce and Fetch versions that
// name topics (12), for hand-built requests.
func nameClient(n *brokertest.Node) *kgo.Client {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.Produce.Int16(), 12)
	v.SetMaxKeyVersion(kmsg.Fetch.Int16(), 12)
	return n.Client(kgo.MaxVersions(v))
}

// topicConfig is the value DescribeConfigs gives for config key of topic
// ("" when it has none).
func topicConfig(t testing.TB, ctx context.Context, adm *kadm.Client, topic, key string) string {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return ""
}

func TestAPITableWithinKmsg(t *testing.T) {
	for _, v := range broker.APIVersions() {
		req := kmsg.RequestForKey(v.Key)
		if req == nil {
			t.Fatalf("key %d (%s) unknown to kmsg", v.Key, v.Name)
		}
		if v.Min < 0 || v.Min > v.Max || v.Max > req.MaxVersion() {
			t.Errorf("%s: versions %d-%d outside kmsg's 0-%d", v.Name, v.Min, v.Max, req.MaxVersion())
		}
	}
}

func TestProduceConsumeRoundTrip(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("num.partitions", "3"))
	cl := n.Client(kgo.DefaultProduceTopic("orders"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AllowAutoTopicCreation())

	const count = 2000
	want := make(map[string]*kgo.Record, count)
	for i := range count {
		r := &kgo.Record{
			Key:     []byte(fmt.Sprintf("k%d", i%17)),
			Value:   []byte(fmt.Sprintf("value-%d", i)),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte{byte(i)}}, {Key: "h", Value: nil}},
		}
		want[string(r.Value)] = r
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	lastOffset := map[int32]int64{}
	got := 0
	for got < count {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			w, ok := want[string(r.Value)]
			if !ok {
				t.Fatalf("unexpected or duplicate record %q", r.Value)
			}
			delete(want, string(r.Value))
			if !bytes.Equal(w.Key, r.Key) || len(r.Headers) != 2 || !bytes.Equal(r.Headers[0].Value, w.Headers[0].Value) {
				t.Fatalf("record %q: key %q headers %v", r.Value, r.Key, r.Headers)
			}
			if last, ok := lastOffset[r.Partition]; ok && r.Offset != last+1 {
				t.Fatalf("partition %d: offset %d after %d", r.Partition, r.Offset, last)
			}
			lastOffset[r.Partition] = r.Offset
			got++
		})
	}
	if len(lastOffset) != 3 {
		t.Errorf("records landed in %d partitions, want 3 (num.partitions)", len(lastOffset))
	}
}

func TestApiVersions(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()

	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "klog-test", "1"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("error %d", resp.ErrorCode)
	}
	served := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range resp.ApiKeys {
		served[k.ApiKey] = k
	}
	for _, v := range broker.APIVersions() {
		k, ok := served[v.Key]
		if !ok || k.MinVersion != v.Min || k.MaxVersion != v.Max {
			t.Errorf("%s: advertised %+v, table says %d-%d", v.Name, k, v.Min, v.Max)
		}
	}
	if len(served) != len(broker.APIVersions()) {
		t.Errorf("advertised %d apis, table has %d", len(served), len(broker.APIVersions()))
	}
}

// rawConn speaks the wire protocol directly, for requests no client sends.
type rawConn struct {
	t *testing.T
	c net.Conn
}

func dialRaw(t *testing.T, addr string) *rawConn {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t, c}
}

func (r *rawConn) send(key, version int16, corr int32, flexible bool, body []byte) {
	if _, err := r.c.Write(rawFrame(key, version, corr, flexible, body)); err != nil {
		r.t.Fatal(err)
	}
}

// rawFrame returns a request frame with client id "test".
func rawFrame(key, version int16, corr int32, flexible bool, body []byte) []byte {
	var b []byte
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 4)
	b = append(b, "test"...)
	if flexible {
		b = append(b, 0)
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func (r *rawConn) recv() (corr int32, body []byte, err error) {
	var size [4]byte
	if _, err := io.ReadFull(r.c, size[:]); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r.c, buf); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(buf)), buf[4:], nil
}

// From v3 the client software name and version must be letters, digits,
// '-' and '.', beginning and ending with a letter or digit (KIP-511); Kafka
// 4.4 answers INVALID_REQUEST, with no keys, otherwise.
func TestApiVersionsSoftwareNames(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	for _, tc := range []struct {
		name, version string
		valid         bool
	}{
		{"apache-kafka-java", "4.4.0", true},
		{"kgo", "v1.22.3", true},
		{"librdkafka", "2.0.2", true},
		{"", "1.0", false},
		{"klog", "", false},
		{"-klog", "1", false},
		{"klog.", "1", false},
		{"klog client", "1", false},
		{"klog", "1.0_beta", false},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(3)
		req.ClientSoftwareName, req.ClientSoftwareVersion = tc.name, tc.version
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%q %q: %v", tc.name, tc.version, err)
		}
		switch {
		case tc.valid && (resp.ErrorCode != 0 || len(resp.ApiKeys) == 0):
			t.Errorf("%q %q: error %d, %d keys; want the keys", tc.name, tc.version, resp.ErrorCode, len(resp.ApiKeys))
		case !tc.valid && (resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0):
			t.Errorf("%q %q: error %d, %d keys; want INVALID_REQUEST and none", tc.name, tc.version, resp.ErrorCode, len(resp.ApiKeys))
		}
	}
}

func TestApiVersionsUnsupportedVersion(t *testing.T) {
	n := brokertest.Start(t)
	r := dialRaw(t, n.Addr())
	r.send(18, 99, 7, false, nil)
	corr, body, err := r.recv()
	if err != nil {
		t.Fatal(err)
	}
	if corr != 7 {
		t.Fatalf("correlation id %d", corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) == 0 {
		t.Fatalf("got error %d with %d keys, want UNSUPPORTED_VERSION and the key list", resp.ErrorCode, len(resp.ApiKeys))
	}
}

func TestBadRequestsCloseOnlyThatConnection(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cases := map[string]func(r *rawConn){
		"unknown key":         func(r *rawConn) { r.send(9999, 0, 1, false, nil) },
		"unsupported version": func(r *rawConn) { r.send(0, 99, 1, false, nil) },
		"truncated body":      func(r *rawConn) { r.send(3, 12, 1, true, []byte{0x02, 0x00}) },
		"garbage frame": func(r *rawConn) {
			r.c.Write([]byte{0, 0, 0, 12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		},
		"oversized frame": func(r *rawConn) { r.c.Write([]byte{0x7f, 0xff, 0xff, 0xff}) },
		"tiny frame":      func(r *rawConn) { r.c.Write([]byte{0, 0, 0, 1, 0}) },
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			r := dialRaw(t, n.Addr())
			send(r)
			if _, _, err := r.recv(); err == nil {
				t.Fatal("got a response, want the connection closed")
			}
		})
	}
	// The node still serves others.
	adm := kadm.NewClient(n.Client())
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "still-alive"); err != nil {
		t.Fatalf("node stopped serving after bad requests: %v", err)
	}
}

// rawBatch builds one uncompressed v2 record batch of values.
func rawBatch(values ...string) []byte {
	records := make([]logtest.Record, len(values))
	for i, v := range values {
		records[i] = logtest.Record{Value: []byte(v)}
	}
	return logtest.Batch(records...)
}

func produceRaw(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, partition int32, batch []byte) *kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return &resp.Topics[0].Partitions[0]
}

func TestProduceRejectsInvalidBatches(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("message.max.bytes", "2000"))
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	good := rawBatch("a", "b")
	if p := produceRaw(ctx, t, cl, "t", 0, good); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("good batch: error %d base %d", p.ErrorCode, p.BaseOffset)
	}
	badCRC := rawBatch("c")
	badCRC[len(badCRC)-1] ^= 0xff
	badMagic := rawBatch("d")
	badMagic[16] = 1
	big := rawBatch(string(make([]byte, 4000)))
	cases := []struct {
		name  string
		batch []byte
		want  *kerr.Error
	}{
		{"crc", badCRC, kerr.CorruptMessage},
		{"magic", badMagic, kerr.InvalidRecord},
		{"too large", big, kerr.MessageTooLarge},
		{"truncated", good[:len(good)-3], kerr.CorruptMessage},
		{"empty", nil, kerr.InvalidRecord},
	}
	for _, c := range cases {
		p := produceRaw(ctx, t, cl, "t", 0, append([]byte(nil), c.batch...))
		if p.ErrorCode != c.want.Code {
			t.Errorf("%s: error %v, want %v", c.name, kerr.ErrorForCode(p.ErrorCode), c.want)
		}
	}
	offs, err := adm.ListEndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("t", 0); o.Offset != 2 {
		t.Fatalf("end offset %d after rejected batches, want 2", o.Offset)
	}
	if p := produceRaw(ctx, t, cl, "t", 0, rawBatch("e")); p.ErrorCode != 0 || p.BaseOffset != 2 {
		t.Fatalf("append after rejects: error %d base %d", p.ErrorCode, p.BaseOffset)
	}
	if p := produceRaw(ctx, t, cl, "missing", 0, rawBatch("e")); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %v", kerr.ErrorForCode(p.ErrorCode))
	}
}

// TestProduceRefusals: a partition outside its topic is unknown, internal
// topics included; an existing partition of an internal topic refuses
// clients.
func TestProduceRefusals(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("offsets.topic.num.partitions", "2"))
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFindCoordinatorRequest() // creates __consumer_offsets
	req.CoordinatorKeys = []string{"g"}
	if resp, err := req.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else if code := resp.Coordinators[0].ErrorCode; code != 0 {
		t.Fatalf("find coordinator: %v", kerr.ErrorForCode(code))
	}
	for _, tc := range []struct {
		topic     string
		partition int32
		want      *kerr.Error
	}{
		{"t", 2, kerr.UnknownTopicOrPartition},
		{"t", -1, kerr.UnknownTopicOrPartition},
		{"__consumer_offsets", 0, kerr.InvalidTopicException},
		{"__consumer_offsets", 2, kerr.UnknownTopicOrPartition},
		{"__consumer_offsets", -1, kerr.UnknownTopicOrPartition},
	} {
		if p := produceRaw(ctx, t, cl, tc.topic, tc.partition, rawBatch("x")); p.ErrorCode != tc.want.Code {
			t.Errorf("%s-%d: %v, want %v", tc.topic, tc.partition, kerr.ErrorForCode(p.ErrorCode), tc.want)
		}
	}
}

// Kafka 4.4's message.timestamp.after.max.ms is one hour: a record stamped
// further ahead is refused, so no client can plant a far-future timestamp
// (which would also keep its producer's state from expiring).
func TestFutureTimestampsRefusedByDefault(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client(kgo.DefaultProduceTopic("ts"), kgo.AllowAutoTopicCreation(), kgo.RecordRetries(0))
	soon := &kgo.Record{Value: []byte("v"), Timestamp: time.Now().Add(30 * time.Minute)}
	if err := cl.ProduceSync(ctx, soon).FirstErr(); err != nil {
		t.Fatalf("30 minutes ahead: %v", err)
	}
	late := &kgo.Record{Value: []byte("v"), Timestamp: time.Now().Add(2 * time.Hour)}
	if err := cl.ProduceSync(ctx, late).FirstErr(); !errors.Is(err, kerr.InvalidTimestamp) {
		t.Fatalf("2 hours ahead: %v, want %v", err, kerr.InvalidTimestamp)
	}
}

func TestMinInsyncReplicas(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	two := "2"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"min.insync.replicas": &two}, "strict"); err != nil {
		t.Fatal(err)
	}
	if p := produceRaw(ctx, t, cl, "strict", 0, rawBatch("x")); p.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all with 1 of 2 required replicas: %v", kerr.ErrorForCode(p.ErrorCode))
	}

	// A config change takes effect at once: the typed configs are resolved
	// again on each change.
	alter := func(op kadm.IncrementalOp, value *string) {
		t.Helper()
		resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: "min.insync.replicas", Value: value}}, "strict")
		if err == nil {
			_, err = resps.On("strict", nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	alter(kadm.DeleteConfig, nil)
	if p := produceRaw(ctx, t, cl, "strict", 0, rawBatch("x")); p.ErrorCode != 0 {
		t.Fatalf("acks=all after min.insync.replicas went back to 1: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	alter(kadm.SetConfig, &two)
	if p := produceRaw(ctx, t, cl, "strict", 0, rawBatch("x")); p.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all after min.insync.replicas was set to 2 again: %v", kerr.ErrorForCode(p.ErrorCode))
	}
}

func TestAcksZeroAndOne(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	for _, acks := range []kgo.Acks{kgo.NoAck(), kgo.LeaderAck()} {
		cl := n.Client(kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic("acks"), kgo.AllowAutoTopicCreation())
		for i := range 100 {
			cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(n.Client())
	testkit.WaitFor(t, "200 records acknowledged on acks", func() (bool, string) {
		offs, err := adm.ListEndOffsets(ctx, "acks")
		if err != nil {
			return false, err.Error()
		}
		o, _ := offs.Lookup("acks", 0)
		return o.Offset == 200, ""
	})
}

func TestFetchLongPollWakesOnAppend(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "poll"); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12) // topics by name
	req.MaxWaitMillis = 25000
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "poll"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = 0
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	type result struct {
		resp *kmsg.FetchResponse
		err  error
	}
	done := make(chan result, 1)
	fetcher := nameClient(n) // its own connection, as consumers use
	go func() {
		resp, err := req.RequestWith(ctx, fetcher)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("fetch returned before any data: %+v %v", r.resp, r.err)
	default:
	}
	start := time.Now()
	if p := produceRaw(ctx, t, cl, "poll", 0, rawBatch("wake")); p.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(p.ErrorCode))
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Fatalf("fetch waited out its MaxWait (%s) instead of waking on the append", elapsed)
	}
	p := r.resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 1 {
		t.Fatalf("fetch: error %d, %d bytes, hw %d", p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
	}
}

func TestFetchErrors(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "f"); err != nil {
		t.Fatal(err)
	}
	produceRaw(ctx, t, cl, "f", 0, rawBatch("a"))
	fetch := func(cl *kgo.Client, topic string, offset int64, version int16) int16 {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		req.MaxBytes = 1 << 20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset = offset
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := fetch(cl, "f", 5, 12); code != kerr.OffsetOutOfRange.Code {
		t.Errorf("offset past end: %v", kerr.ErrorForCode(code))
	}
	if code := fetch(cl, "nope", 0, 12); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %v", kerr.ErrorForCode(code))
	}
	if code := fetch(n.Client(), "", 0, 13); code != kerr.UnknownTopicID.Code {
		t.Errorf("unknown topic id: %v", kerr.ErrorForCode(code))
	}
}

func TestFirstBatchReturnedEvenWhenLargerThanLimit(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "big"); err != nil {
		t.Fatal(err)
	}
	produceRaw(ctx, t, cl, "big", 0, rawBatch(string(make([]byte, 5000))))
	produceRaw(ctx, t, cl, "big", 0, rawBatch("small"))
	resp, err := fetchRequest("big", 1, 100, 100).RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(p.ErrorCode))
	}
	b, err := record.Parse(p.RecordBatches)
	if err != nil {
		t.Fatalf("first batch not returned whole: %v (%d bytes)", err, len(p.RecordBatches))
	}
	if b.RecordCount() != 1 || len(p.RecordBatches) != b.Size() {
		t.Fatalf("got %d bytes, want exactly the first batch of %d", len(p.RecordBatches), b.Size())
	}
}

func TestListOffsets(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client(kgo.DefaultProduceTopic("lo"), kgo.AllowAutoTopicCreation())
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 10 {
		// Timestamps rise by a minute, except record 7 which carries
		// the largest.
		ts := base.Add(time.Duration(i) * time.Minute)
		if i == 7 {
			ts = base.Add(30 * time.Minute)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v"), Timestamp: ts}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	check := func(name string, got kadm.ListedOffsets, err error, want int64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o, _ := got.Lookup("lo", 0)
		if o.Err != nil || o.Offset != want {
			t.Errorf("%s: offset %d err %v, want %d", name, o.Offset, o.Err, want)
		}
	}
	got, err := adm.ListStartOffsets(ctx, "lo")
	check("earliest", got, err, 0)
	got, err = adm.ListEndOffsets(ctx, "lo")
	check("latest", got, err, 10)
	got, err = adm.ListOffsetsAfterMilli(ctx, base.Add(3*time.Minute).UnixMilli(), "lo")
	check("by timestamp", got, err, 3)
	got, err = adm.ListOffsetsAfterMilli(ctx, base.Add(150*time.Second).UnixMilli(), "lo")
	check("between timestamps", got, err, 3)
	got, err = adm.ListOffsetsAfterMilli(ctx, base.Add(2*time.Hour).UnixMilli(), "lo")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := got.Lookup("lo", 0); o.Offset != 10 && o.Offset != -1 {
		t.Errorf("timestamp after every record: offset %d", o.Offset)
	}

	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "lo"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -3
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.Offset != 7 || p.Timestamp != base.Add(30*time.Minute).UnixMilli() {
		t.Errorf("max timestamp: offset %d ts %d", p.Offset, p.Timestamp)
	}

	// A special timestamp no version defines: UNSUPPORTED_VERSION, as
	// Kafka 4.4 answers.
	req.Topics[0].Partitions[0].Timestamp = -7
	resp, err = req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnsupportedVersion.Code {
		t.Errorf("timestamp -7: %v, want %v", kerr.ErrorForCode(code), kerr.UnsupportedVersion)
	}
}

func TestTopicAdmin(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(n.Client())

	retention := "3600000"
	created, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": &retention}, "admin")
	if err != nil || created.Err != nil {
		t.Fatalf("create: %v %v", err, created.Err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "admin"); !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Errorf("create twice: %v", err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "bad/name"); !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("invalid name: %v", err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "rf3"); !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Errorf("rf 3 on one node: %v", err)
	}
	bogus := "x"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": &bogus}, "badcfg"); !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("bad config: %v", err)
	}

	if _, err := adm.CreatePartitions(ctx, 2, "admin"); err != nil {
		t.Fatal(err)
	}
	td, err := adm.ListTopics(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(td["admin"].Partitions); got != 4 {
		t.Fatalf("partitions after adding 2: %d", got)
	}

	rcs, err := adm.DescribeTopicConfigs(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" {
			found = true
			if c.MaybeValue() != "3600000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("retention.ms = %q from %v", c.MaybeValue(), c.Source)
			}
		}
		if c.Key == "segment.bytes" && (c.MaybeValue() != "1073741824" || c.Source != kmsg.ConfigSourceDefaultConfig) {
			t.Errorf("segment.bytes = %q from %v", c.MaybeValue(), c.Source)
		}
	}
	if !found {
		t.Error("retention.ms not described")
	}

	two := "2"
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "min.insync.replicas", Value: &two}, {Op: kadm.DeleteConfig, Name: "retention.ms"}}, "admin"); err != nil {
		t.Fatal(err)
	}
	rcs, err = adm.DescribeTopicConfigs(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ = rcs.On("admin", nil)
	for _, c := range rc.Configs {
		switch c.Key {
		case "min.insync.replicas":
			if c.MaybeValue() != "2" {
				t.Errorf("min.insync.replicas = %q after alter", c.MaybeValue())
			}
		case "retention.ms":
			if c.Source != kmsg.ConfigSourceDefaultConfig {
				t.Errorf("retention.ms still from %v after delete", c.Source)
			}
		}
	}

	if _, err := adm.DeleteTopics(ctx, "admin"); err != nil {
		t.Fatal(err)
	}
	td, err = adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if td.Has("admin") {
		t.Fatal("topic still listed after delete")
	}
	// The name is free again, with a new id.
	again, err := adm.CreateTopic(ctx, 1, 1, nil, "admin")
	if err != nil || again.ID == created.ID {
		t.Fatalf("recreate: %v, id %v vs %v", err, again.ID, created.ID)
	}
}

// TestAdminChangeRefusals: what AlterConfigs, IncrementalAlterConfigs and
// CreatePartitions answer for each resource they refuse, and that a
// validate-only request changes nothing.
func TestAdminChangeRefusals(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "t", "u"); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		code int16
		msg  string
	}
	// check sends req to the one broker directly (the client would split a
	// request naming a broker resource and merge the answers out of order)
	// and compares each resource's answer.
	check := func(req kmsg.Request, want ...answer) {
		t.Helper()
		resp, err := cl.Broker(0).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var got []answer
		add := func(code int16, msg *string) {
			a := answer{code: code}
			if msg != nil {
				a.msg = *msg
			}
			got = append(got, a)
		}
		switch resp := resp.(type) {
		case *kmsg.AlterConfigsResponse:
			for _, r := range resp.Resources {
				add(r.ErrorCode, r.ErrorMessage)
			}
		case *kmsg.IncrementalAlterConfigsResponse:
			for _, r := range resp.Resources {
				add(r.ErrorCode, r.ErrorMessage)
			}
		case *kmsg.CreatePartitionsResponse:
			for _, r := range resp.Topics {
				add(r.ErrorCode, r.ErrorMessage)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", kmsg.NameForKey(req.Key()), got, want)
		}
	}
	str := func(s string) *string { return &s }
	refused := func(e *kerr.Error, detail string) answer {
		if detail == "" {
			return answer{e.Code, e.Error()}
		}
		return answer{e.Code, e.Error() + ": " + detail}
	}
	static := refused(kerr.InvalidRequest, "klog's broker configs are static; set them with -X at start")
	retention := func() string { return topicConfig(t, ctx, adm, "t", "retention.ms") }
	before := retention()

	alter := kmsg.NewPtrAlterConfigsRequest()
	alter.ValidateOnly = true
	for _, r := range []struct {
		typ   kmsg.ConfigResourceType
		name  string
		value string
	}{
		{kmsg.ConfigResourceTypeBroker, "0", "1"},
		{kmsg.ConfigResourceTypeTopic, "missing", "1000"},
		{kmsg.ConfigResourceTypeTopic, "t", "soon"},
		{kmsg.ConfigResourceTypeTopic, "u", "1000"}, // one resource per request: a second t is a duplicate
	} {
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.typ, r.name
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", str(r.value)
		rr.Configs = append(rr.Configs, c)
		alter.Resources = append(alter.Resources, rr)
	}
	check(alter,
		static,
		answer{kerr.UnknownTopicOrPartition.Code, `unknown topic: "missing"`},
		answer{kerr.InvalidConfig.Code, `invalid config: invalid config value: retention.ms="soon": "soon" is not a 64-bit integer`},
		answer{})

	incremental := kmsg.NewPtrIncrementalAlterConfigsRequest()
	incremental.ValidateOnly = true
	set, del := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
		ops  []kmsg.IncrementalAlterConfigOp
	}{
		{kmsg.ConfigResourceTypeBroker, "0", []kmsg.IncrementalAlterConfigOp{set}},
		{kmsg.ConfigResourceTypeTopic, "missing", []kmsg.IncrementalAlterConfigOp{set}},
		{kmsg.ConfigResourceTypeTopic, "t", []kmsg.IncrementalAlterConfigOp{set, del}},
		{kmsg.ConfigResourceTypeTopic, "u", []kmsg.IncrementalAlterConfigOp{set}},
	} {
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.typ, r.name
		for _, op := range r.ops {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Op, c.Value = "retention.ms", op, str("1000")
			rr.Configs = append(rr.Configs, c)
		}
		incremental.Resources = append(incremental.Resources, rr)
	}
	check(incremental,
		static,
		refused(kerr.UnknownTopicOrPartition, ""),
		refused(kerr.InvalidRequest, "config retention.ms appears more than once"),
		answer{})
	if after := retention(); after != before {
		t.Errorf("retention.ms %q after validate-only alters, was %q", after, before)
	}

	partitions := kmsg.NewPtrCreatePartitionsRequest()
	partitions.TimeoutMillis = 10000
	partitions.ValidateOnly = true
	for _, r := range []struct {
		name     string
		assigned bool
	}{{"twice", false}, {"twice", false}, {"u", true}, {"missing", false}, {"t", false}} {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = r.name, 2
		if r.assigned {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = []int32{0}
			rt.Assignment = append(rt.Assignment, a)
		}
		partitions.Topics = append(partitions.Topics, rt)
	}
	check(partitions,
		answer{kerr.InvalidRequest.Code, "duplicate topic name"}, // once, as Kafka answers it
		refused(kerr.InvalidReplicaAssignment, ""),
		answer{kerr.UnknownTopicOrPartition.Code, `unknown topic: "missing"`},
		answer{})
	td, err := adm.ListTopics(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(td["t"].Partitions); got != 1 {
		t.Errorf("%d partitions after a validate-only CreatePartitions, want 1", got)
	}
}

func TestDescribeCluster(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(n.Client())
	m, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Cluster == "" || len(m.Brokers) != 1 || m.Brokers[0].NodeID != 0 || m.Controller != 0 {
		t.Fatalf("cluster %+v", m)
	}
}

func TestRestartKeepsData(t *testing.T) {
	ctx := testkit.Context(t)
	dir := t.TempDir()
	n := brokertest.Start(t, brokertest.DataDir(dir))
	cl := n.Client(kgo.DefaultProduceTopic("durable"), kgo.AllowAutoTopicCreation())
	for i := range 50 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	before, err := adm.ListTopics(ctx, "durable")
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()

	n.Restart()
	cl = n.Client(kgo.ConsumeTopics("durable"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	after, err := kadm.NewClient(cl).ListTopics(ctx, "durable")
	if err != nil {
		t.Fatal(err)
	}
	if before["durable"].ID != after["durable"].ID {
		t.Fatalf("topic id changed across restart")
	}
	got := 0
	for got < 50 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) != fmt.Sprint(got) || r.Offset != int64(got) {
				t.Fatalf("record %d: offset %d value %q", got, r.Offset, r.Value)
			}
			got++
		})
	}
	// Appends continue after the recovered end.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "durable", Value: []byte("next")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestRetentionThroughTheBroker: small segments roll by size, and
// retention.bytes deletes whole old segments, advancing the log start offset
// that clients see; what remains reads back in order.
func TestRetentionThroughTheBroker(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client(kgo.DefaultProduceTopic("short"))
	adm := kadm.NewClient(cl)
	segment, retention := "400", "800"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.bytes": &segment, "retention.bytes": &retention}, "short"); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%03d-%s", i, bytes.Repeat([]byte("x"), 60)))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var start int64
	testkit.WaitFor(t, "retention to move the log start of short", func() (bool, string) {
		offs, err := adm.ListStartOffsets(ctx, "short")
		if err != nil {
			return false, err.Error()
		}
		o, _ := offs.Lookup("short", 0)
		start = o.Offset
		return start > 0, ""
	})
	ends, err := adm.ListEndOffsets(ctx, "short")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("short", 0); o.Offset != 40 {
		t.Fatalf("end offset %d after retention, want 40", o.Offset)
	}
	consumer := n.Client(kgo.ConsumeTopics("short"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	want := start
	for want < 40 {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < start {
				return // the log may have moved on since we looked
			}
			if r.Offset != want || !bytes.HasPrefix(r.Value, []byte(fmt.Sprintf("%03d-", want))) {
				t.Fatalf("offset %d value %.4q, want offset %d", r.Offset, r.Value, want)
			}
			want++
		})
	}
}
