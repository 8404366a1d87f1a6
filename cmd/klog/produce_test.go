package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/klogdev/klog/broker/brokertest"
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

	// A missing topic is auto-created, as Kafka's producers do, when the
	// cluster allows it...
	mustRun(t, b, "x\n", "produce", "fresh", "-q")
	if r := mustRun(t, b, "", "consume", "fresh", "-e"); r.stdout != "x\n" {
		t.Errorf("auto-created topic holds %q", r.stdout)
	}
	// ...and is an error naming the topic when it does not.
	strict := startBrokerWith(t, brokertest.Config("auto.create.topics.enable", "false"))
	r := klogRun(t, strict, "x\n", "produce", "missing")
	if r.code != 1 || !strings.Contains(r.stderr, `"missing"`) {
		t.Errorf("missing topic: exit %d, stderr %q", r.code, r.stderr)
	}
	r = klogRun(t, b, "x\n", "produce", "small", "-p", "5")
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
