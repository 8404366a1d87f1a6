package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Source is where a config value comes from, as reported by
// DescribeConfigs (kmsg.ConfigSource).
type Source int8

// Config sources, numbered as in DescribeConfigs.
const (
	SourceUnknown                    = Source(kmsg.ConfigSourceUnknown)
	SourceDynamicTopicConfig         = Source(kmsg.ConfigSourceDynamicTopicConfig)
	SourceDynamicBrokerConfig        = Source(kmsg.ConfigSourceDynamicBrokerConfig)
	SourceDynamicDefaultBrokerConfig = Source(kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	SourceStaticBrokerConfig         = Source(kmsg.ConfigSourceStaticBrokerConfig)
	SourceDefaultConfig              = Source(kmsg.ConfigSourceDefaultConfig)
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

// Broker holds a node's static broker settings, by name and resolved into
// Settings. It is immutable after ParseBroker and safe for concurrent use.
type Broker struct {
	// static holds the values given at start, by broker config name.
	static map[string]string
	// settings are static resolved into Go values.
	settings Settings
}

// ParseBroker validates static broker settings (as given with -X key=value)
// and resolves them into Settings. An unknown name or a bad value is an
// error that names the config; a topic config name given instead of its
// broker key gets a hint.
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
	r := &binder{lookup: LookupBroker, value: b.brokerValue}
	b.settings = bindSettings(r)
	if err := r.err(); err != nil {
		return nil, err
	}
	// As Kafka's KafkaConfig validation: a request the pool cannot hold
	// would wait for it for ever.
	if s := &b.settings; s.QueuedMaxRequestBytes < int64(s.SocketRequestMaxBytes) {
		return nil, fmt.Errorf("%w: queued.max.request.bytes=%d is less than socket.request.max.bytes=%d", ErrInvalidValue, s.QueuedMaxRequestBytes, s.SocketRequestMaxBytes)
	}
	// Topic settings are resolved on every topic change; resolving the
	// defaults here finds a bad binding at start.
	if _, err := b.Topic(nil); err != nil {
		return nil, err
	}
	return b, nil
}

// DefaultBroker returns broker settings with every config at its default.
// It panics if the defaults do not resolve, which the package's tests rule
// out.
func DefaultBroker() *Broker {
	b, err := ParseBroker(nil)
	if err != nil {
		panic(err)
	}
	return b
}

// Static returns a copy of the settings given at start.
func (b *Broker) Static() map[string]string {
	out := make(map[string]string, len(b.static))
	for k, v := range b.static {
		out[k] = v
	}
	return out
}

// get returns a broker config's value: the static setting, else the
// default. It reports false for an unknown name or a null value.
func (b *Broker) get(name string) (string, bool) {
	d, ok := LookupBroker(name)
	if !ok {
		return "", false
	}
	v := b.brokerValue(d)
	return v.Value, !v.Null
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
		v := b.brokerValue(d)
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

// brokerValue resolves one broker config: the static setting, else the
// default. Sensitive values are not hidden.
func (b *Broker) brokerValue(d Def) Value {
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
	return v
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
