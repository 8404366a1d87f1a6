package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTopicCreateListDescribeDelete(t *testing.T) {
	b := startBroker(t)

	r := mustRun(t, b, "", "topic", "create", "alpha", "beta", "-p", "3", "-c", "cleanup.policy=compact")
	for _, want := range []string{"alpha", "beta", "CREATED"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("create output lacks %q:\n%s", want, r.stdout)
		}
	}

	// One of three already exists: the other two are created, the
	// failure is reported, and the exit status is 1.
	r = klogRun(t, b, "", "topic", "create", "alpha", "gamma", "delta", "-p", "1")
	if r.code != 1 {
		t.Fatalf("create with one existing: exit %d, want 1\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `topic "alpha"`) || !strings.Contains(r.stderr, "TOPIC_ALREADY_EXISTS") {
		t.Errorf("stderr does not name the failed topic: %q", r.stderr)
	}
	if !strings.Contains(r.stderr, "1 of 3 topics failed") {
		t.Errorf("stderr lacks the summary: %q", r.stderr)
	}

	r = mustRun(t, b, "", "topic", "list")
	got := lines(r.stdout)
	want := []string{"NAME", "alpha", "beta", "delta", "gamma"}
	if len(got) != len(want) {
		t.Fatalf("list:\n%s", r.stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("list line %d = %q, want prefix %q", i, got[i], w)
		}
	}

	r = mustRun(t, b, "", "--format", "json", "topic", "list")
	var list topicListJSON
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list JSON: %v\n%s", err, r.stdout)
	}
	if list.Version != 1 || len(list.Topics) != 4 || list.Topics[0].Name != "alpha" || list.Topics[0].Partitions != 3 {
		t.Errorf("list JSON = %+v", list)
	}

	recs := goldenRecords("alpha")[:3]
	recs[1].Key = []byte("k1") // alpha is compacted, which refuses null keys as Kafka does
	produceRecords(t, b, recs...)
	r = mustRun(t, b, "", "topic", "describe", "alpha")
	for _, want := range []string{"NAME", "alpha", "PARTITIONS", "cleanup.policy", "compact", "HIGH-WATERMARK"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.stdout)
		}
	}

	r = klogRun(t, b, "", "--format", "json", "topic", "describe", "alpha", "missing")
	if r.code != 1 || !strings.Contains(r.stderr, `"missing"`) {
		t.Errorf("describe missing: exit %d stderr %q", r.code, r.stderr)
	}
	var desc topicDescribeJSON
	if err := json.Unmarshal([]byte(r.stdout), &desc); err != nil {
		t.Fatalf("describe JSON: %v\n%s", err, r.stdout)
	}
	if desc.Version != 1 || len(desc.Topics) != 2 {
		t.Fatalf("describe JSON = %+v", desc)
	}
	a := desc.Topics[0]
	if a.Name != "alpha" || len(a.Partitions) != 3 || a.Partitions[0].HighWatermark != 3 || a.Partitions[0].LogStartOffset != 0 {
		t.Errorf("alpha = %+v", a)
	}
	if len(a.Partitions[0].Replicas) != 1 || len(a.Partitions[0].ISR) != 1 {
		t.Errorf("alpha replicas/isr = %+v", a.Partitions[0])
	}
	foundPolicy := false
	for _, c := range a.Configs {
		if c.Key == "cleanup.policy" && c.Value != nil && *c.Value == "compact" {
			foundPolicy = true
		}
	}
	if !foundPolicy {
		t.Errorf("alpha configs lack cleanup.policy=compact: %+v", a.Configs)
	}
	if desc.Topics[1].Name != "missing" || desc.Topics[1].Error == "" {
		t.Errorf("missing = %+v", desc.Topics[1])
	}

	r = mustRun(t, b, "", "--format", "json", "topic", "delete", "gamma", "delta", "--yes")
	var res topicResults
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("delete JSON: %v\n%s", err, r.stdout)
	}
	if res.Version != 1 || len(res.Topics) != 2 || res.Topics[0].Error != "" {
		t.Errorf("delete JSON = %+v", res)
	}
	r = klogRun(t, b, "", "topic", "delete", "gamma", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, `topic "gamma"`) {
		t.Errorf("delete again: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestTopicAddPartitionsAndAlterConfig(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "grow", 1)

	mustRun(t, b, "", "topic", "add-partitions", "grow", "--total", "4")
	r := mustRun(t, b, "", "--format", "json", "topic", "describe", "grow")
	var desc topicDescribeJSON
	if err := json.Unmarshal([]byte(r.stdout), &desc); err != nil {
		t.Fatal(err)
	}
	if n := len(desc.Topics[0].Partitions); n != 4 {
		t.Errorf("after add-partitions: %d partitions, want 4", n)
	}
	// Shrinking is refused per topic.
	r = klogRun(t, b, "", "topic", "add-partitions", "grow", "-n", "2")
	if r.code != 1 {
		t.Errorf("shrink: exit %d, want 1; stderr %q", r.code, r.stderr)
	}

	mustRun(t, b, "", "topic", "alter-config", "grow", "--set", "retention.ms=1234", "--set", "cleanup.policy=compact")
	configs := describeConfigs(t, b, "grow")
	if configs["retention.ms"] != "1234" || configs["cleanup.policy"] != "compact" {
		t.Errorf("after set: %v", configs)
	}
	mustRun(t, b, "", "topic", "alter-config", "grow", "--delete", "retention.ms")
	configs = describeConfigs(t, b, "grow")
	if _, ok := configs["retention.ms"]; ok {
		t.Errorf("retention.ms still overridden after delete: %v", configs)
	}
	if configs["cleanup.policy"] != "compact" {
		t.Errorf("delete of one key changed another: %v", configs)
	}

	r = klogRun(t, b, "", "topic", "alter-config", "grow")
	if r.code != 2 {
		t.Errorf("alter-config without changes: exit %d, want 2", r.code)
	}
}

// describeConfigs returns the non-default configs of a topic.
func describeConfigs(t *testing.T, b, topic string) map[string]string {
	t.Helper()
	r := mustRun(t, b, "", "--format", "json", "topic", "describe", topic)
	var desc topicDescribeJSON
	if err := json.Unmarshal([]byte(r.stdout), &desc); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string)
	for _, c := range desc.Topics[0].Configs {
		if c.Value != nil {
			out[c.Key] = *c.Value
		}
	}
	return out
}
