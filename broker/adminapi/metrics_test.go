package adminapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// metrics is one scrape of a node's GET /metrics.
type metrics map[string]*dto.MetricFamily

func scrape(t *testing.T, addr string) metrics {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the value of the series of name with the labels given as
// name, value pairs (and maybe others); a histogram's is its count.
func (m metrics) value(name string, labels ...string) (float64, bool) {
	f := m[name]
	if f == nil {
		return 0, false
	}
series:
	for _, s := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range s.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue series
			}
		}
		switch {
		case s.Counter != nil:
			return s.Counter.GetValue(), true
		case s.Gauge != nil:
			return s.Gauge.GetValue(), true
		case s.Histogram != nil:
			return float64(s.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// must is value, failing the test when the series is missing.
func (m metrics) must(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	v, ok := m.value(name, labels...)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

// TestMetricsMove: produce, consume and commit on one node, and the
// metrics follow: bytes in match the log's size, records in and the log
// end offset the records produced, bytes out at least the bytes in, a
// group's lag the records past its commit; a deleted topic's series go.
func TestMetricsMove(t *testing.T) {
	n := brokertest.Start(t)
	ctx := testkit.Context(t)
	cl := n.Client(kgo.DefaultProduceTopic("m"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "m"); err != nil {
		t.Fatal(err)
	}
	before := scrape(t, n.AdminAddr())
	if v := before.must(t, "kafka_controller_kafkacontroller_activecontrollercount"); v != 1 {
		t.Fatalf("active controller count %v", v)
	}
	if _, ok := before.value("kafka_server_brokertopicmetrics_bytesin_total", "topic", "m"); ok {
		t.Fatal("bytes in of a topic nothing was produced to")
	}
	const records = 10
	for i := range records {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "value-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	m := scrape(t, n.AdminAddr())
	in := m.must(t, "kafka_server_brokertopicmetrics_bytesin_total", "topic", "m")
	size := m.must(t, "kafka_log_log_size", "topic", "m", "partition", "0")
	if in < float64(records*len("value-0")) || in != size {
		t.Fatalf("bytes in %v, log size %v", in, size)
	}
	if v := m.must(t, "kafka_server_brokertopicmetrics_messagesin_total", "topic", "m"); v != records {
		t.Fatalf("messages in %v, want %d", v, records)
	}
	if v := m.must(t, "kafka_log_log_logendoffset", "topic", "m", "partition", "0"); v != records {
		t.Fatalf("log end offset %v", v)
	}
	if v := m.must(t, "kafka_log_log_size", "topic", "m", "partition", "1"); v != 0 {
		t.Fatalf("partition 1 holds %v bytes", v)
	}
	for _, name := range []string{"kafka_server_replicamanager_partitioncount", "kafka_server_replicamanager_leadercount"} {
		if v := m.must(t, name); v < 2 {
			t.Fatalf("%s %v", name, v)
		}
	}
	produces := m.must(t, "kafka_network_requestmetrics_requests_total", "request", "Produce")
	if produces < records || m.must(t, "kafka_network_requestmetrics_totaltimems", "request", "Produce") != produces {
		t.Fatalf("produce requests %v, histogram %v", produces, m.must(t, "kafka_network_requestmetrics_totaltimems", "request", "Produce"))
	}
	if v := m.must(t, "kafka_network_requestmetrics_requests_total", "request", "InitProducerId"); v < 1 {
		t.Fatalf("InitProducerId requests %v", v)
	}
	if v := m.must(t, "kafka_server_replicamanager_underreplicatedpartitions"); v != 0 {
		t.Fatalf("under-replicated %v on one node", v)
	}

	consumer := n.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"m": {0: kgo.NewOffset().AtStart()}}))
	for got := 0; got < records; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "m", Partition: 0, At: 4, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: "m", Partition: 1, At: 0, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g", offs); err != nil {
		t.Fatal(err)
	}
	m = scrape(t, n.AdminAddr())
	if out := m.must(t, "kafka_server_brokertopicmetrics_bytesout_total", "topic", "m"); out < in {
		t.Fatalf("bytes out %v, below the %v bytes consumed", out, in)
	}
	if v := m.must(t, "kafka_network_requestmetrics_requests_total", "request", "FetchConsumer"); v < 1 || v != m.must(t, "kafka_network_requestmetrics_requests_total", "request", "Fetch") {
		t.Fatalf("consumer fetches %v", v)
	}
	if v := m.must(t, "klog_consumergroup_records_lag", "group", "g", "topic", "m", "partition", "0"); v != records-4 {
		t.Fatalf("lag %v, want %d", v, records-4)
	}
	if v := m.must(t, "klog_consumergroup_records_lag_truncated"); v != 0 {
		t.Fatalf("lag truncated %v", v)
	}
	// The bound: a limit of one leaves the group's second partition out.
	if lags, truncated := n.Broker().GroupLags(ctx, 1); len(lags) != 1 || !truncated || lags[0].Partition != 0 || lags[0].Lag != records-4 {
		t.Fatalf("lags with a limit of 1: %+v truncated %v", lags, truncated)
	}
	if lags, truncated := n.Broker().GroupLags(ctx, 2); len(lags) != 2 || truncated || lags[1].Lag != 0 {
		t.Fatalf("lags with a limit of 2: %+v truncated %v", lags, truncated)
	}

	if _, err := adm.DeleteTopic(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the deleted topic's series to go", func() (bool, string) {
		m := scrape(t, n.AdminAddr())
		_, in := m.value("kafka_server_brokertopicmetrics_bytesin_total", "topic", "m")
		_, size := m.value("kafka_log_log_size", "topic", "m")
		return !in && !size, fmt.Sprintf("bytes in %v, log size %v", in, size)
	})
}

// TestMetricsUnderReplicated: in a 3-node cluster, killing a follower
// makes the leader report the partition under-replicated (its ISR shrunk,
// still at min.insync.replicas), and starting it again ends that with an
// ISR expand.
func TestMetricsUnderReplicated(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	ctx := testkit.Context(t)
	if _, err := kadm.NewClient(c.Client()).CreateTopic(ctx, 1, 3, nil, "r"); err != nil {
		t.Fatal(err)
	}
	var leader *brokertest.Node
	testkit.WaitFor(t, "a leader of r/0 with all three replicas in sync", func() (bool, string) {
		for _, n := range c.Nodes() {
			for _, r := range n.Broker().Stats().Replicas {
				if r.Topic == "r" && r.Leader && r.ISR == 3 {
					leader = n
					return true, ""
				}
			}
		}
		return false, ""
	})
	m := scrape(t, leader.AdminAddr())
	if v := m.must(t, "kafka_server_replicamanager_underreplicatedpartitions"); v != 0 {
		t.Fatalf("under-replicated %v before the kill", v)
	}
	shrinks := m.must(t, "kafka_server_replicamanager_isrshrinks_total")
	// The nodes are scraped one after another: while an election runs (a
	// busy machine can delay heartbeats) two may each report they were
	// the active controller; the count settles to one.
	var follower *brokertest.Node
	testkit.WaitFor(t, "one active controller and a follower that is not it", func() (bool, string) {
		controllers := 0
		follower = nil
		for _, n := range c.Nodes() {
			active := scrape(t, n.AdminAddr()).must(t, "kafka_controller_kafkacontroller_activecontrollercount")
			controllers += int(active)
			// A follower that is not the active controller: the quorum
			// stays as it is.
			if n != leader && active == 0 {
				follower = n
			}
		}
		return controllers == 1 && follower != nil, fmt.Sprintf("%d active controllers", controllers)
	})
	follower.Kill()
	testkit.WaitFor(t, "the leader to report r/0 under-replicated", func() (bool, string) {
		m := scrape(t, leader.AdminAddr())
		under := m.must(t, "kafka_server_replicamanager_underreplicatedpartitions")
		leads := m.must(t, "kafka_server_replicamanager_leadercount")
		// Every partition the leader leads has the killed node as
		// replica: r/0 and the internal topics' (three replicas each).
		return under >= 1 && under == leads, fmt.Sprintf("%v under-replicated of %v led", under, leads)
	})
	m = scrape(t, leader.AdminAddr())
	if v := m.must(t, "kafka_server_replicamanager_isrshrinks_total"); v <= shrinks {
		t.Fatalf("ISR shrinks %v, %v before the kill", v, shrinks)
	}
	if v := m.must(t, "kafka_server_replicamanager_underminisrpartitioncount"); v != 0 {
		t.Fatalf("under min ISR %v with two of three in sync", v)
	}
	expands := m.must(t, "kafka_server_replicamanager_isrexpands_total")
	follower.Start()
	testkit.WaitFor(t, "r/0 in sync again", func() (bool, string) {
		m := scrape(t, leader.AdminAddr())
		under := m.must(t, "kafka_server_replicamanager_underreplicatedpartitions")
		return under == 0 && m.must(t, "kafka_server_replicamanager_isrexpands_total") > expands, fmt.Sprintf("%v under-replicated", under)
	})
}

// TestThroughput: GET /v1/throughput sums the per-topic counters /metrics
// shows.
func TestThroughput(t *testing.T) {
	n := brokertest.Start(t)
	ctx := testkit.Context(t)
	cl := n.Client(kgo.ConsumeTopics("tp"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "tp"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "tp", Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for seen := 0; seen < 10; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		seen += fs.NumRecords()
	}
	tp, err := nodeapi.NewClient(n.AdminAddr(), 0).Throughput(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := scrape(t, n.AdminAddr())
	in := m.must(t, "kafka_server_brokertopicmetrics_bytesin_total", "topic", "tp")
	out := m.must(t, "kafka_server_brokertopicmetrics_bytesout_total", "topic", "tp")
	if tp.MessagesIn != 10 || float64(tp.BytesIn) != in || float64(tp.BytesOut) > out || tp.BytesOut == 0 || tp.Requests == 0 || tp.NodeID != 0 {
		t.Fatalf("throughput %+v; /metrics bytes in %v, out %v", tp, in, out)
	}
}
