package config

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/errmsg"
)

func TestDefsSortedAndValid(t *testing.T) {
	for _, set := range []struct {
		name string
		defs []Def
	}{{"topic", TopicDefs()}, {"broker", BrokerDefs()}} {
		if !sort.SliceIsSorted(set.defs, func(i, j int) bool { return set.defs[i].Name < set.defs[j].Name }) {
			t.Errorf("%s defs not sorted by name", set.name)
		}
		seen := map[string]bool{}
		for _, d := range set.defs {
			if seen[d.Name] {
				t.Errorf("%s def %q defined twice", set.name, d.Name)
			}
			seen[d.Name] = true
			if d.Doc == "" || strings.Contains(d.Doc, "\n") {
				t.Errorf("%s def %q: doc must be one non-empty line", set.name, d.Name)
			}
			if d.Validate == nil {
				t.Errorf("%s def %q: no validator", set.name, d.Name)
				continue
			}
			if !d.NoDefault {
				if err := d.Validate(d.Default); err != nil {
					t.Errorf("%s def %q: default %q invalid: %v", set.name, d.Name, d.Default, err)
				}
			}
		}
	}
	for _, d := range TopicDefs() {
		if d.BrokerKey == "" {
			continue
		}
		if _, ok := LookupBroker(d.BrokerKey); !ok {
			t.Errorf("topic %q: broker key %q not a broker config", d.Name, d.BrokerKey)
		}
	}
}

func TestKafkaDefaults(t *testing.T) {
	b := DefaultBroker()
	for name, want := range map[string]string{
		"cleanup.policy":         "delete",
		"segment.bytes":          "1073741824",
		"segment.ms":             "604800000",
		"retention.ms":           "604800000",
		"retention.bytes":        "-1",
		"max.message.bytes":      "1048588",
		"message.timestamp.type": "CreateTime",
		"min.insync.replicas":    "1",
		"compression.type":       "producer",
		"segment.index.bytes":    "10485760",
		"index.interval.bytes":   "4096",
		"flush.ms":               "9223372036854775807",
	} {
		if got, _ := b.TopicValue(nil, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]string{
		"auto.create.topics.enable":       "true",
		"num.partitions":                  "1",
		"default.replication.factor":      "1",
		"log.retention.check.interval.ms": "300000",
		"delete.topic.enable":             "true",
		"socket.request.max.bytes":        "104857600",
		"log.segment.bytes":               "1073741824",
		"message.max.bytes":               "1048588",
		"fetch.max.bytes":                 "57671680",
	} {
		if got, _ := b.get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if v, ok := b.get("log.retention.ms"); ok {
		t.Errorf("log.retention.ms has no default, got %q", v)
	}
}

func TestParseBroker(t *testing.T) {
	for _, tc := range []struct {
		kv      map[string]string
		wantErr error
		hint    string
	}{
		{kv: map[string]string{"num.partitions": "3", "log.retention.hours": "1"}},
		{kv: map[string]string{"nope": "1"}, wantErr: ErrUnknownConfig, hint: "not a broker config"},
		{kv: map[string]string{"retention.ms": "1"}, wantErr: ErrUnknownConfig, hint: "log.retention.ms"},
		{kv: map[string]string{"num.partitions": "x"}, wantErr: ErrInvalidValue, hint: "num.partitions"},
		{kv: map[string]string{"num.partitions": "0"}, wantErr: ErrInvalidValue, hint: "at least 1"},
		{kv: map[string]string{"log.cleanup.policy": "compact,shred"}, wantErr: ErrInvalidValue, hint: "shred"},
		{kv: map[string]string{"broker.id": "1", "node.id": "2"}, wantErr: ErrInvalidValue, hint: "differ"},
		{kv: map[string]string{"klog.admin.advertised.url": "http://127.0.0.1:9644"}},
		{kv: map[string]string{"klog.admin.advertised.url": ""}},
		{kv: map[string]string{"klog.admin.advertised.url": "127.0.0.1:9644"}, wantErr: ErrInvalidValue, hint: "not http://HOST:PORT"},
		{kv: map[string]string{"klog.admin.advertised.url": "http://h/v1/"}, wantErr: ErrInvalidValue, hint: "not http://HOST:PORT"},
		{kv: map[string]string{"queued.max.request.bytes": "1000"}, wantErr: ErrInvalidValue, hint: "less than socket.request.max.bytes"},
		{kv: map[string]string{"auto.create.topics.enable": "FALSE"}},
		// klog serves both group protocols and nothing else.
		{kv: map[string]string{"group.coordinator.rebalance.protocols": "consumer,classic"}},
		{kv: map[string]string{"group.coordinator.rebalance.protocols": "classic"}, wantErr: ErrInvalidValue, hint: "must name classic, consumer"},
		{kv: map[string]string{"group.coordinator.rebalance.protocols": "classic,consumer,streams"}, wantErr: ErrInvalidValue, hint: "streams"},
		// Kafka 4 removed it.
		{kv: map[string]string{"log.message.downconversion.enable": "true"}, wantErr: ErrUnknownConfig, hint: "not a broker config"},
	} {
		_, err := ParseBroker(tc.kv)
		if tc.wantErr == nil {
			if err != nil {
				t.Errorf("%v: %v", tc.kv, err)
			}
			continue
		}
		if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("%v: err %v, want %v containing %q", tc.kv, err, tc.wantErr, tc.hint)
		}
	}
}

func TestResolution(t *testing.T) {
	_, err := ParseBroker(map[string]string{
		"log.retention.hours":   "2",
		"log.retention.minutes": "30",
		"num.partitions":        "4",
		"log.segment.bytes":     "1048576",
		"log.roll.hours":        "-5",
	})
	if err == nil {
		t.Fatal("log.roll.hours=-5 should be rejected")
	}
	b, err := ParseBroker(map[string]string{
		"log.retention.hours":       "2",
		"log.retention.minutes":     "30",
		"num.partitions":            "4",
		"log.segment.bytes":         "1048576",
		"auto.create.topics.enable": "false",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := topic(t, b, nil).RetentionMs; got != 30*60000 {
		t.Errorf("retention.ms from minutes = %d", got)
	}
	if got := topic(t, b, map[string]string{"retention.ms": "5"}).RetentionMs; got != 5 {
		t.Errorf("override retention.ms = %d", got)
	}
	if got := b.Settings().NumPartitions; got != 4 {
		t.Errorf("num.partitions = %d", got)
	}
	if b.Settings().AutoCreateTopics {
		t.Error("auto.create.topics.enable should be false")
	}
	if got := topic(t, b, nil).SegmentBytes; got != 1048576 {
		t.Errorf("segment.bytes = %d", got)
	}

	vals := b.TopicValues(map[string]string{"retention.ms": "5"})
	if !sort.SliceIsSorted(vals, func(i, j int) bool { return vals[i].Name < vals[j].Name }) {
		t.Error("TopicValues not sorted")
	}
	byName := map[string]Value{}
	for _, v := range vals {
		byName[v.Name] = v
	}
	rv := byName["retention.ms"]
	if rv.Value != "5" || rv.Source != SourceDynamicTopicConfig {
		t.Errorf("retention.ms value %+v", rv)
	}
	// Kafka's synonyms start at the first entry of the first broker key,
	// log.retention.ms, which has no value here: minutes and hours are
	// not listed (ConfigHelper.configSynonyms).
	wantSyn := []Synonym{
		{"retention.ms", "5", SourceDynamicTopicConfig},
	}
	if len(rv.Synonyms) != len(wantSyn) {
		t.Fatalf("retention.ms synonyms %+v", rv.Synonyms)
	}
	for i := range wantSyn {
		if rv.Synonyms[i] != wantSyn[i] {
			t.Errorf("synonym %d = %+v, want %+v", i, rv.Synonyms[i], wantSyn[i])
		}
	}
	sb := byName["segment.bytes"]
	if sb.Value != "1048576" || sb.Source != SourceStaticBrokerConfig || sb.Type != TypeInt {
		t.Errorf("segment.bytes %+v", sb)
	}
	cp := byName["cleanup.policy"]
	if cp.Value != "delete" || cp.Source != SourceDefaultConfig || cp.Type != TypeList {
		t.Errorf("cleanup.policy %+v", cp)
	}

	bv := map[string]Value{}
	for _, v := range b.BrokerValues() {
		bv[v.Name] = v
	}
	if v := bv["log.retention.ms"]; !v.Null || v.Source != SourceDefaultConfig {
		t.Errorf("log.retention.ms %+v", v)
	}
	if v := bv["num.partitions"]; v.Value != "4" || v.Source != SourceStaticBrokerConfig || !v.ReadOnly {
		t.Errorf("num.partitions %+v", v)
	}
}

func TestNegativeHoursMeanUnlimited(t *testing.T) {
	b, err := ParseBroker(map[string]string{"log.retention.hours": "-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := topic(t, b, nil).RetentionMs; got != -1 {
		t.Errorf("retention.ms = %d, want -1", got)
	}
}

func TestValidateTopicConfigs(t *testing.T) {
	for _, tc := range []struct {
		kv      map[string]string
		wantErr error
	}{
		{map[string]string{"cleanup.policy": "compact,delete", "retention.ms": "-1", "min.cleanable.dirty.ratio": "0.1"}, nil},
		{map[string]string{"cleanup.policy": "shred"}, ErrInvalidValue},
		{map[string]string{"retention.ms": "-2"}, ErrInvalidValue},
		{map[string]string{"segment.bytes": "99999999999"}, ErrInvalidValue},
		{map[string]string{"segment.bytes": "1048575"}, ErrInvalidValue}, // KIP-1030's floor
		{map[string]string{"segment.bytes": "1048576"}, nil},
		{map[string]string{"internal.segment.bytes": "100"}, nil},
		{map[string]string{"internal.segment.bytes": "x"}, ErrInvalidValue},
		{map[string]string{"min.cleanable.dirty.ratio": "1.5"}, ErrInvalidValue},
		{map[string]string{"min.cleanable.dirty.ratio": "NaN"}, ErrInvalidValue},
		{map[string]string{"message.timestamp.type": "createtime"}, ErrInvalidValue},
		{map[string]string{"preallocate": "yes"}, ErrInvalidValue},
		{map[string]string{"compression.gzip.level": "0"}, ErrInvalidValue},
		{map[string]string{"leader.replication.throttled.replicas": "0:1,1:2"}, nil},
		{map[string]string{"leader.replication.throttled.replicas": "0-1"}, ErrInvalidValue},
		{map[string]string{"log.retention.ms": "1"}, ErrUnknownConfig},
		{map[string]string{"bogus": "1"}, ErrUnknownConfig},
	} {
		err := ValidateTopicConfigs(tc.kv)
		if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
			t.Errorf("%v: err %v, want %v", tc.kv, err, tc.wantErr)
		}
	}
}

// TestSmallSegments checks segment.bytes's 1 MiB floor, in Kafka 4's
// words, and internal.segment.bytes, which goes below it: it takes
// segment.bytes's place, and is listed only where it is set.
func TestSmallSegments(t *testing.T) {
	err := ValidateTopicConfig("segment.bytes", "4096")
	if msg, _ := errmsg.Wire(err); !errors.Is(err, ErrInvalidValue) || msg != "Invalid value 4096 for configuration segment.bytes: Value must be at least 1048576" {
		t.Errorf("segment.bytes=4096: %v (%q)", err, msg)
	}
	if _, err := ParseBroker(map[string]string{"log.segment.bytes": "4096"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("static log.segment.bytes=4096: %v, want ErrInvalidValue", err)
	}
	b, err := ParseBroker(nil)
	if err != nil {
		t.Fatal(err)
	}
	if tc := topic(t, b, map[string]string{"internal.segment.bytes": "100"}); tc.InternalSegmentBytes != 100 || tc.SegmentBytes != 1<<30 {
		t.Errorf("internal.segment.bytes=100: %d, segment.bytes %d", tc.InternalSegmentBytes, tc.SegmentBytes)
	}
	if tc := topic(t, b, nil); tc.InternalSegmentBytes != 0 {
		t.Errorf("internal.segment.bytes unset reads %d, want 0", tc.InternalSegmentBytes)
	}
	listed := func(overrides map[string]string) bool {
		for _, v := range b.TopicValues(overrides) {
			if v.Name == "internal.segment.bytes" {
				return true
			}
		}
		return false
	}
	if listed(nil) || !listed(map[string]string{"internal.segment.bytes": "100"}) {
		t.Errorf("internal.segment.bytes listed unset %v, set %v; want false, true", listed(nil), listed(map[string]string{"internal.segment.bytes": "100"}))
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{2: "2.0", 0.5: "0.5", -1: "-1.0", 0: "0.0", 1e7: "1.0E7", 1.5e-4: "1.5E-4", 12345.25: "12345.25"} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%g) = %q, want %q", f, got, want)
		}
	}
}

func TestDynamicResolution(t *testing.T) {
	static, err := ParseBroker(map[string]string{"log.retention.ms": "100", "log.segment.bytes": "1048576"})
	if err != nil {
		t.Fatal(err)
	}
	clusterDefault := map[string]string{"log.retention.ms": "200", "log.segment.bytes": "2097152", "min.insync.replicas": "2", "foo": "bar"}
	perBroker := map[string]string{"log.retention.ms": "300"}
	b, err := static.WithDynamic(clusterDefault, perBroker)
	if err != nil {
		t.Fatal(err)
	}
	if !b.DynamicEqual(clusterDefault, perBroker) || static.DynamicEqual(clusterDefault, perBroker) {
		t.Error("DynamicEqual")
	}
	tc := topic(t, b, nil)
	if tc.RetentionMs != 300 || tc.SegmentBytes != 2097152 || tc.MinInsyncReplicas != 2 {
		t.Errorf("per-broker > cluster default > static: %+v", tc)
	}
	if got := topic(t, b, map[string]string{"retention.ms": "5"}).RetentionMs; got != 5 {
		t.Errorf("topic override: retention.ms = %d", got)
	}
	if live, err := static.WithDynamic(map[string]string{"max.connections": "7", "producer.id.expiration.ms": "1000"}, nil); err != nil ||
		live.Settings().MaxConnections != 7 || live.Settings().ProducerIDExpiration != time.Second {
		t.Errorf("dynamic broker-only configs in Settings: %v", err)
	}
	without, err := static.WithDynamic(clusterDefault, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := topic(t, without, nil).RetentionMs; got != 200 {
		t.Errorf("cluster default: retention.ms = %d", got)
	}

	chain := []Synonym{
		{"log.retention.ms", "300", SourceDynamicBrokerConfig},
		{"log.retention.ms", "200", SourceDynamicDefaultBrokerConfig},
		{"log.retention.ms", "100", SourceStaticBrokerConfig},
		{"log.retention.hours", "168", SourceDefaultConfig},
	}
	tv := valuesByName(b.TopicValues(nil))["retention.ms"]
	if tv.Value != "300" || tv.Source != SourceDynamicBrokerConfig || !slices.Equal(tv.Synonyms, chain) {
		t.Errorf("topic retention.ms %+v", tv)
	}
	bv := valuesByName(b.BrokerValues())
	if v := bv["log.retention.ms"]; v.Value != "300" || v.ReadOnly || v.Source != SourceDynamicBrokerConfig || !slices.Equal(v.Synonyms, chain) {
		t.Errorf("broker log.retention.ms %+v", v)
	}
	// log.retention.hours lists only itself: Kafka drops the synonyms
	// before its own first entry.
	if v := bv["log.retention.hours"]; v.Value != "168" || !v.ReadOnly || v.Source != SourceDefaultConfig ||
		!slices.Equal(v.Synonyms, []Synonym{{"log.retention.hours", "168", SourceDefaultConfig}}) {
		t.Errorf("broker log.retention.hours %+v", v)
	}
	if v := bv["foo"]; !v.Null || !v.Sensitive || !v.ReadOnly || v.Type != TypeUnknown || v.Source != SourceDynamicDefaultBrokerConfig {
		t.Errorf("unknown dynamic name %+v", v)
	}
	dv := b.DefaultValues()
	var names []string
	for _, v := range dv {
		names = append(names, v.Name)
	}
	if want := []string{"foo", "log.retention.ms", "log.segment.bytes", "min.insync.replicas"}; !slices.Equal(names, want) {
		t.Errorf("default resource lists %v, want %v", names, want)
	}
	if v := valuesByName(dv)["log.retention.ms"]; v.Value != "200" || v.Source != SourceDynamicDefaultBrokerConfig ||
		!slices.Equal(v.Synonyms, []Synonym{{"log.retention.ms", "200", SourceDynamicDefaultBrokerConfig}}) {
		t.Errorf("default resource log.retention.ms %+v", v)
	}

	// A read-only name in a dynamic layer (never committed: validation
	// refuses it) and an invalid value do not take effect.
	odd, err := static.WithDynamic(map[string]string{"num.partitions": "9", "log.segment.bytes": "x"}, nil)
	if err == nil || !errors.Is(err, ErrInvalidValue) {
		t.Errorf("invalid dynamic value: err %v", err)
	}
	if odd.Settings().NumPartitions != 1 || topic(t, odd, nil).SegmentBytes != 1048576 {
		t.Errorf("read-only or invalid dynamic values took effect")
	}
}

func TestValidateDynamicBroker(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want error
		wire string
	}{
		{map[string]string{"log.retention.ms": "1000", "min.insync.replicas": "2", "foo": "1"}, nil, ""},
		{map[string]string{"broker.id": "5", "log.retention.hours": "1"}, ErrReadOnly, "Cannot update these configs dynamically: [broker.id, log.retention.hours]"},
		{map[string]string{"log.retention.ms": "abc"}, ErrInvalidValue, "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"},
		{map[string]string{"min.insync.replicas": "0"}, ErrInvalidValue, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{map[string]string{"log.cleanup.policy": "x"}, ErrInvalidValue, "Invalid value x for configuration log.cleanup.policy: String must be one of: compact, delete"},
	} {
		err := ValidateDynamicBroker(tc.set)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%v: err %v, want %v", tc.set, err, tc.want)
			continue
		}
		if err != nil {
			if msg, _ := errmsg.Wire(err); msg != tc.wire {
				t.Errorf("%v: wire %q, want %q", tc.set, msg, tc.wire)
			}
		}
	}
}

func valuesByName(vs []Value) map[string]Value {
	out := make(map[string]Value, len(vs))
	for _, v := range vs {
		out[v.Name] = v
	}
	return out
}
