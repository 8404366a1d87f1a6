package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// logStarts is the log start offset of each partition of topic.
func logStarts(t *testing.T, b, topic string) map[int32]int64 {
	t.Helper()
	offs, err := testAdmin(t, b).ListStartOffsets(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int32]int64)
	offs.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

func TestTopicTrim(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "trimt", 2)
	base := time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)
	seedNumbered(t, b, "trimt", 0, 10, base)
	seedNumbered(t, b, "trimt", 1, 5, base.Add(100*time.Second))
	mustRun(t, b, "", "topic", "create", "trimc", "-p", "1", "-c", "cleanup.policy=compact")

	// Dry run: the plan, nothing deleted.
	r := mustRun(t, b, "", "topic", "trim", "trimt/0", "--before", "3", "--dry-run")
	want := "TOPIC  PARTITION  LOG-START  NEW-START\ntrimt  0          0          3\n"
	if r.stdout != want {
		t.Errorf("dry run:\n%s\nwant:\n%s", r.stdout, want)
	}
	// Without a terminal and without --yes: the plan, then refusal.
	r = klogRun(t, b, "", "topic", "trim", "trimt/0", "--before", "3")
	if r.code != exitFailure || r.stdout != want || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("trim without --yes: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if got := logStarts(t, b, "trimt"); got[0] != 0 || got[1] != 0 {
		t.Fatalf("log starts %v after an unconfirmed trim", got)
	}

	// --yes: the table once, of what was trimmed.
	r = mustRun(t, b, "", "topic", "trim", "trimt/0", "--before", "3", "--yes")
	if r.stdout != want || r.stderr != "trimmed 1 partition\n" {
		t.Errorf("trim trimt/0 --before 3:\n%s\nstderr %q", r.stdout, r.stderr)
	}
	// Nothing before the new start: nothing trimmed, and said so.
	r = mustRun(t, b, "", "topic", "trim", "trimt/0", "--before", "2", "--yes")
	if r.stdout != "TOPIC  PARTITION  LOG-START  NEW-START\ntrimt  0          3          3\n" || !strings.HasPrefix(r.stderr, "nothing trimmed") {
		t.Errorf("trim trimt/0 --before 2 after 3:\n%s\nstderr %q", r.stdout, r.stderr)
	}
	// A time: the records before it go, in every partition of a bare
	// topic; partition 1 has none before it.
	r = mustRun(t, b, "", "topic", "trim", "trimt", "--before", "@"+base.Add(6*time.Second).Format(time.RFC3339), "--yes")
	if got := logStarts(t, b, "trimt"); got[0] != 6 || got[1] != 0 {
		t.Errorf("log starts %v after --before @T+6s, want 6 and 0\n%s", got, r.stdout)
	}
	if !strings.Contains(r.stdout, "trimt  0          3          6\ntrimt  1          0          0\n") {
		t.Errorf("trim by time printed:\n%s", r.stdout)
	}
	// JSON: one document with the plan and the low watermarks.
	r = mustRun(t, b, "", "--format", "json", "topic", "trim", "trimt/1", "--before", "-2", "--yes")
	var res topicTrimJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("trim JSON: %v\n%s", err, r.stdout)
	}
	if res.Version != topicJSONVersion || res.DryRun || !res.Trimmed || len(res.Partitions) != 1 {
		t.Fatalf("trim JSON = %s", r.stdout)
	}
	if p := res.Partitions[0]; p.Topic != "trimt" || p.Partition != 1 || p.LogStart != 0 || p.Before != 3 || p.LowWatermark != 3 || p.Error != "" {
		t.Errorf("trim JSON partition = %+v", p)
	}
	// end: everything.
	mustRun(t, b, "", "topic", "trim", "trimt", "--before", "end", "--yes")
	if got := logStarts(t, b, "trimt"); got[0] != 10 || got[1] != 5 {
		t.Errorf("log starts %v after --before end, want 10 and 5", got)
	}

	// The broker's refusals are per partition, exit 1.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trimt/0", "--before", "11"}, "trimt/0: OFFSET_OUT_OF_RANGE"},
		{[]string{"trimc", "--before", "end"}, "trimc/0: POLICY_VIOLATION"},
		{[]string{"trimt/7", "--before", "1"}, `trimt/7: partition does not exist`},
		{[]string{"missing", "--before", "1"}, `topic "missing": topic does not exist`},
	} {
		r := klogRun(t, b, "", append([]string{"topic", "trim", "--yes"}, c.args...)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, c.want) {
			t.Errorf("trim %q: exit %d, stderr %q; want %d and %q", c.args, r.code, r.stderr, exitFailure, c.want)
		}
	}
	for _, args := range [][]string{
		{"topic", "trim", "trimt"},                      // no --before
		{"topic", "trim", "trimt", "--before", "1:3"},   // a range
		{"topic", "trim", "trimt", "--before", "soon"},  // not a position
		{"topic", "trim", "trimt", "--before", "start"}, // nothing to do
		{"topic", "trim", "trimt/x", "--before", "1"},   // not a partition
		{"topic", "trim", "--before", "1"},              // no topic
	} {
		if r := klogRun(t, b, "", args...); r.code != exitUsage {
			t.Errorf("klog %q: exit %d, want %d; stderr %q", args, r.code, exitUsage, r.stderr)
		}
	}
}
