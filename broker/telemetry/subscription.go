// Package telemetry is klog's receiver of client telemetry (KIP-714):
// the subscriptions, CLIENT_METRICS config resources, that say which
// clients push which metrics how often; GetTelemetrySubscriptions'
// answer to a client; and PushTelemetry's OTLP payloads, decoded and kept
// per client instance, bounded, for the admin API, /metrics and the TUI.
//
// Kafka hands pushed metrics to a ClientTelemetry plugin and serves the
// two APIs only when one is configured; klog is its own receiver and
// serves them always.
package telemetry

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/errmsg"
)

// The config names of a CLIENT_METRICS resource, and the attributes a
// match pattern may name (Kafka's ClientMetricsConfigs).
const (
	ConfigMetrics  = "metrics"
	ConfigInterval = "interval.ms"
	ConfigMatch    = "match"

	AttrClientInstanceID = "client_instance_id"
	AttrClientID         = "client_id"
	AttrSoftwareName     = "client_software_name"
	AttrSoftwareVersion  = "client_software_version"
	AttrSourceAddress    = "client_source_address"
	AttrSourcePort       = "client_source_port"

	// AllMetrics subscribes to every metric.
	AllMetrics = "*"
	// DefaultIntervalMs is the push interval of a subscription that sets
	// none, and of a client no subscription matches.
	DefaultIntervalMs = 5 * 60 * 1000
	minIntervalMs     = 100
	maxIntervalMs     = 3600000
)

var matchAttrs = []string{AttrClientInstanceID, AttrClientID, AttrSoftwareName, AttrSoftwareVersion, AttrSourceAddress, AttrSourcePort}

// Subscription is one CLIENT_METRICS resource: the metric name prefixes
// it asks for ("*" for all), how often, and of which clients (every
// pattern must match the whole attribute; none matches every client).
type Subscription struct {
	Name       string
	Metrics    []string
	IntervalMs int32
	Match      map[string]*regexp.Regexp
}

// ParseSubscription reads the configs of the CLIENT_METRICS resource
// name, with Kafka's checks and words: an unknown config or an interval
// out of 100 ms to an hour is INVALID_REQUEST, a bad match pattern
// INVALID_CONFIG. Configs left out take their defaults.
func ParseSubscription(name string, configs map[string]string) (Subscription, error) {
	if name == "" {
		return Subscription{}, errmsg.With(kerr.InvalidRequest, "Subscription name can't be empty")
	}
	s := Subscription{Name: name, IntervalMs: DefaultIntervalMs}
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k != ConfigMetrics && k != ConfigInterval && k != ConfigMatch {
			return Subscription{}, errmsg.With(kerr.InvalidRequest, "Unknown client metrics configuration: "+k)
		}
	}
	s.Metrics = list(configs[ConfigMetrics])
	if v, ok := configs[ConfigInterval]; ok {
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return Subscription{}, errmsg.With(kerr.InvalidConfig, fmt.Sprintf("Invalid value %s for configuration %s: Not a number of type INT", v, ConfigInterval))
		}
		if ms < minIntervalMs || ms > maxIntervalMs {
			return Subscription{}, errmsg.With(kerr.InvalidRequest, fmt.Sprintf("Invalid value %d for %s, interval must be between 100 and 3600000 (1 hour)", ms, ConfigInterval))
		}
		s.IntervalMs = int32(ms)
	}
	match, err := parseMatch(list(configs[ConfigMatch]))
	if err != nil {
		return Subscription{}, err
	}
	s.Match = match
	return s, nil
}

// list splits a Kafka LIST config: comma-separated, each item trimmed,
// empty for an empty value.
func list(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	out := strings.Split(v, ",")
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

var errBadPattern = errors.New("illegal client matching pattern")

// parseMatch reads "attribute=regex" patterns. A pattern must match an
// attribute's whole value, as Java's Matcher.matches.
func parseMatch(patterns []string) (map[string]*regexp.Regexp, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	out := make(map[string]*regexp.Regexp, len(patterns))
	for _, p := range patterns {
		bad := errmsg.With(fmt.Errorf("%w: %w: %s", kerr.InvalidConfig, errBadPattern, p), "Illegal client matching pattern: "+p)
		name, value, ok := strings.Cut(p, "=")
		if !ok || value == "" || strings.Contains(value, "=") {
			return nil, bad
		}
		name = strings.TrimSpace(name)
		if !slices.Contains(matchAttrs, name) {
			return nil, bad
		}
		re, err := regexp.Compile(`^(?:` + strings.TrimSpace(value) + `)$`)
		if err != nil {
			return nil, bad
		}
		out[name] = re
	}
	return out, nil
}

// matches reports whether a client with attrs is one s is for.
func (s *Subscription) matches(attrs map[string]string) bool {
	for name, re := range s.Match {
		v, ok := attrs[name]
		if !ok || !re.MatchString(v) {
			return false
		}
	}
	return true
}

// SortSubscriptions orders subs by name, for a stable answer.
func SortSubscriptions(subs []Subscription) {
	slices.SortFunc(subs, func(a, b Subscription) int { return cmp.Compare(a.Name, b.Name) })
}
