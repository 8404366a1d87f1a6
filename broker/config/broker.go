package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Source is where a config value comes from, as reported by
// DescribeConfigs (ConfigSource).
type Source int8

// Config sources, numbered as in DescribeConfigs.
const (
	SourceUnknown                    Source = 0
	SourceDynamicTopicConfig         Source = 1
	SourceDynamicBrokerConfig        Source = 2
	SourceDynamicDefaultBrokerConfig Source = 3
	SourceStaticBrokerConfig         Source = 4
	SourceDefaultConfig              Source = 5
)

// Value is one resolved config, ready for a DescribeConfigs response.
type Value struct {
	Name  string
	Value string
	// Null reports a config without a value (no default and not set, or a
	// sensitive value that is never shown); Value is then "".
	Null      bool
	Source    Source
	ReadOnly  bool
	Sensitive bool
	Type      Type
	Doc       string
	// Synonyms lists where the value could come from, in precedence order;
	// the first entry is the one in effect.
	Synonyms []Synonym
}

// Synonym is one candidate source of a config value.
type Synonym struct {
	Name   string
	Value  string
	Source Source
}

// Broker holds a node's static broker settings. It is immutable after
// ParseBroker and safe for concurrent use.
type Broker struct {
	// static holds the values given at start, by broker config name.
	static map[string]string
}

// ParseBroker validates static broker settings (as given with -X key=value)
// and returns them. An unknown name or a bad value is an error that names
// the config; a topic config name given instead of its broker key gets a
// hint.
func ParseBroker(kv map[string]string) (*Broker, error) {
	names := make([]string, 0, len(kv))
	for n := range kv {
		names = append(names, n)
	}
	sort.Strings(names)
	b := &Broker{static: make(map[string]string, len(kv))}
	for _, n := range names {
		v := strings.TrimSpace(kv[n])
		d, ok := LookupBroker(n)
		if !ok {
			if td, isTopic := LookupTopic(n); isTopic && td.BrokerKey != "" {
				return nil, fmt.Errorf("%w: %q is a topic config; its broker default is %q", ErrUnknownConfig, n, td.BrokerKey)
			}
			return nil, fmt.Errorf("%w: %q is not a broker config", ErrUnknownConfig, n)
		}
		if err := d.Validate(v); err != nil {
			return nil, fmt.Errorf("%w: %s=%q: %v", ErrInvalidValue, n, v, err)
		}
		b.static[n] = v
	}
	if bid, ok := b.static["broker.id"]; ok {
		if nid, ok := b.static["node.id"]; ok && nid != bid {
			return nil, fmt.Errorf("%w: broker.id=%s and node.id=%s differ", ErrInvalidValue, bid, nid)
		}
	}
	return b, nil
}

// DefaultBroker returns broker settings with every config at its default.
func DefaultBroker() *Broker { return &Broker{static: map[string]string{}} }

// Static returns a copy of the settings given at start.
func (b *Broker) Static() map[string]string {
	out := make(map[string]string, len(b.static))
	for k, v := range b.static {
		out[k] = v
	}
	return out
}

// Get returns a broker config's value: the static setting, else the
// default. It reports false for an unknown name or a null value.
func (b *Broker) Get(name string) (string, bool) {
	if v, ok := b.static[name]; ok {
		return v, true
	}
	d, ok := LookupBroker(name)
	if !ok || d.NoDefault {
		return "", false
	}
	return d.Default, true
}

// String returns a broker config's value, or "" when unknown or null.
func (b *Broker) String(name string) string {
	v, _ := b.Get(name)
	return v
}

// Int64 returns a numeric broker config, or 0 when unknown, null or not a
// number.
func (b *Broker) Int64(name string) int64 {
	v, _ := b.Get(name)
	return parseInt(v)
}

// Int32 returns a numeric broker config clamped to the int32 range.
func (b *Broker) Int32(name string) int32 { return clamp32(b.Int64(name)) }

// Bool returns a boolean broker config, or false when unknown or null.
func (b *Broker) Bool(name string) bool {
	v, _ := b.Get(name)
	t, _ := parseBool(v)
	return t
}

// Float64 returns a double broker config, or 0 when unknown or null.
func (b *Broker) Float64(name string) float64 {
	v, _ := b.Get(name)
	f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f
}

// List returns a list broker config split on commas, without blanks.
func (b *Broker) List(name string) []string {
	v, _ := b.Get(name)
	return splitList(v)
}

// TopicValue resolves a topic config: the override, else the broker's
// static value of the first synonym set (converted to the topic's unit),
// else the default. It reports false for an unknown name.
func (b *Broker) TopicValue(overrides map[string]string, name string) (string, bool) {
	d, ok := LookupTopic(name)
	if !ok {
		return "", false
	}
	v := b.resolveTopic(d, overrides)
	return v.Value, true
}

// TopicString returns a resolved topic config, or "" for an unknown name.
func (b *Broker) TopicString(overrides map[string]string, name string) string {
	v, _ := b.TopicValue(overrides, name)
	return v
}

// TopicInt64 returns a resolved numeric topic config, or 0 for an unknown
// name.
func (b *Broker) TopicInt64(overrides map[string]string, name string) int64 {
	v, _ := b.TopicValue(overrides, name)
	return parseInt(v)
}

// TopicInt32 returns a resolved numeric topic config clamped to int32.
func (b *Broker) TopicInt32(overrides map[string]string, name string) int32 {
	return clamp32(b.TopicInt64(overrides, name))
}

// TopicBool returns a resolved boolean topic config.
func (b *Broker) TopicBool(overrides map[string]string, name string) bool {
	t, _ := parseBool(b.TopicString(overrides, name))
	return t
}

// TopicFloat64 returns a resolved double topic config.
func (b *Broker) TopicFloat64(overrides map[string]string, name string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(b.TopicString(overrides, name)), 64)
	return f
}

// TopicList returns a resolved list topic config, split on commas.
func (b *Broker) TopicList(overrides map[string]string, name string) []string {
	return splitList(b.TopicString(overrides, name))
}

// TopicValues resolves every topic config for a topic with the given
// overrides, sorted by name, with sources and synonyms.
func (b *Broker) TopicValues(overrides map[string]string) []Value {
	tds := defs().topics
	out := make([]Value, 0, len(tds))
	for _, d := range tds {
		out = append(out, b.resolveTopic(d, overrides))
	}
	return out
}

// BrokerValues resolves every broker config, sorted by name.
func (b *Broker) BrokerValues() []Value {
	bds := defs().brokers
	out := make([]Value, 0, len(bds))
	for _, d := range bds {
		v := Value{Name: d.Name, ReadOnly: d.ReadOnly, Sensitive: d.Sensitive(), Type: d.Type, Doc: d.Doc}
		if s, ok := b.static[d.Name]; ok {
			v.Value, v.Source = s, SourceStaticBrokerConfig
			v.Synonyms = append(v.Synonyms, Synonym{Name: d.Name, Value: s, Source: SourceStaticBrokerConfig})
		} else if !d.NoDefault {
			v.Value, v.Source = d.Default, SourceDefaultConfig
		} else {
			v.Null, v.Source = true, SourceDefaultConfig
		}
		if !d.NoDefault {
			v.Synonyms = append(v.Synonyms, Synonym{Name: d.Name, Value: d.Default, Source: SourceDefaultConfig})
		}
		if v.Sensitive {
			v.Value, v.Null = "", true
			for i := range v.Synonyms {
				v.Synonyms[i].Value = ""
			}
		}
		out = append(out, v)
	}
	return out
}

// resolveTopic resolves one topic config. Synonyms list the override, then
// each broker key's static value, then each broker key's default, which is
// the order in which they take effect.
func (b *Broker) resolveTopic(d Def, overrides map[string]string) Value {
	v := Value{Name: d.Name, Type: d.Type, Doc: d.Doc, ReadOnly: d.ReadOnly, Sensitive: d.Sensitive()}
	if o, ok := overrides[d.Name]; ok {
		v.Synonyms = append(v.Synonyms, Synonym{Name: d.Name, Value: o, Source: SourceDynamicTopicConfig})
	}
	for _, s := range d.synonyms {
		if sv, ok := b.static[s.name]; ok {
			v.Synonyms = append(v.Synonyms, Synonym{Name: s.name, Value: sv, Source: SourceStaticBrokerConfig})
		}
	}
	for _, s := range d.synonyms {
		if bd, ok := LookupBroker(s.name); ok && !bd.NoDefault {
			v.Synonyms = append(v.Synonyms, Synonym{Name: s.name, Value: bd.Default, Source: SourceDefaultConfig})
		}
	}
	if len(v.Synonyms) == 0 {
		v.Value, v.Source = d.Default, SourceDefaultConfig
		return v
	}
	first := v.Synonyms[0]
	v.Value, v.Source = first.Value, first.Source
	if first.Source != SourceDynamicTopicConfig {
		for _, s := range d.synonyms {
			if s.name == first.Name && s.mult != 1 {
				n := saturatingMul(parseInt(first.Value), s.mult)
				if n < 0 {
					n = -1 // any negative time in a coarser unit means "unlimited"
				}
				v.Value = strconv.FormatInt(n, 10)
			}
		}
	}
	return v
}

func parseInt(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func clamp32(n int64) int32 {
	switch {
	case n > math.MaxInt32:
		return math.MaxInt32
	case n < math.MinInt32:
		return math.MinInt32
	}
	return int32(n)
}

// saturatingMul multiplies without wrapping around.
func saturatingMul(a, m int64) int64 {
	if a == 0 || m == 0 {
		return 0
	}
	if a > 0 && a > math.MaxInt64/m {
		return math.MaxInt64
	}
	if a < 0 && a < math.MinInt64/m {
		return math.MinInt64
	}
	return a * m
}
