package config

// The configs of a client metrics resource (config resource type 16,
// KIP-714), the subscription `kafka-client-metrics --alter` sets: which
// metrics (name prefixes) the clients it matches push, and how often.
// They are stored in the metadata as topic and broker configs are, and
// checked as Kafka 4.4's ClientMetricsConfigs checks them.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/klogdev/klog/broker/errmsg"
)

// clientMetricsDefs are the client metrics configs, in the order Kafka
// describes them.
var clientMetricsDefs = []Def{
	{Name: "interval.ms", Type: TypeInt, Default: "300000", Doc: "Metrics push interval in milliseconds", Validate: validator(TypeInt)},
	{Name: "match", Type: TypeList, Default: "", Doc: "Client match criteria", Validate: validator(TypeList)},
	{Name: "metrics", Type: TypeList, Default: "", Doc: "Telemetry metric name prefix list", Validate: validator(TypeList)},
}

// clientMatchKeys are the client properties a match selector may name.
var clientMatchKeys = []string{"client_instance_id", "client_id", "client_software_name",
	"client_software_version", "client_source_address", "client_source_port"}

// ClientMetricsValues describes the configs of a client metrics resource
// whose set configs are set: every config, those set with source
// CLIENT_METRICS_CONFIG (and themselves as synonym), the others their
// default, as Kafka describes a subscription, existing or not.
func ClientMetricsValues(set map[string]string) []Value {
	out := make([]Value, 0, len(clientMetricsDefs))
	for _, d := range clientMetricsDefs {
		v := Value{Name: d.Name, Value: d.Default, Source: SourceDefaultConfig, Type: d.Type, Doc: d.Doc}
		if s, ok := set[d.Name]; ok {
			v.Value, v.Source = s, SourceClientMetricsConfig
			v.Synonyms = []Synonym{{Name: d.Name, Value: s, Source: SourceClientMetricsConfig}}
		}
		out = append(out, v)
	}
	return out
}

// commaBlanks is a list's separator with the blanks around it, as Kafka
// splits a LIST config.
var commaBlanks = regexp.MustCompile(`\s*,\s*`)

// ClientMetricsValue is value as Kafka stores it for client metrics config
// name: a list trimmed and joined with bare commas ("a, b" is "a,b"),
// anything else as given.
func ClientMetricsValue(name, value string) string {
	i := slices.IndexFunc(clientMetricsDefs, func(d Def) bool { return d.Name == name })
	if i < 0 || clientMetricsDefs[i].Type != TypeList {
		return value
	}
	if value = strings.TrimSpace(value); value == "" {
		return ""
	}
	return strings.Join(commaBlanks.Split(value, -1), ",")
}

// ValidateClientMetrics checks the configs cfg that the client metrics
// resource name would have, as Kafka does, in its order and words: an
// empty name, a config Kafka does not define, an interval outside [100,
// 3600000] ms are ErrInvalidSubscription; a value not of its type, a
// match selector that is no key=regex pair of a known key,
// ErrInvalidValue.
func ValidateClientMetrics(name string, cfg map[string]string) error {
	if name == "" {
		return errmsg.With(fmt.Errorf("%w: empty name", ErrInvalidSubscription), "Subscription name can't be empty")
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if !slices.ContainsFunc(clientMetricsDefs, func(d Def) bool { return d.Name == k }) {
			return errmsg.Withf(fmt.Errorf("%w: unknown config %q", ErrInvalidSubscription, k), "Unknown client metrics configuration: %s", k)
		}
	}
	for _, d := range clientMetricsDefs {
		if v, ok := cfg[d.Name]; ok {
			if err := d.Validate(v); err != nil {
				return invalidValue(d, v, err)
			}
		}
	}
	if v, ok := cfg["interval.ms"]; ok {
		if ms, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 32); ms < 100 || ms > 3600000 {
			return errmsg.Withf(fmt.Errorf("%w: interval.ms %s not in [100, 3600000]", ErrInvalidSubscription, v),
				"Invalid value %s for interval.ms, interval must be between 100 and 3600000 (1 hour)", strings.TrimSpace(v))
		}
	}
	for _, sel := range splitList(cfg["match"]) {
		if !validMatch(sel) {
			return errmsg.Withf(fmt.Errorf("%w: match selector %q", ErrInvalidValue, sel), "Illegal client matching pattern: %s", sel)
		}
	}
	return nil
}

// validMatch reports whether sel is a key=regex selector of a known key.
// Java's String.split drops trailing empty parts, so "client_id=" has one
// part and is no selector, as in Kafka.
func validMatch(sel string) bool {
	parts := strings.Split(sel, "=")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) != 2 || !slices.Contains(clientMatchKeys, strings.TrimSpace(parts[0])) {
		return false
	}
	_, err := regexp.Compile(strings.TrimSpace(parts[1]))
	return err == nil
}
