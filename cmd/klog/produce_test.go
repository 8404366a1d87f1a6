package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

func TestProduceConsumeLines(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "lines", 1)

	r := mustRun(t, b, "one\ntwo\n\nthree", "produce", "lines")
	if r.stdout != "" {
		t.Errorf("produce wrote data to stdout: %q", r.stdout)
	}
	want := []string{"lines[0]@0", "lines[0]@1", "lines[0]@2", "lines[0]@3"}
	if got := lines(r.stderr); !slices.Equal(got, want) {
		t.Errorf("landing report = %q, want %q", got, want)
	}

	r = mustRun(t, b, "", "consume", "lines", "-e", "-f", `%o [%v]\n`)
	wantOut := "0 [one]\n1 [two]\n2 []\n3 [three]\n"
	if r.stdout != wantOut {
		t.Errorf("consume = %q, want %q", r.stdout, wantOut)
	}
}

func TestProduceQuiet(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "q", 1)
	r := mustRun(t, b, "a\nb\n", "produce", "q", "-q")
	if r.stderr != "" || r.stdout != "" {
		t.Errorf("-q printed stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestProduceKeysHeadersTombstones(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "kv", 1)

	mustRun(t, b, "k1:v1\nk2:\nnokey\n:v4\n", "produce", "kv", "-K", ":", "-Z", "-H", "a=1", "-H", "a=2", "-H", "empty=", "-q")
	r := mustRun(t, b, "", "consume", "kv", "-e", "-f", "json")
	got := lines(r.stdout)
	want := []string{
		`{"topic":"kv","partition":0,"offset":0,"timestamp":TS,"key":"k1","value":"v1","headers":[{"key":"a","value":"1"},{"key":"a","value":"2"},{"key":"empty","value":""}]}`,
		`{"topic":"kv","partition":0,"offset":1,"timestamp":TS,"key":"k2","value":null,"headers":[{"key":"a","value":"1"},{"key":"a","value":"2"},{"key":"empty","value":""}]}`,
		`{"topic":"kv","partition":0,"offset":2,"timestamp":TS,"key":null,"value":"nokey","headers":[{"key":"a","value":"1"},{"key":"a","value":"2"},{"key":"empty","value":""}]}`,
		`{"topic":"kv","partition":0,"offset":3,"timestamp":TS,"key":"","value":"v4","headers":[{"key":"a","value":"1"},{"key":"a","value":"2"},{"key":"empty","value":""}]}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d:\n%s", len(got), len(want), r.stdout)
	}
	for i := range got {
		if g := maskTimestamp(got[i]); g != want[i] {
			t.Errorf("record %d:\n got %s\nwant %s", i, g, want[i])
		}
	}

	// A fixed key, and an empty line that stays an empty value without -Z.
	createTopic(t, b, "fixed", 1)
	mustRun(t, b, "x\n\n", "produce", "fixed", "-k", "K", "-q")
	r = mustRun(t, b, "", "consume", "fixed", "-e", "-f", `%k=[%v]|`)
	if r.stdout != `K=[x]|K=[]|` {
		t.Errorf("fixed key consume = %q", r.stdout)
	}
}

// maskTimestamp replaces the timestamp value in a JSON line with TS.
func maskTimestamp(line string) string {
	i := strings.Index(line, `"timestamp":`)
	if i < 0 {
		return line
	}
	i += len(`"timestamp":`)
	j := i
	for j < len(line) && (line[j] == '-' || (line[j] >= '0' && line[j] <= '9')) {
		j++
	}
	return line[:i] + "TS" + line[j:]
}

func TestProducePartitionAndCodecs(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "codecs", 3)
	for i, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		r := mustRun(t, b, fmt.Sprintf("%s-a\n%s-b\n", codec, codec), "produce", "codecs", "-p", "2", "-z", codec)
		want := []string{fmt.Sprintf("codecs[2]@%d", 2*i), fmt.Sprintf("codecs[2]@%d", 2*i+1)}
		if got := lines(r.stderr); !slices.Equal(got, want) {
			t.Errorf("%s: landing = %q, want %q", codec, got, want)
		}
	}
	r := mustRun(t, b, "", "consume", "codecs", "-e", "-p", "2")
	want := "none-a\nnone-b\ngzip-a\ngzip-b\nsnappy-a\nsnappy-b\nlz4-a\nlz4-b\nzstd-a\nzstd-b\n"
	if r.stdout != want {
		t.Errorf("consume = %q, want %q", r.stdout, want)
	}
	r = mustRun(t, b, "", "consume", "codecs", "-e", "-p", "0,1")
	if r.stdout != "" {
		t.Errorf("partitions 0,1 should be empty, got %q", r.stdout)
	}
}

func TestProduceAcks(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "acks", 1)
	for _, acks := range []string{"all", "1", "0"} {
		mustRun(t, b, "v-"+acks+"\n", "produce", "acks", "--acks", acks, "-q")
	}
	r := mustRun(t, b, "", "consume", "acks", "-n", "3")
	if r.stdout != "v-all\nv-1\nv-0\n" {
		t.Errorf("consume = %q", r.stdout)
	}
}

func TestProduceFormatLayout(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "layout", 1)
	mustRun(t, b, "k1 v1\nk2 v2\n", "produce", "layout", "-f", `%k %v\n`, "-q")
	r := mustRun(t, b, "", "consume", "layout", "-e", "-f", `%k=%v;`)
	if r.stdout != "k1=v1;k2=v2;" {
		t.Errorf("consume = %q", r.stdout)
	}
}

func TestProduceFailures(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "small", 2)

	r := klogRun(t, b, "x\n", "produce", "small", "-p", "5")
	if r.code != 1 || !strings.Contains(r.stderr, "partition") {
		t.Errorf("bad partition: exit %d, stderr %q", r.code, r.stderr)
	}
	// JSON input naming a partition that does not exist fails that record
	// only; the others land.
	in := `{"value":"ok"}` + "\n" + `{"partition":9,"value":"bad"}` + "\n" + `{"partition":1,"value":"ok1"}` + "\n"
	r = klogRun(t, b, in, "produce", "small", "-f", "json")
	if r.code != 1 || !strings.Contains(r.stderr, "record 2") || !strings.Contains(r.stderr, "1 of 3 records failed") {
		t.Errorf("bad JSON partition: exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "small[1]@0") {
		t.Errorf("record with partition 1 did not land there: %q", r.stderr)
	}
	// A line longer than the limit is an error naming the limit.
	r = klogRun(t, b, strings.Repeat("x", 100)+"\n", "produce", "small", "--max-message-bytes", "10")
	if r.code != 1 || !strings.Contains(r.stderr, "longer than 10 bytes") {
		t.Errorf("long line: exit %d, stderr %q", r.code, r.stderr)
	}
	// Invalid JSON input names the record.
	r = klogRun(t, b, "{not json}\n", "produce", "small", "-f", "json")
	if r.code != 1 || !strings.Contains(r.stderr, "input record 1") {
		t.Errorf("bad JSON: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestProduceMissingTopic: a topic that does not exist is an error naming
// it and saying how to create it, even where the cluster auto-creates
// topics, and it is not created; --create creates it, even where the
// cluster does not auto-create topics.
func TestProduceMissingTopic(t *testing.T) {
	b := startBroker(t) // auto.create.topics.enable=true, as in Kafka
	r := klogRun(t, b, "hi\n", "produce", "ordres")
	want := `klog: topic "ordres": topic does not exist; create it with klog topic create ordres, or pass --create`
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("missing topic: exit %d, stderr %q, want 1 and %q", r.code, r.stderr, want)
	}
	if out := mustRun(t, b, "", "topic", "list").stdout; strings.Contains(out, "ordres") {
		t.Errorf("produce created the topic:\n%s", out)
	}

	strict := startBrokerWith(t, brokertest.Config("auto.create.topics.enable", "false"), brokertest.Config("num.partitions", "2"))
	r = mustRun(t, strict, "x\n", "produce", "fresh", "--create", "-p", "1")
	if r.stderr != "fresh[1]@0\n" {
		t.Errorf("--create: stderr %q", r.stderr)
	}
	// An existing topic is fine with --create.
	mustRun(t, strict, "y\n", "produce", "fresh", "--create", "-p", "1", "-q")
	if r := mustRun(t, strict, "", "consume", "fresh", "-e"); r.stdout != "x\ny\n" {
		t.Errorf("created topic holds %q", r.stdout)
	}
}

func TestProduceStreamsLargeInput(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "bulk", 3)
	const n = 30000 // more than the producer's buffered-records bound
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "key-%d|value-%d\n", i, i)
	}
	mustRun(t, b, in.String(), "produce", "bulk", "-K", "|", "-q", "-z", "zstd")
	r := mustRun(t, b, "", "consume", "bulk", "-e", "-f", "%k\n")
	if got := len(lines(r.stdout)); got != n {
		t.Fatalf("consumed %d records, want %d", got, n)
	}
	// Records with the same key land on the same partition.
	r = mustRun(t, b, "key-7|again\n", "produce", "bulk", "-K", "|")
	first := mustRun(t, b, "", "consume", "bulk", "-e", "-f", "%k %p\n").stdout
	var part string
	for _, l := range lines(first) {
		if strings.HasPrefix(l, "key-7 ") {
			part = strings.TrimPrefix(l, "key-7 ")
			break
		}
	}
	if !strings.HasPrefix(r.stderr, "bulk["+part+"]@") {
		t.Errorf("key-7 went to %q first, then %q", part, r.stderr)
	}
}

func TestProduceLayoutTombstone(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "lt", 1)
	mustRun(t, b, "a=\nb=x\n", "produce", "lt", "-f", `%k=%v\n`, "-Z", "-q")
	r := mustRun(t, b, "", "consume", "lt", "-e", "-f", "json")
	got := lines(r.stdout)
	if len(got) != 2 || !strings.Contains(got[0], `"key":"a","value":null`) || !strings.Contains(got[1], `"key":"b","value":"x"`) {
		t.Errorf("got %q", got)
	}
}

// TestProduceSaysWhatItWaitsFor: on a 3-node cluster, with a follower down
// a topic whose min.insync.replicas is 3 refuses records, and with the
// leader of a partition down too (the cluster has lost its quorum) that
// partition takes none: produce says why within a few seconds, and
// --timeout ends it with exit 1 naming the records not delivered.
func TestProduceSaysWhatItWaitsFor(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	b := strings.Join(c.Bootstrap(), ",")
	mustRun(t, b, "", "topic", "create", "orders", "-p", "1", "-r", "3")
	mustRun(t, b, "", "topic", "create", "strict", "-p", "1", "-r", "3", "-c", "min.insync.replicas=3")
	mustRun(t, b, "ok\n", "produce", "strict", "-q")
	leader, strictLeader := c.Leader("orders", 0), c.Leader("strict", 0)
	follower := int32(0)
	for follower == leader || follower == strictLeader {
		follower++
	}

	c.Node(follower).Kill()
	testkit.WaitFor(t, "strict/0's ISR to shrink to 2", func() (bool, string) {
		p := c.Partition("strict", 0)
		return len(p.ISR) == 2, fmt.Sprint("ISR ", p.ISR)
	})
	r := klogRun(t, b, "a\nb\n", "produce", "strict", "--timeout", "5s")
	checkWaited(t, r, "strict/0 (2 records): NOT_ENOUGH_REPLICAS (min.insync.replicas 3, in sync 2: ",
		"2 records of 2 not delivered within --timeout 5s: strict/0 records 1-2 (NOT_ENOUGH_REPLICAS (min.insync.replicas 3, in sync 2")

	c.Node(leader).Kill()
	addr := c.Node(leader).Addr()
	r = klogRun(t, b, "one\n", "produce", "orders", "-p", "0", "--timeout", "5s")
	why := fmt.Sprintf("leader %d at %s unreachable: connection refused", leader, addr)
	checkWaited(t, r, "orders/0 (1 record): "+why, "1 record of 1 not delivered within --timeout 5s: orders/0 record 1 ("+why+")")
}

// checkWaited checks that a produce printed waitLine's wait within 4s,
// gave up after its 5s --timeout and exited 1 with final.
func checkWaited(t *testing.T, r result, wait, final string) {
	t.Helper()
	var first string
	for _, l := range lines(r.stderr) {
		if strings.HasPrefix(l, "klog: waiting ") && strings.Contains(l, " for "+wait) {
			first = l
			break
		}
	}
	var waited time.Duration
	if first != "" {
		waited, _ = time.ParseDuration(strings.Fields(first)[2])
	}
	if first == "" || waited > 4*time.Second {
		t.Errorf("no line waiting for %q within 4s:\n%s", wait, r.stderr)
	}
	if r.code != 1 || !strings.Contains(r.stderr, "klog: "+final) {
		t.Errorf("exit %d, want 1 and %q; stderr:\n%s", r.code, final, r.stderr)
	}
}

func TestIndexRanges(t *testing.T) {
	for _, tc := range []struct {
		idx  []int64
		want string
	}{
		{[]int64{4}, "record 4"},
		{[]int64{3, 1, 2, 7}, "records 1-3, 7"},
		{[]int64{1, 3, 5, 7, 9}, "records 1, 3, 5 and 2 more"},
	} {
		if got := indexRanges(tc.idx, 3); got != tc.want {
			t.Errorf("indexRanges(%v) = %q, want %q", tc.idx, got, tc.want)
		}
	}
}
