package broker_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
)

// nameClient is a client capped at the last Produce and Fetch versions that
// name topics (12), for hand-built requests.
func nameClient(n *brokertest.Node) *kgo.Client { return fetchVersionClient(n, 12) }

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

// do sends req at the version it was given and decodes the answer; an
// error is the connection's (the broker closed it).
func (r *rawConn) do(req kmsg.Request) (kmsg.Response, error) {
	r.send(req.Key(), req.GetVersion(), 1, req.IsFlexible(), req.AppendTo(nil))
	_, body, err := r.recv()
	if err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() { // ApiVersions answers with header v0
		if len(body) == 0 || body[0] != 0 {
			return nil, fmt.Errorf("response header tags %v", body[:min(len(body), 1)])
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, err
	}
	return resp, nil
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
	record.Batch(badMagic).SetMagic(1)
	big := rawBatch(string(make([]byte, 4000)))
	now := time.Now().UnixMilli()
	future := logtest.BatchWith(logtest.Options{BaseTimestamp: now + 2*3600*1000}, logtest.Record{Value: []byte("f")})
	// As Kafka's ReplicaManager.appendToLocalLog: the log start offset
	// (here 0) except for the errors it answers without one (-1), a
	// message only for INVALID_RECORD and records refused; and as its
	// KafkaApis, which refuses before the append records that hold no
	// whole first batch, another magic than 2 or a second batch
	// (INVALID_RECORD, -1, no message).
	cases := []struct {
		name     string
		batch    []byte
		want     *kerr.Error
		start    int64
		message  bool
		recordOf bool
	}{
		{"crc", badCRC, kerr.CorruptMessage, -1, false, false},
		{"magic", badMagic, kerr.InvalidRecord, -1, false, false},
		{"too large", big, kerr.MessageTooLarge, -1, false, false},
		{"truncated", good[:len(good)-3], kerr.InvalidRecord, -1, false, false},
		{"empty", nil, kerr.InvalidRecord, -1, false, false},
		{"two batches", logtest.Concat(rawBatch("x"), rawBatch("y")), kerr.InvalidRecord, -1, false, false},
		{"trailing bytes", append(rawBatch("x"), 1, 2, 3), kerr.CorruptMessage, -1, false, false}, // Kafka drops them
		{"future", future, kerr.InvalidTimestamp, 0, true, true},
	}
	for _, c := range cases {
		p := produceRaw(ctx, t, cl, "t", 0, append([]byte(nil), c.batch...))
		if p.ErrorCode != c.want.Code || p.LogStartOffset != c.start || (p.ErrorMessage != nil) != c.message || (p.ErrorRecords != nil) != c.recordOf {
			t.Errorf("%s: error %v, log start offset %d, message %v, record errors %v; want %v, %d, a message %v, record errors %v",
				c.name, kerr.ErrorForCode(p.ErrorCode), p.LogStartOffset, p.ErrorMessage, p.ErrorRecords, c.want, c.start, c.message, c.recordOf)
		}
		if c.recordOf && (len(p.ErrorRecords) != 1 || p.ErrorRecords[0].RelativeOffset != 0 || *p.ErrorMessage != "One or more records have been rejected due to invalid timestamp" ||
			p.ErrorRecords[0].ErrorMessage == nil || !strings.HasPrefix(*p.ErrorRecords[0].ErrorMessage, "Timestamp ") || !strings.Contains(*p.ErrorRecords[0].ErrorMessage, " of message with offset 0 is out of range.")) {
			t.Errorf("%s: message %q, record errors %+v; want Kafka's", c.name, *p.ErrorMessage, p.ErrorRecords)
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

	// A compacted topic refuses records without a key, each listed, with
	// the message of Kafka's LogValidator.
	compact := "compact"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, "c"); err != nil {
		t.Fatal(err)
	}
	why := "Compacted topic cannot accept message without key in topic partition c-0"
	p := produceRaw(ctx, t, cl, "c", 0, rawBatch("a", "b"))
	want := "One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: " +
		"[RecordError(batchIndex=0, message='" + why + "'), RecordError(batchIndex=1, message='" + why + "')]"
	if p.ErrorCode != kerr.InvalidRecord.Code || p.ErrorMessage == nil || *p.ErrorMessage != want || len(p.ErrorRecords) != 2 ||
		p.ErrorRecords[1].RelativeOffset != 1 || *p.ErrorRecords[1].ErrorMessage != why || p.LogStartOffset != 0 {
		t.Errorf("keyless records to a compacted topic: %v %v %+v, log start offset %d", kerr.ErrorForCode(p.ErrorCode), p.ErrorMessage, p.ErrorRecords, p.LogStartOffset)
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

// TestMinInsyncReplicas: acks=all needs min.insync.replicas replicas in
// sync, counting no more than the partition has (Kafka 4's effective min
// ISR): one replica with min.insync.replicas=2 takes it. With a second
// replica out of sync (set on the partition: one node cannot lose a
// follower) it is refused NOT_ENOUGH_REPLICAS, acks=1 still taken, and a
// config change takes effect at once.
func TestMinInsyncReplicas(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	adm := kadm.NewClient(cl)
	two := "2"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"min.insync.replicas": &two}, "strict"); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, n.Addr()) // as sent: clients rewrite a produce's acks
	produce := func(acks int16) error {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(9)
		req.Acks, req.TimeoutMillis = acks, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "strict"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = rawBatch("x")
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := rawDo[*kmsg.ProduceResponse](t, r, req)
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}
	if err := produce(-1); err != nil {
		t.Fatalf("acks=all, one replica, min.insync.replicas=2: %v, want it taken", err)
	}

	p := n.Broker().PartitionForTest("strict", 0)
	lagging := func() {
		st := p.LeaderState()
		st.Replicas = append(slices.Clone(st.Replicas), 1) // a follower, not in the ISR
		p.SetLeaderState(st)
	}
	lagging()
	if err := produce(-1); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all with 1 of 2 replicas in sync: %v, want %v", err, kerr.NotEnoughReplicas)
	}
	if err := produce(1); err != nil {
		t.Fatalf("acks=1 with 1 of 2 replicas in sync: %v", err)
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
		if len(p.LeaderState().Replicas) == 1 { // the metadata change set the state again
			lagging()
		}
	}
	alter(kadm.DeleteConfig, nil)
	if err := produce(-1); err != nil {
		t.Fatalf("acks=all after min.insync.replicas went back to 1: %v", err)
	}
	alter(kadm.SetConfig, &two)
	if err := produce(-1); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all after min.insync.replicas was set to 2 again: %v, want %v", err, kerr.NotEnoughReplicas)
	}

	// So does a dynamic broker default, for a topic without its own
	// override, and a per-broker value wins over it.
	alter(kadm.DeleteConfig, nil)
	alterBroker := func(value *string, brokers ...int32) {
		t.Helper()
		setBrokerConfig(t, ctx, adm, "min.insync.replicas", value, brokers...)
		if len(p.LeaderState().Replicas) == 1 {
			lagging()
		}
	}
	alterBroker(&two)
	if err := produce(-1); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all after the cluster-wide min.insync.replicas was set to 2: %v, want %v", err, kerr.NotEnoughReplicas)
	}
	one := "1"
	alterBroker(&one, 0)
	if err := produce(-1); err != nil {
		t.Fatalf("acks=all with broker 0's min.insync.replicas 1 over the cluster's 2: %v", err)
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
	fetch := func(cl *kgo.Client, topic string, partition int32, offset int64, version int16, iso int8) kmsg.FetchResponseTopicPartition {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		req.MaxBytes = 1 << 20
		req.IsolationLevel = iso
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = partition
		rp.FetchOffset = offset
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	// As Kafka's: a failed read reports no offsets and null aborted
	// transactions; a partition refused before the read an empty list.
	for _, offset := range []int64{5, -3} {
		p := fetch(cl, "f", 0, offset, 12, 0)
		if p.ErrorCode != kerr.OffsetOutOfRange.Code || p.HighWatermark != -1 || p.LastStableOffset != -1 || p.LogStartOffset != -1 || p.AbortedTransactions != nil {
			t.Errorf("offset %d: %v, offsets %d/%d/%d, aborted %v; want OFFSET_OUT_OF_RANGE, -1/-1/-1, null", offset,
				kerr.ErrorForCode(p.ErrorCode), p.HighWatermark, p.LastStableOffset, p.LogStartOffset, p.AbortedTransactions)
		}
	}
	for _, tc := range []struct {
		topic     string
		partition int32
		want      *kerr.Error
	}{{"nope", 0, kerr.UnknownTopicOrPartition}, {"f", 7, kerr.UnknownTopicOrPartition}} {
		p := fetch(cl, tc.topic, tc.partition, 0, 12, 0)
		if p.ErrorCode != tc.want.Code || p.AbortedTransactions == nil {
			t.Errorf("%s/%d: %v, aborted %v; want %v and an empty list", tc.topic, tc.partition, kerr.ErrorForCode(p.ErrorCode), p.AbortedTransactions, tc.want)
		}
	}
	if p := fetch(n.Client(), "", 0, 0, 13, 0); p.ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("unknown topic id: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	// read_committed always lists aborted transactions, read_uncommitted
	// never.
	if p := fetch(cl, "f", 0, 0, 12, 1); p.ErrorCode != 0 || p.AbortedTransactions == nil || p.HighWatermark != 1 {
		t.Errorf("read_committed: %v, high watermark %d, aborted %v; want an empty list", kerr.ErrorForCode(p.ErrorCode), p.HighWatermark, p.AbortedTransactions)
	}
	if p := fetch(cl, "f", 0, 0, 12, 0); p.ErrorCode != 0 || p.AbortedTransactions != nil {
		t.Errorf("read_uncommitted: %v, aborted %v; want null", kerr.ErrorForCode(p.ErrorCode), p.AbortedTransactions)
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

	// Every leader epoch but -1 is the client's, as in Kafka's
	// ListOffsets: one below the partition's is fenced.
	req.Topics[0].Partitions[0].Timestamp = -1
	for epoch, want := range map[int32]int16{-1: 0, 0: 0, -5: kerr.FencedLeaderEpoch.Code} {
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = epoch
		if resp, err = req.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != want {
			t.Errorf("leader epoch %d: %v, want %v", epoch, kerr.ErrorForCode(code), kerr.ErrorForCode(want))
		}
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

// TestCreateTopicsAnswersLikeKafka: CreateTopics refuses each topic with
// Kafka 4.4's code and words and an empty (not null) config list, and a
// validate-only creation answers a topic id and Kafka 4.4's topic configs.
func TestCreateTopicsAnswersLikeKafka(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "exists"); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 250)
	type topic struct {
		name       string
		partitions int32
		rf         int16
		config     string // name=value, or a name alone for a null value
		code       *kerr.Error
		msg        string
		assign     []int32 // partition 0's replicas
	}
	topics := []topic{
		{"twice", 1, 1, "", kerr.InvalidRequest, "Duplicate topic name.", nil},
		{"twice", 1, 1, "", nil, "", nil},
		{"", 1, 1, "", kerr.InvalidTopicException, "Topic name is invalid: the empty string is not allowed", nil},
		{long, 1, 1, "", kerr.InvalidTopicException, "Topic name is invalid: the length of '" + long + "' is longer than the max allowed length 249", nil},
		{"a/b", 1, 1, "", kerr.InvalidTopicException, "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", nil},
		{"..", 1, 1, "", kerr.InvalidTopicException, "Topic name is invalid: '..' is not allowed", nil},
		{"__cluster_metadata", 1, 1, "", kerr.InvalidRequest, "Creation of internal topic __cluster_metadata is prohibited.", nil},
		{"exists", 1, 1, "", kerr.TopicAlreadyExists, "Topic 'exists' already exists.", nil},
		{"zero", 0, 1, "", kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.", nil},
		{"rf", 1, 4, "", kerr.InvalidReplicationFactor, "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 1 broker(s) are registered or some brokers have all their log directories cordoned.", nil},
		{"badval", 1, 1, "retention.ms=notanumber", kerr.InvalidConfig, "Invalid value notanumber for configuration retention.ms: Not a number of type LONG", nil},
		{"badpol", 1, 1, "cleanup.policy=sometimes", kerr.InvalidConfig, "Invalid value sometimes for configuration cleanup.policy: String must be one of: compact, delete", nil},
		{"ratio", 1, 1, "min.cleanable.dirty.ratio=2", kerr.InvalidConfig, "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1", nil},
		{"lz4", 1, 1, "compression.lz4.level=0", kerr.InvalidConfig, "Invalid value 0 for configuration compression.lz4.level: Value must be at least 1", nil},
		{"unknown", 1, 1, "no.such.config=1", kerr.InvalidConfig, "Unknown topic config name: no.such.config", nil},
		// Kafka 4 removed it; 4.4 answers it as unknown.
		{"down", 1, 1, "message.downconversion.enable=true", kerr.InvalidConfig, "Unknown topic config name: message.downconversion.enable", nil},
		{"lag", 1, 1, "remote.copy.lag.ms=-2", kerr.InvalidConfig, "Invalid value -2 for configuration remote.copy.lag.ms: Value must be at least -1", nil},
		{"rf0", 1, 0, "", kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.", nil},
		{"on77", -1, -1, "", kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker 77, but no such broker is registered.", []int32{77}},
		{"twice0", -1, -1, "", kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker 0 more than once.", []int32{0, 0}},
		{"counted", 1, -1, "", kerr.InvalidRequest, "A manual partition assignment was specified, but numPartitions was not set to -1.", []int32{0}},
		{"nullcfg", 1, 1, "retention.ms", kerr.InvalidConfig, "Null value not supported for topic configs: retention.ms", nil},
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.TimeoutMillis = 10000
	for _, tc := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = tc.name, tc.partitions, tc.rf
		if k, v, ok := strings.Cut(tc.config, "="); ok {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, &v
			rt.Configs = append(rt.Configs, c)
		} else if tc.config != "" { // a name alone: a null value
			rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: tc.config})
		}
		if tc.assign != nil {
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: 0, Replicas: tc.assign})
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var want []topic
	for _, tc := range topics {
		if tc.code != nil {
			want = append(want, tc)
		}
	}
	if len(resp.Topics) != len(want) {
		t.Fatalf("%d topics answered, want %d", len(resp.Topics), len(want))
	}
	for i, st := range resp.Topics {
		w := want[i]
		msg := ""
		if st.ErrorMessage != nil {
			msg = *st.ErrorMessage
		}
		if st.Topic != w.name || st.ErrorCode != w.code.Code || msg != w.msg || st.Configs == nil {
			t.Errorf("topic %.20q: %v %q, configs %v;\nwant %.20q: %v %q, an empty config list", st.Topic, kerr.ErrorForCode(st.ErrorCode), msg, st.Configs, w.name, w.code, w.msg)
		}
	}

	req = kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.ValidateOnly = true
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "checked", 1, 1
	req.Topics = append(req.Topics, rt)
	if resp, err = req.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	st := resp.Topics[0]
	if st.ErrorCode != 0 || st.TopicID == ([16]byte{}) {
		t.Errorf("validate-only: %v, topic id %x; want a topic id", kerr.ErrorForCode(st.ErrorCode), st.TopicID)
	}
	configs := map[string]string{}
	for _, c := range st.Configs {
		if c.Value != nil {
			configs[c.Name] = *c.Value
		}
	}
	for name, value := range map[string]string{
		"errors.deadletterqueue.group.enable": "false",
		"max.decompressed.message.bytes":      "2147483639",
		"remote.copy.lag.bytes":               "-1",
		"remote.copy.lag.ms":                  "0",
		"remote.log.copy.disable":             "false",
		"remote.log.delete.on.disable":        "false",
	} {
		if got, ok := configs[name]; !ok || got != value {
			t.Errorf("validate-only: %s = %q (listed %v), want %q", name, got, ok, value)
		}
	}
	if _, ok := configs["message.downconversion.enable"]; ok {
		t.Error("validate-only lists message.downconversion.enable, which Kafka 4 removed")
	}
}

// TestAdminAnswersLikeKafka: the codes and messages Kafka 4.4 answers a
// DeleteTopics of an unknown topic id, an IncrementalAlterConfigs setting
// a null value, and a FindCoordinator that finds one ("", not null).
func TestAdminAnswersLikeKafka(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	msg := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return *p
	}

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis = 10000
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.TopicID = [16]byte{0x5a, 15: 0xa5}
	del.Topics = append(del.Topics, dt)
	dresp, err := del.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if st := dresp.Topics[0]; st.ErrorCode != kerr.UnknownTopicID.Code || msg(st.ErrorMessage) != "This server does not host this topic ID." {
		t.Errorf("DeleteTopics of an unknown id: %v %q", kerr.ErrorForCode(st.ErrorCode), msg(st.ErrorMessage))
	}

	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op = "retention.ms", kmsg.IncrementalAlterConfigOpSet
	rr.Configs = append(rr.Configs, c)
	alter.Resources = append(alter.Resources, rr)
	aresp, err := alter.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if r := aresp.Resources[0]; r.ErrorCode != kerr.InvalidRequest.Code || msg(r.ErrorMessage) != "Null value not supported for : retention.ms" {
		t.Errorf("IncrementalAlterConfigs of a null value: %v %q", kerr.ErrorForCode(r.ErrorCode), msg(r.ErrorMessage))
	}

	describe := kmsg.NewPtrDescribeConfigsRequest()
	describe.Resources = append(describe.Resources, kmsg.DescribeConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "77"})
	raw, err := cl.Broker(0).Request(ctx, describe) // the client would route it to broker 77
	if err != nil {
		t.Fatal(err)
	}
	if r := raw.(*kmsg.DescribeConfigsResponse).Resources[0]; r.ErrorCode != kerr.InvalidRequest.Code || msg(r.ErrorMessage) != "Unexpected broker id, expected 0 or empty string, but received 77" {
		t.Errorf("DescribeConfigs of broker 77: %v %q", kerr.ErrorForCode(r.ErrorCode), msg(r.ErrorMessage))
	}

	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKeys = []string{"g"}
	fresp, err := find.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if co := fresp.Coordinators[0]; co.ErrorCode != 0 || msg(co.ErrorMessage) != "" {
		t.Errorf("FindCoordinator: %v %q, want no error and an empty message", kerr.ErrorForCode(co.ErrorCode), msg(co.ErrorMessage))
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
	// The messages are Kafka's words (ConfigurationControlManager,
	// ConfigDef).
	// A broker takes a name it does not define (retention.ms is a topic
	// config), as Kafka does.
	check(alter,
		answer{},
		answer{kerr.UnknownTopicOrPartition.Code, "The topic 'missing' does not exist."},
		answer{kerr.InvalidConfig.Code, "Invalid value soon for configuration retention.ms: Not a number of type LONG"},
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
		// Deleting a broker config that is not set is a no-op
		// (kafka-reassign-partitions --verify clears its throttles so).
		{kmsg.ConfigResourceTypeBroker, "", []kmsg.IncrementalAlterConfigOp{del}},
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
		answer{},
		answer{kerr.UnknownTopicOrPartition.Code, "The topic 'missing' does not exist."},
		refused(kerr.InvalidRequest, "config retention.ms appears more than once"),
		answer{},
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
		answer{kerr.InvalidRequest.Code, "Duplicate topic name."}, // once, as Kafka answers it
		answer{}, // a manual assignment, checked
		answer{kerr.UnknownTopicOrPartition.Code, ""}, // Kafka sends no message
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

// TestHighWatermarkCheckpoint: the node writes every replica's high
// watermark to replication-offset-checkpoint in its data directory, in
// Kafka's format, every replica.high.watermark.checkpoint.interval.ms
// while it runs and at shutdown.
func TestHighWatermarkCheckpoint(t *testing.T) {
	ctx := testkit.Context(t)
	dir := t.TempDir()
	n := brokertest.Start(t, brokertest.DataDir(dir), brokertest.Config("replica.high.watermark.checkpoint.interval.ms", "50"))
	cl := n.Client(kgo.DefaultProduceTopic("hw"), kgo.AllowAutoTopicCreation())
	for i := range 7 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	file := filepath.Join(dir, log.ReplicationOffsetCheckpoint)
	testkit.WaitFor(t, "the running node's checkpoint", func() (bool, string) {
		b, _ := os.ReadFile(file)
		return strings.Contains(string(b), "\nhw 0 7\n"), fmt.Sprintf("%q", b)
	})
	n.Restart()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "0\n") || !strings.Contains(string(b), "\nhw 0 7\n") {
		t.Fatalf("replication-offset-checkpoint after a restart: %q", b)
	}
}

// TestRetentionThroughTheBroker: small segments roll by size, and
// retention.bytes deletes whole old segments, advancing the log start offset
// that clients see; what remains reads back in order.
func TestRetentionThroughTheBroker(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("log.retention.check.interval.ms", "100"))
	cl := n.Client(kgo.DefaultProduceTopic("short"))
	adm := kadm.NewClient(cl)
	segment, retention := "400", "800"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"internal.segment.bytes": &segment, "retention.bytes": &retention}, "short"); err != nil {
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
	// The consumer starts at the log start it is told, which is start or
	// later: a retention pass that ran during the produces may have been
	// the one seen above, and the next one moves the start on.
	consumer := n.Client(kgo.ConsumeTopics("short"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	want := int64(-1)
	for want < 40 {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if want < 0 {
				if r.Offset < start {
					t.Fatalf("the consumer started at offset %d, before the log start %d", r.Offset, start)
				}
				want = r.Offset
			}
			if r.Offset > want && logStartAtLeast(t, adm, r.Offset) {
				// Retention passed the consumer (OFFSET_OUT_OF_RANGE): it
				// started again at the log start, which only grows, so the
				// start now is at least where it went on from.
				want = r.Offset
			}
			if r.Offset != want || !bytes.HasPrefix(r.Value, []byte(fmt.Sprintf("%03d-", want))) {
				t.Fatalf("offset %d value %.4q, want offset %d", r.Offset, r.Value, want)
			}
			want++
		})
	}
}

// logStartAtLeast reports whether the log start offset of short/0 is at
// least offset.
func logStartAtLeast(t *testing.T, adm *kadm.Client, offset int64) bool {
	offs, err := adm.ListStartOffsets(testkit.Context(t), "short")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := offs.Lookup("short", 0)
	return o.Offset >= offset
}

// TestRestartOpensLogsWithTopicConfigs: at a restart the logs are opened,
// and recovered, with their topics' configs, not the broker defaults: a
// segment whose offset index is damaged is rebuilt as the node wrote it,
// with the topic's index.interval.bytes of 1, where the default of 4096
// would leave these small batches unindexed.
func TestRestartOpensLogsWithTopicConfigs(t *testing.T) {
	ctx := testkit.Context(t)
	dir := t.TempDir()
	n := brokertest.Start(t, brokertest.DataDir(dir))
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"index.interval.bytes": kmsg.StringPtr("1")}, "indexed"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if got := produceRaw(ctx, t, cl, "indexed", 0, rawBatch(fmt.Sprint("batch ", i))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	n.Close()
	index := filepath.Join(dir, "indexed-0", "00000000000000000000.index")
	want, err := os.ReadFile(index)
	if err != nil || len(want) == 0 {
		t.Fatalf("the offset index written at close: %d bytes, %v", len(want), err)
	}
	if err := os.WriteFile(index, []byte{1, 2, 3}, 0o644); err != nil { // not a whole entry
		t.Fatal(err)
	}
	n.Restart()
	got, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the offset index rebuilt at the restart has %d bytes, want the %d written before (index.interval.bytes=1)", len(got), len(want))
	}
}

// A CreateTopics or DeleteTopics whose change the node is slow to put in
// effect answers when the request's timeout ends, with the change done,
// rather than after it: a client that timed out would send the request
// again and be told the topic exists (or does not).
func TestTopicChangesAnswerWithinTheirTimeout(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	release := n.Broker().HoldReconcileForTest()
	held := true
	defer func() {
		if held {
			release()
		}
	}()
	answered := make(chan error, 1)
	go func() {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 300
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "slow", 1, 1
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("CreateTopics while the node is slow to reconcile: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("CreateTopics with a 300ms timeout not answered in 15s while the node was slow to put the new topic in effect")
	}
	release()
	held = false
	testkit.WaitFor(t, "the node to open topic slow's partition", func() (bool, string) {
		return n.Broker().PartitionForTest("slow", 0) != nil, "no partition slow-0"
	})
}
