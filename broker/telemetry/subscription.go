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
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/klogdev/klog/broker/config"
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
)

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
// name, checked as config.ValidateClientMetrics checks them (Kafka's
// checks and words); configs left out take their defaults.
func ParseSubscription(name string, configs map[string]string) (Subscription, error) {
	if err := config.ValidateClientMetrics(name, configs); err != nil {
		return Subscription{}, err
	}
	s := Subscription{Name: name, IntervalMs: DefaultIntervalMs, Metrics: list(configs[ConfigMetrics])}
	if v, ok := configs[ConfigInterval]; ok {
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return Subscription{}, fmt.Errorf("client metrics %s: interval.ms %q: %w", name, v, err)
		}
		s.IntervalMs = int32(ms)
	}
	for _, sel := range list(configs[ConfigMatch]) {
		// "attribute=regex", split as Java's String.split splits it
		// (trailing empty parts dropped), which the check above took.
		parts := strings.Split(sel, "=")
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) != 2 {
			return Subscription{}, fmt.Errorf("client metrics %s: match %q", name, sel)
		}
		// A pattern matches the whole attribute, as Java's
		// Matcher.matches.
		re, err := regexp.Compile(`^(?:` + strings.TrimSpace(parts[1]) + `)$`)
		if err != nil {
			return Subscription{}, fmt.Errorf("client metrics %s: match %q: %w", name, sel, err)
		}
		if s.Match == nil {
			s.Match = map[string]*regexp.Regexp{}
		}
		s.Match[strings.TrimSpace(parts[0])] = re
	}
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
