package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
)

// TestTopicCompact: --dry-run lists what cleaning would remove per key and
// the tombstones it keeps, and changes nothing; compact then removes just
// that, on a node whose background cleaner is off.
func TestTopicCompact(t *testing.T) {
	n := brokertest.Start(t, brokertest.Config("log.cleaner.enable", "false"))
	b := n.Addr()
	mustRun(t, b, "", "topic", "create", "cmp", "-p", "1", "-c", "cleanup.policy=compact", "-c", "internal.segment.bytes=1024")
	var recs []*kgo.Record
	for round := range 6 {
		for _, k := range []string{"a", "b", "c"} {
			recs = append(recs, &kgo.Record{Topic: "cmp", Key: []byte(k), Value: fmt.Appendf(nil, "%s%d", k, round)})
		}
	}
	recs = append(recs, &kgo.Record{Topic: "cmp", Key: []byte("b")}) // b's tombstone, offset 18
	for i := range 30 {
		recs = append(recs, &kgo.Record{Topic: "cmp", Key: fmt.Appendf(nil, "other%d", i), Value: []byte("filler")})
	}
	for _, r := range recs {
		produceRecords(t, b, r)
	}
	admin := "--admin=" + n.AdminAddr()
	r := mustRun(t, b, "", admin, "topic", "compact", "cmp", "--dry-run")
	for _, want := range []string{
		"node 0, cmp/0: 3 keys would lose records; 0 records of aborted transactions, 0 without key\n",
		"KEY  RECORDS\nb    6\na    5\nc    5\n",
		"node 0, cmp/0: 1 tombstone pending\n",
		"KEY  OFFSET  EXPIRES",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run: no %q in\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "\nb    18      ") {
		t.Errorf("dry run: tombstone of b at 18 not listed:\n%s", r.stdout)
	}
	consumed := func() int {
		return len(lines(mustRun(t, b, "", "consume", "cmp", "-e").stdout))
	}
	if got := consumed(); got != len(recs) {
		t.Fatalf("after the dry run %d records, want all %d", got, len(recs))
	}
	r = mustRun(t, b, "", admin, "--format", "json", "topic", "compact", "cmp")
	var doc topicCompactJSON
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != 1 || len(doc.Nodes[0].Partitions) != 1 {
		t.Fatalf("compact: %s", r.stdout)
	}
	p := doc.Nodes[0].Partitions[0]
	if !p.Cleaned || p.RecordsRemoved != 16 || p.Cleaner.Runs != 1 || p.EndOffset != p.FirstUncleanableOffset {
		t.Fatalf("compact: %+v", p)
	}
	if got := consumed(); got != len(recs)-16 {
		t.Fatalf("after compact %d records, want %d", got, len(recs)-16)
	}
}

// TestTopicCompactErrors: an unknown topic, a topic that is not compacted
// and a node without admin API each fail with the reason.
func TestTopicCompactErrors(t *testing.T) {
	n := brokertest.Start(t)
	b := n.Addr()
	createTopic(t, b, "plain", 1)
	admin := "--admin=" + n.AdminAddr()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{admin, "topic", "compact", "nope"}, exitFailure, "unknown topic or partition: nope"},
		{[]string{admin, "topic", "compact", "plain"}, exitFailure, "topic plain: cleanup.policy has no compact (it is delete)"},
		{[]string{admin, "topic", "compact", "plain/x"}, exitUsage, "partition must be a non-negative number"},
		{[]string{"--admin=127.0.0.1:1", "topic", "compact", "plain"}, exitFailure, "admin API 127.0.0.1:1"},
	} {
		r := klogRun(t, b, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("klog %q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.msg)
		}
	}
}
