package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/recordjson"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// seedNumbered produces n records "v0".."v{n-1}" to one partition, with
// timestamps base, base+1s, ...
func seedNumbered(t *testing.T, b, topic string, partition int32, n int, base time.Time) {
	t.Helper()
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{
			Topic:     topic,
			Partition: partition,
			Value:     fmt.Appendf(nil, "v%d", i),
			Timestamp: base.Add(time.Duration(i) * time.Second),
		})
	}
	produceRecords(t, b, rs...)
}

func TestConsumeOffsets(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "offs", 1)
	base := time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)
	seedNumbered(t, b, "offs", 0, 10, base)

	tests := []struct {
		offset string
		want   string
	}{
		{"start", "0,1,2,3,4,5,6,7,8,9,"},
		{"end", ""},
		{"7", "7,8,9,"},
		{"-3", "7,8,9,"},
		{"-30", "0,1,2,3,4,5,6,7,8,9,"},
		{"+8", "8,9,"},
		{"2:5", "2,3,4,"},
		{":2", "0,1,"},
		{"-4:end", "6,7,8,9,"},
		{"@" + base.Add(6*time.Second).Format(time.RFC3339), "6,7,8,9,"},
		{"@" + fmt.Sprint(base.Add(3*time.Second).UnixMilli()), "3,4,5,6,7,8,9,"},
		{"@2024-01-15:@" + base.Add(2*time.Second).Format(time.RFC3339), "0,1,"},
		{"@2030-01-01", ""},
	}
	for _, tc := range tests {
		t.Run(tc.offset, func(t *testing.T) {
			r := mustRun(t, b, "", "consume", "offs", "-e", "-o", tc.offset, "-f", "%o,")
			if r.stdout != tc.want {
				t.Errorf("-o %s = %q, want %q", tc.offset, r.stdout, tc.want)
			}
		})
	}
}

func TestConsumeRangeWithoutE(t *testing.T) {
	// An upper bound alone ends the consume, without -e.
	b := startBroker(t)
	createTopic(t, b, "range", 1)
	seedNumbered(t, b, "range", 0, 5, time.Now())
	r := mustRun(t, b, "", "consume", "range", "-o", "1:3", "-f", "%v ")
	if r.stdout != "v1 v2 " {
		t.Errorf("got %q", r.stdout)
	}
}

func TestConsumeExitAtEndEmptyPartitions(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "sparse", 4)
	seedNumbered(t, b, "sparse", 2, 3, time.Now())

	r := mustRun(t, b, "", "consume", "sparse", "-e", "-f", "%p:%v ")
	if r.stdout != "2:v0 2:v1 2:v2 " {
		t.Errorf("got %q", r.stdout)
	}
	createTopic(t, b, "empty", 3)
	r = mustRun(t, b, "", "consume", "empty", "sparse", "-e", "-f", "%t ")
	if r.stdout != "sparse sparse sparse " {
		t.Errorf("two topics: got %q", r.stdout)
	}
	r = mustRun(t, b, "", "consume", "empty", "-e")
	if r.stdout != "" {
		t.Errorf("empty topic: got %q", r.stdout)
	}
}

func TestConsumeCount(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "count", 1)
	seedNumbered(t, b, "count", 0, 10, time.Now())
	r := mustRun(t, b, "", "consume", "count", "-n", "4")
	if r.stdout != "v0\nv1\nv2\nv3\n" {
		t.Errorf("-n 4 = %q", r.stdout)
	}
	// -n and an upper bound: whichever comes first ends the consume.
	r = mustRun(t, b, "", "consume", "count", "-o", "8:end", "-n", "5")
	if r.stdout != "v8\nv9\n" {
		t.Errorf("-o 8:end -n 5 = %q", r.stdout)
	}
	r = mustRun(t, b, "", "consume", "count", "-o", "2", "-n", "3", "-e")
	if r.stdout != "v2\nv3\nv4\n" {
		t.Errorf("-o 2 -n 3 = %q", r.stdout)
	}
}

func TestConsumeIdleTimeout(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "idle", 1)
	seedNumbered(t, b, "idle", 0, 2, time.Now())
	// While records flow the idle timer does not fire...
	r := mustRun(t, b, "", "consume", "idle", "-n", "2", "--timeout", "30s")
	if r.stdout != "v0\nv1\n" {
		t.Errorf("got %q", r.stdout)
	}
	// ...and with nothing to read it ends the consume cleanly.
	r = mustRun(t, b, "", "consume", "idle", "-o", "end", "--timeout", "100ms")
	if r.stdout != "" {
		t.Errorf("idle exit printed %q", r.stdout)
	}
}

func TestConsumeMissingTopic(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "present", 1)
	r := klogRun(t, b, "", "consume", "present", "nosuchtopic")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `"nosuchtopic"`) || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("stderr does not name the topic: %q", r.stderr)
	}
	// And it was not created as a side effect.
	r = mustRun(t, b, "", "topic", "list")
	if strings.Contains(r.stdout, "nosuchtopic") {
		t.Errorf("consume auto-created the topic:\n%s", r.stdout)
	}
	r = klogRun(t, b, "", "consume", "present", "-p", "3")
	if r.code != 1 || !strings.Contains(r.stderr, "partition 3") {
		t.Errorf("missing partition: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestConsumeGroup(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "grouped", 2)
	seedNumbered(t, b, "grouped", 0, 3, time.Now())
	seedNumbered(t, b, "grouped", 1, 2, time.Now())

	r := mustRun(t, b, "", "consume", "grouped", "-g", "g1", "-n", "5", "-f", "%p:%v\n")
	if got := len(lines(r.stdout)); got != 5 {
		t.Fatalf("first run printed %d records:\n%s", got, r.stdout)
	}
	// The group committed everything: a second run from the committed
	// offsets sees nothing, and -e ends it.
	r = mustRun(t, b, "", "consume", "grouped", "-g", "g1", "-e")
	if r.stdout != "" {
		t.Errorf("second run re-read committed records: %q", r.stdout)
	}
	seedNumbered(t, b, "grouped", 1, 1, time.Now())
	r = mustRun(t, b, "", "consume", "grouped", "-g", "g1", "-e")
	if r.stdout != "v0\n" {
		t.Errorf("third run = %q, want the one new record", r.stdout)
	}
}

// goldenRecords covers every shape the JSON lines must keep: null and empty
// keys and values, binary, non-UTF-8 header keys and values, null header
// values, duplicate headers in order, and two partitions.
func goldenRecords(topic string) []*kgo.Record {
	ts := time.UnixMilli(1705312800000)
	return []*kgo.Record{
		{Topic: topic, Partition: 0, Timestamp: ts, Key: []byte("k"), Value: []byte("plain")},
		{Topic: topic, Partition: 0, Timestamp: ts.Add(time.Millisecond), Key: nil, Value: nil},
		{Topic: topic, Partition: 0, Timestamp: ts.Add(2 * time.Millisecond), Key: []byte{}, Value: []byte{}},
		{Topic: topic, Partition: 1, Timestamp: ts, Key: []byte{0xff, 0x00, 0xfe}, Value: []byte{0x80, 'a', 0x00}},
		{Topic: topic, Partition: 1, Timestamp: ts, Key: []byte("ünïcode \"quoted\" <tag> & \n\t"), Value: []byte("{\"json\":true}"),
			Headers: []kgo.RecordHeader{
				{Key: "dup", Value: []byte("1")},
				{Key: "nul", Value: nil},
				{Key: "dup", Value: []byte("2")},
				{Key: "empty", Value: []byte{}},
				{Key: "bin", Value: []byte{0xc3, 0x28}},
				{Key: string([]byte{0xff, 'k'}), Value: []byte("bad key")},
				{Key: "dup", Value: []byte("1")},
			}},
	}
}

func TestJSONGoldenRoundTrip(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "src", 2)
	createTopic(t, b, "dst", 2)
	produceRecords(t, b, goldenRecords("src")...)

	first := mustRun(t, b, "", "consume", "src", "-e", "-f", "json").stdout
	first = sortLines(first)
	golden := filepath.Join("testdata", "records.jsonl")
	if *update {
		if err := os.WriteFile(golden, []byte(first), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if first != string(want) {
		t.Errorf("consume -f json differs from %s:\n got:\n%s\nwant:\n%s", golden, first, want)
	}

	mustRun(t, b, first, "produce", "dst", "-f", "json", "-q")
	second := sortLines(mustRun(t, b, "", "consume", "dst", "-e", "-f", "json").stdout)
	if strings.ReplaceAll(second, `"topic":"dst"`, `"topic":"src"`) != first {
		t.Errorf("round trip changed records:\nfirst:\n%s\nsecond:\n%s", first, second)
	}
}

// sortLines orders lines by partition then offset, which is the order of
// the golden file; records of different partitions interleave freely.
func sortLines(s string) string {
	ls := lines(s)
	key := func(l string) string {
		r, err := recordjson.Parse([]byte(l))
		if err != nil {
			return l
		}
		var off int64
		if i := strings.Index(l, `"offset":`); i >= 0 {
			_, _ = fmt.Sscan(l[i+len(`"offset":`):], &off)
		}
		return fmt.Sprintf("%010d/%020d", r.Partition, off)
	}
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && key(ls[j]) < key(ls[j-1]); j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// TestConsumeGroupRidesThroughQuorumLoss: a group member keeps running
// while the group's coordinator and a second node of three are down (the
// cluster has no quorum), says what it waits for, and consumes the record
// a producer could deliver only once the nodes came back.
func TestConsumeGroupRidesThroughQuorumLoss(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	ridesThroughQuorumLoss(t, strings.Join(c.Bootstrap(), ","),
		func(id int32) { c.Node(id).Kill() }, func(id int32) { c.Node(id).Start() })
}

// ridesThroughQuorumLoss is TestConsumeGroupRidesThroughQuorumLoss on the
// three nodes of the cluster at b, which kill and start act on.
func ridesThroughQuorumLoss(t *testing.T, b string, kill, start func(id int32)) {
	mustRun(t, b, "", "topic", "create", "live", "-p", "1", "-r", "3")
	mustRun(t, b, "before\n", "produce", "live", "-q")

	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	var out, diag testkit.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-b", b, "consume", "live", "-g", "live"}, strings.NewReader(""), &out, &diag, func(string) string { return "" })
	}()
	testkit.WaitFor(t, "the member to consume the first record", func() (bool, string) {
		return out.String() == "before\n", out.String() + diag.String()
	})

	coord := testAdmin(t, strings.Split(b, ",")[0]).FindGroupCoordinators(ctx, "live")["live"]
	if coord.Err != nil {
		t.Fatalf("find the coordinator of live: %v", coord.Err)
	}
	down := []int32{coord.NodeID, (coord.NodeID + 1) % 3}
	for _, id := range down {
		kill(id)
	}
	var pdiag testkit.Buffer
	produced := make(chan int, 1)
	go func() {
		produced <- run(ctx, []string{"-b", b, "produce", "live", "--timeout", "0"}, strings.NewReader("after\n"), io.Discard, &pdiag, func(string) string { return "" })
	}()
	testkit.WaitFor(t, "the member and the producer to say what they wait for", func() (bool, string) {
		select {
		case n := <-code:
			t.Fatalf("consume exited %d while the cluster had no quorum; stderr:\n%s", n, diag.String())
		default:
		}
		return strings.Contains(diag.String(), " for group live: ") && strings.Contains(pdiag.String(), " for live/0 (1 record): "),
			diag.String() + pdiag.String()
	})
	for _, id := range down {
		start(id)
	}
	testkit.WaitFor(t, "the producer to deliver the record", func() (bool, string) {
		return strings.Contains(pdiag.String(), "klog: live/0 delivered again after "), pdiag.String()
	})
	if n := <-produced; n != exitOK {
		t.Errorf("produce exited %d; stderr:\n%s", n, pdiag.String())
	}
	// The commit of the first record may be lost with the nodes: then
	// the member reads it again (at least once), as Kafka's would.
	testkit.WaitFor(t, "the member to rejoin and consume the record produced meanwhile", func() (bool, string) {
		return strings.HasSuffix(out.String(), "before\nafter\n") && strings.Contains(diag.String(), "klog: group live joined again after "), out.String() + diag.String()
	})
	cancel()
	if n := <-code; n != exitOK {
		t.Errorf("consume exited %d when interrupted; stderr:\n%s", n, diag.String())
	}
	t.Logf("consume's stderr:\n%sproduce's stderr:\n%s", diag.String(), pdiag.String())
}
