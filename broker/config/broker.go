package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/errmsg"
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
	SourceClientMetricsConfig        = Source(kmsg.ConfigSourceClientMetricsConfig)
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

// Broker holds a node's broker settings, by name and resolved into
// Settings: the static ones given at start and, from the metadata, the
// dynamic ones (the cluster-wide defaults and this node's own). It is
// immutable; WithDynamic returns a new one. It is safe for concurrent use.
type Broker struct {
	// static holds the values given at start, by broker config name.
	static map[string]string
	// dynamicDefault and dynamicBroker are the dynamic broker configs of
	// the cluster-wide default resource and of this node, by name. They
	// may hold names klog does not define: Kafka stores those too.
	dynamicDefault map[string]string
	dynamicBroker  map[string]string
	// settings are the values resolved into Go values.
	settings Settings
}

// ParseBroker validates static broker settings (as given with -X key=value)
// and resolves them into Settings. An unknown name or a bad value is an
// error that names the config; a topic config name given instead of its
// broker key gets a hint. Values may take parts from Kafka's config
// providers (providers.go).
func ParseBroker(kv map[string]string) (*Broker, error) {
	kv, err := resolveProviders(kv, os.LookupEnv)
	if err != nil {
		return nil, err
	}
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
	if err := b.bind(); err != nil {
		return nil, err
	}
	if err := b.checkListeners(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidValue, err)
	}
	if err := checkQuorum(b.settings.NodeID, b.settings.QuorumVoters); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidValue, err)
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

// bind resolves b's settings.
func (b *Broker) bind() error {
	r := &binder{lookup: LookupBroker, value: b.brokerValue}
	b.settings = bindSettings(r)
	return r.err()
}

// WithDynamic returns b's static settings with the given dynamic broker
// configs over them: clusterDefault, the cluster-wide default resource
// (DYNAMIC_DEFAULT_BROKER_CONFIG), and perBroker, this node's
// (DYNAMIC_BROKER_CONFIG), which wins. Only dynamic configs take effect;
// names klog does not define are kept for DescribeConfigs, as Kafka keeps
// them. A value that no longer validates (validation before every change
// rules it out) is left out, and the error names it.
func (b *Broker) WithDynamic(clusterDefault, perBroker map[string]string) (*Broker, error) {
	nb := &Broker{static: b.static, dynamicDefault: maps.Clone(clusterDefault), dynamicBroker: maps.Clone(perBroker)}
	var errs []error
	for _, m := range []map[string]string{clusterDefault, perBroker} {
		for _, n := range slices.Sorted(maps.Keys(m)) {
			if d, ok := LookupBroker(n); ok && !d.ReadOnly {
				if err := d.Validate(m[n]); err != nil {
					errs = append(errs, fmt.Errorf("%w: %s=%q: %v", ErrInvalidValue, n, m[n], err))
				}
			}
		}
	}
	if err := nb.bind(); err != nil {
		// A dynamic value the typed view cannot hold: keep the
		// static settings, which resolved at start.
		errs = append(errs, err)
		nb.settings = b.settings
	}
	return nb, errors.Join(errs...)
}

// dynamic returns the value of broker config d in a dynamic layer: only a
// dynamic config whose value validates takes effect.
func dynamic(layer map[string]string, d Def) (string, bool) {
	v, ok := layer[d.Name]
	if !ok || d.ReadOnly || d.Validate(v) != nil {
		return "", false
	}
	return strings.TrimSpace(v), true
}

// DynamicEqual reports whether b has exactly the given dynamic configs,
// so that a caller can skip WithDynamic when they did not change.
func (b *Broker) DynamicEqual(clusterDefault, perBroker map[string]string) bool {
	return maps.Equal(b.dynamicDefault, clusterDefault) && maps.Equal(b.dynamicBroker, perBroker)
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

// get returns a broker config's value as brokerValue resolves it. It
// reports false for an unknown name or a null value.
func (b *Broker) get(name string) (string, bool) {
	d, ok := LookupBroker(name)
	if !ok {
		return "", false
	}
	v := b.brokerValue(d)
	return v.Value, !v.Null
}

// BrokerValue resolves one broker config as BrokerValues does; it
// reports false for a name klog does not define.
func (b *Broker) BrokerValue(name string) (Value, bool) {
	d, ok := LookupBroker(name)
	if !ok {
		return Value{}, false
	}
	return hideSensitive(b.brokerValue(d)), true
}

// TopicValue resolves a topic config: the override, else the broker's
// value (dynamic per-broker, dynamic default, static) of the first synonym
// set (converted to the topic's unit), else the default. It reports false
// for an unknown name.
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
		if _, set := overrides[d.Name]; d.Internal && !set {
			continue
		}
		out = append(out, b.resolveTopic(d, overrides))
	}
	return out
}

// BrokerValues resolves every broker config of this node, sorted by name,
// as DescribeConfigs lists them for the node's own resource: with names
// klog does not define that are set dynamically, as Kafka lists them.
func (b *Broker) BrokerValues() []Value {
	bds := defs().brokers
	out := make([]Value, 0, len(bds))
	for _, d := range bds {
		out = append(out, hideSensitive(b.brokerValue(d)))
	}
	for n := range b.static {
		// The per-listener overrides given, as Kafka lists them.
		if d, ok := lookupListenerScoped(n); ok {
			out = append(out, hideSensitive(b.brokerValue(d)))
		}
	}
	for _, n := range b.unknownDynamic(true) {
		out = append(out, b.unknownValue(n, true))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DefaultValues lists the cluster-wide dynamic broker configs, sorted by
// name, as DescribeConfigs lists the default broker resource (the empty
// name): only those set, with the synonyms of that level.
func (b *Broker) DefaultValues() []Value {
	var out []Value
	for _, n := range slices.Sorted(maps.Keys(b.dynamicDefault)) {
		d, ok := LookupBroker(n)
		if !ok {
			out = append(out, b.unknownValue(n, false))
			continue
		}
		v := Value{Name: n, Value: b.dynamicDefault[n], ReadOnly: d.ReadOnly, Sensitive: d.Sensitive(), Type: d.Type, Doc: d.Doc, Source: SourceDefaultConfig}
		for _, s := range from(n, b.chain(brokerSynonymNames(n))) {
			if s.Source == SourceDynamicDefaultBrokerConfig {
				v.Synonyms = append(v.Synonyms, s)
			}
		}
		if len(v.Synonyms) > 0 {
			v.Source = v.Synonyms[0].Source
		}
		out = append(out, hideSensitive(v))
	}
	return out
}

// hideSensitive blanks the values of a sensitive config.
func hideSensitive(v Value) Value {
	if v.Sensitive {
		v.Value, v.Null = "", true
		v.Synonyms = slices.Clone(v.Synonyms)
		for i := range v.Synonyms {
			v.Synonyms[i].Value = ""
		}
	}
	return v
}

// unknownDynamic lists the names klog does not define that are set
// dynamically for this node (perBroker) or as cluster defaults, sorted.
func (b *Broker) unknownDynamic(perBroker bool) []string {
	names := map[string]bool{}
	for n := range b.dynamicDefault {
		names[n] = true
	}
	if perBroker {
		for n := range b.dynamicBroker {
			names[n] = true
		}
	}
	var out []string
	for n := range names {
		if _, ok := LookupBroker(n); !ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// unknownValue describes a dynamically set name klog does not define as
// Kafka describes one it does not know: of unknown type and so sensitive
// (its value never shown), and read-only.
func (b *Broker) unknownValue(name string, perBroker bool) Value {
	v := Value{Name: name, Null: true, Sensitive: true, ReadOnly: true, Type: TypeUnknown}
	if _, ok := b.dynamicBroker[name]; ok && perBroker {
		v.Synonyms = append(v.Synonyms, Synonym{Name: name, Source: SourceDynamicBrokerConfig})
	}
	if _, ok := b.dynamicDefault[name]; ok {
		v.Synonyms = append(v.Synonyms, Synonym{Name: name, Source: SourceDynamicDefaultBrokerConfig})
	}
	v.Source = SourceDynamicDefaultBrokerConfig
	if len(v.Synonyms) > 0 {
		v.Source = v.Synonyms[0].Source
	}
	return v
}

// brokerValue resolves one broker config: its dynamic per-broker value,
// else its dynamic cluster default, else the static setting, else the
// default. The synonyms are Kafka's (ConfigHelper): the chain of the
// config's synonyms from the first entry of the config itself. Sensitive
// values are not hidden.
func (b *Broker) brokerValue(d Def) Value {
	v := Value{Name: d.Name, ReadOnly: d.ReadOnly, Sensitive: d.Sensitive(), Type: d.Type, Doc: d.Doc}
	v.Synonyms = from(d.Name, b.chain(brokerSynonymNames(d.Name)))
	if len(v.Synonyms) > 0 {
		v.Value, v.Source = v.Synonyms[0].Value, v.Synonyms[0].Source
	} else {
		v.Null, v.Source = true, SourceDefaultConfig
	}
	return v
}

// chain lists the values of the broker configs names in Kafka's order of
// precedence (ConfigHelper.configSynonyms): every name's dynamic
// per-broker value, then every name's dynamic cluster default, then every
// static value, then every default.
func (b *Broker) chain(names []string) []Synonym {
	var out []Synonym
	for _, layer := range []struct {
		values map[string]string
		source Source
	}{{b.dynamicBroker, SourceDynamicBrokerConfig}, {b.dynamicDefault, SourceDynamicDefaultBrokerConfig}} {
		for _, n := range names {
			if d, ok := LookupBroker(n); ok {
				if v, ok := dynamic(layer.values, d); ok {
					out = append(out, Synonym{Name: n, Value: v, Source: layer.source})
				}
			}
		}
	}
	for _, n := range names {
		if v, ok := b.static[n]; ok {
			out = append(out, Synonym{Name: n, Value: v, Source: SourceStaticBrokerConfig})
		}
	}
	for _, n := range names {
		if d, ok := LookupBroker(n); ok && !d.NoDefault {
			out = append(out, Synonym{Name: n, Value: d.Default, Source: SourceDefaultConfig})
		}
	}
	return out
}

// from drops the entries of chain before the first one named name, as
// Kafka does: describing log.retention.hours does not show
// log.retention.ms, and a topic's synonyms start at its first broker key.
func from(name string, chain []Synonym) []Synonym {
	for i, s := range chain {
		if s.Name == name {
			return chain[i:]
		}
	}
	return nil
}

// brokerSynonymNames are the broker configs that hold the same setting as
// broker config name in different units, in precedence order (Kafka's
// DynamicBrokerConfig.brokerConfigSynonyms): log.retention.ms, .minutes
// and .hours; log.roll.ms and .hours; log.roll.jitter.ms and .hours; and
// log.flush.interval.ms with log.flush.scheduler.interval.ms, its default
// (not the other way round). Any other config is its own only synonym.
func brokerSynonymNames(name string) []string {
	tn, ok := defs().topicBySynonym[name]
	if !ok {
		return []string{name}
	}
	td, _ := LookupTopic(tn)
	if len(td.synonyms) < 2 || (td.Name == "flush.ms" && td.synonyms[0].name != name) {
		return []string{name}
	}
	out := make([]string, len(td.synonyms))
	for i, s := range td.synonyms {
		out[i] = s.name
	}
	return out
}

// resolveTopic resolves one topic config: the topic's override, else the
// first broker key with a value in the chain of its broker keys (converted
// to the topic config's unit), else the default. Its synonyms are Kafka's:
// the override, then the chain from the first entry of the topic config's
// first broker key (so a topic whose retention comes from
// log.retention.hours alone lists none, as in Kafka).
func (b *Broker) resolveTopic(d Def, overrides map[string]string) Value {
	v := Value{Name: d.Name, Type: d.Type, Doc: d.Doc, ReadOnly: d.ReadOnly, Sensitive: d.Sensitive()}
	names := make([]string, len(d.synonyms))
	for i, s := range d.synonyms {
		names[i] = s.name
	}
	chain := b.chain(names)
	o, overridden := overrides[d.Name]
	if overridden {
		v.Synonyms = append(v.Synonyms, Synonym{Name: d.Name, Value: o, Source: SourceDynamicTopicConfig})
	}
	v.Synonyms = append(v.Synonyms, from(d.BrokerKey, chain)...)
	v.Source = SourceDefaultConfig
	if len(v.Synonyms) > 0 {
		v.Source = v.Synonyms[0].Source
	}
	switch {
	case overridden:
		v.Value = o
	case len(chain) > 0:
		first := chain[0]
		v.Value = first.Value
		for _, s := range d.synonyms {
			if s.name == first.Name && s.mult != 1 {
				n := saturatingMul(parseInt(first.Value), s.mult)
				if n < 0 {
					n = -1 // any negative time in a coarser unit means "unlimited"
				}
				v.Value = strconv.FormatInt(n, 10)
			}
		}
	default:
		v.Value = d.Default
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

// ValidateDynamicBroker checks a change of dynamic broker configs, by
// name, as Kafka does (DynamicBrokerConfig.validateConfigs): every config
// set must be dynamic (ErrReadOnly names all that are not) and its value
// valid (ErrInvalidValue). A name klog does not define is accepted and
// stored, as Kafka accepts it; deleting any name is accepted. The errors
// carry Kafka's words for clients.
func ValidateDynamicBroker(set map[string]string) error {
	var readOnly []string
	for n := range set {
		if d, ok := LookupBroker(n); ok && d.ReadOnly {
			readOnly = append(readOnly, n)
		}
	}
	if len(readOnly) > 0 {
		slices.Sort(readOnly)
		list := strings.Join(readOnly, ", ")
		return errmsg.Withf(fmt.Errorf("%w: %s cannot change while the broker runs; set it with -X at start", ErrReadOnly, list),
			"Cannot update these configs dynamically: [%s]", list)
	}
	for _, n := range slices.Sorted(maps.Keys(set)) {
		d, ok := LookupBroker(n)
		if !ok {
			continue
		}
		if err := d.Validate(set[n]); err != nil {
			return invalidValue(d, set[n], err)
		}
	}
	return nil
}
