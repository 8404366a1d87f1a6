package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/errmsg"
)

// Type is a config's type as reported by DescribeConfigs
// (kmsg.ConfigType).
type Type int8

// Config types, numbered as in DescribeConfigs.
const (
	TypeUnknown  = Type(kmsg.ConfigTypeUnknown)
	TypeBoolean  = Type(kmsg.ConfigTypeBoolean)
	TypeString   = Type(kmsg.ConfigTypeString)
	TypeInt      = Type(kmsg.ConfigTypeInt)
	TypeShort    = Type(kmsg.ConfigTypeShort)
	TypeLong     = Type(kmsg.ConfigTypeLong)
	TypeDouble   = Type(kmsg.ConfigTypeDouble)
	TypeList     = Type(kmsg.ConfigTypeList)
	TypeClass    = Type(kmsg.ConfigTypeClass)
	TypePassword = Type(kmsg.ConfigTypePassword)
)

// String returns the lower-case type name used in docs ("long", "list").
func (t Type) String() string {
	switch t {
	case TypeBoolean:
		return "boolean"
	case TypeString:
		return "string"
	case TypeInt:
		return "int"
	case TypeShort:
		return "short"
	case TypeLong:
		return "long"
	case TypeDouble:
		return "double"
	case TypeList:
		return "list"
	case TypeClass:
		return "class"
	case TypePassword:
		return "password"
	}
	return "unknown"
}

// Def defines one config.
type Def struct {
	// Name is the config's name ("retention.ms", "num.partitions").
	Name string
	// BrokerKey is, for a topic config, the name of the broker config that
	// holds the cluster-wide default ("log.retention.ms"); "" if none. For
	// broker configs it is "".
	BrokerKey string
	// Type is the value's type.
	Type Type
	// Default is the default value in its string form. When NoDefault is
	// set the config has no default (null) and Default is "".
	Default string
	// NoDefault reports that the config is null unless set.
	NoDefault bool
	// Doc is a one-line description.
	Doc string
	// ReadOnly reports that the config cannot be changed while running.
	ReadOnly bool
	// Internal marks a topic config for tests and demos, as Kafka's
	// internal configs: it may be set like any other, and CreateTopics
	// and DescribeConfigs list it only where it is set.
	Internal bool
	// Validate checks a value: its type and its valid range or values.
	Validate func(string) error

	// synonyms are, for a topic config, the broker keys in precedence order
	// with the factor that converts their unit to the topic config's unit.
	synonyms []synonym
}

// Sensitive reports whether values of this config must never be shown.
func (d Def) Sensitive() bool { return d.Type == TypePassword }

type synonym struct {
	name string
	mult int64
}

const maxLong = "9223372036854775807"

// validator builds a Def's Validate from its type and extra checks.
func validator(t Type, checks ...func(string) error) func(string) error {
	return func(v string) error {
		if err := checkType(t, v); err != nil {
			return err
		}
		for _, c := range checks {
			if err := c(v); err != nil {
				return err
			}
		}
		return nil
	}
}

func checkType(t Type, v string) error {
	switch t {
	case TypeBoolean:
		if _, err := parseBool(v); err != nil {
			return err
		}
	case TypeInt:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err != nil {
			return errmsg.With(fmt.Errorf("%q is not a 32-bit integer", v), "Not a number of type INT")
		}
	case TypeShort:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 16); err != nil {
			return errmsg.With(fmt.Errorf("%q is not a 16-bit integer", v), "Not a number of type SHORT")
		}
	case TypeLong:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return errmsg.With(fmt.Errorf("%q is not a 64-bit integer", v), "Not a number of type LONG")
		}
	case TypeDouble:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return errmsg.With(fmt.Errorf("%q is not a number", v), "Not a number of type DOUBLE")
		}
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errmsg.With(fmt.Errorf("%q is not true or false", v), "Expected value to be either true or false")
}

// atLeast checks an integer is >= min.
func atLeast(min int64) func(string) error {
	return func(v string) error {
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if n < min {
			return errmsg.Withf(fmt.Errorf("value must be at least %d", min), "Value must be at least %d", min)
		}
		return nil
	}
}

// adminURL checks an admin API URL: empty, or http://HOST:PORT (https
// too) with no path.
func adminURL(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Port() == "" || strings.Trim(u.Path, "/") != "" {
		return errmsg.With(fmt.Errorf("%q is not http://HOST:PORT", v), "Value must be http://HOST:PORT or empty")
	}
	return nil
}

// between checks an integer is in [lo, hi].
func between(lo, hi int64) func(string) error {
	return func(v string) error {
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if n < lo || n > hi {
			return kafkaRange(fmt.Errorf("value must be in [%d, %d]", lo, hi), n < lo, fmt.Sprint(lo), fmt.Sprint(hi))
		}
		return nil
	}
}

// betweenFloat checks a double is in [lo, hi].
func betweenFloat(lo, hi float64) func(string) error {
	return func(v string) error {
		f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if f < lo || f > hi {
			return kafkaRange(fmt.Errorf("value must be in [%g, %g]", lo, hi), f < lo, fmt.Sprint(lo), fmt.Sprint(hi))
		}
		return nil
	}
}

// kafkaRange gives err, a value outside a range, the wire message of
// Kafka's ConfigDef.Range: the bound it broke.
func kafkaRange(err error, below bool, lo, hi string) error {
	if below {
		return errmsg.With(err, "Value must be at least "+lo)
	}
	return errmsg.With(err, "Value must be no more than "+hi)
}

// oneOf checks a string is one of the given values (case-sensitive).
func oneOf(values ...string) func(string) error {
	return func(v string) error {
		for _, ok := range values {
			if strings.TrimSpace(v) == ok {
				return nil
			}
		}
		return errmsg.Withf(fmt.Errorf("value must be one of %s", strings.Join(values, ", ")),
			"String must be one of: %s", strings.Join(values, ", "))
	}
}

// StandardAuthorizer is the value of authorizer.class.name that turns
// authorization on: Kafka's class name, the one authorizer klog has.
const StandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// knownAuthorizer checks authorizer.class.name: empty, or the
// StandardAuthorizer.
func knownAuthorizer(v string) error {
	if v = strings.TrimSpace(v); v == "" {
		return nil
	}
	return knownClass(StandardAuthorizer)(v)
}

// knownClass checks a class config names one of the classes klog
// implements; Kafka refuses a class it cannot load in these words.
func knownClass(classes ...string) func(string) error {
	return func(v string) error {
		if slices.Contains(classes, strings.TrimSpace(v)) {
			return nil
		}
		return errmsg.Withf(fmt.Errorf("klog implements only %s", strings.Join(classes, ", ")),
			"Class %s could not be found.", strings.TrimSpace(v))
	}
}

// listOf checks every element of a comma-separated list is one of values
// and, when nonEmpty, that the list has at least one element.
func listOf(nonEmpty bool, values ...string) func(string) error {
	return func(v string) error {
		items := splitList(v)
		if nonEmpty && len(items) == 0 {
			return fmt.Errorf("list must not be empty; valid elements: %s", strings.Join(values, ", "))
		}
		for _, it := range items {
			if err := oneOf(values...)(it); err != nil {
				// Kafka's ValidList names the element's
				// ValidString message only.
				msg, _ := errmsg.Wire(err)
				return errmsg.With(fmt.Errorf("list element %q: %w", it, err), msg)
			}
		}
		return nil
	}
}

// allOf checks a list names every one of values.
func allOf(values ...string) func(string) error {
	return func(v string) error {
		items := splitList(v)
		for _, want := range values {
			if !slices.Contains(items, want) {
				return fmt.Errorf("list must name %s; it has %s", strings.Join(values, ", "), strings.Join(items, ", "))
			}
		}
		return nil
	}
}

// throttledReplicas checks a throttled replica list: "", "*", or
// partition:broker pairs.
func throttledReplicas(v string) error {
	items := splitList(v)
	if len(items) == 1 && items[0] == "*" {
		return nil
	}
	for _, it := range items {
		p, b, ok := strings.Cut(it, ":")
		if !ok {
			return fmt.Errorf("list element %q is not partition:broker", it)
		}
		if _, err := strconv.ParseInt(p, 10, 32); err != nil {
			return fmt.Errorf("list element %q: bad partition", it)
		}
		if _, err := strconv.ParseInt(b, 10, 32); err != nil {
			return fmt.Errorf("list element %q: bad broker", it)
		}
	}
	return nil
}

// splitList splits a comma-separated list, trimming blanks and dropping
// empty elements.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// MinSegmentBytes is the least segment.bytes (and log.segment.bytes) Kafka
// 4 takes (KIP-1030); internal.segment.bytes goes below it.
const MinSegmentBytes = 1 << 20

const (
	hourMs   = 3600000
	minuteMs = 60000
)

// topicDefs is every topic config, sorted by name (checked by a test).
var topicDefs = []Def{
	{Name: "cleanup.policy", Type: TypeList, Default: "delete", Doc: "Retention policy for old segments: delete, compact, or both.",
		Validate: validator(TypeList, listOf(false, "compact", "delete")), synonyms: []synonym{{"log.cleanup.policy", 1}}},
	{Name: "compression.gzip.level", Type: TypeInt, Default: "-1", Doc: "Compression level used when compression.type is gzip.",
		Validate: validator(TypeInt, gzipLevel), synonyms: []synonym{{"compression.gzip.level", 1}}},
	{Name: "compression.lz4.level", Type: TypeInt, Default: "9", Doc: "Compression level used when compression.type is lz4.",
		Validate: validator(TypeInt, between(1, 17)), synonyms: []synonym{{"compression.lz4.level", 1}}},
	{Name: "compression.type", Type: TypeString, Default: "producer", Doc: "Final compression of stored batches; producer keeps the producer's codec.",
		Validate: validator(TypeString, oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")), synonyms: []synonym{{"compression.type", 1}}},
	{Name: "compression.zstd.level", Type: TypeInt, Default: "3", Doc: "Compression level used when compression.type is zstd.",
		Validate: validator(TypeInt, between(-131072, 22)), synonyms: []synonym{{"compression.zstd.level", 1}}},
	{Name: "delete.retention.ms", Type: TypeLong, Default: "86400000", Doc: "How long delete tombstones are retained in compacted topics.",
		Validate: validator(TypeLong, atLeast(0)), synonyms: []synonym{{"log.cleaner.delete.retention.ms", 1}}},
	{Name: "errors.deadletterqueue.group.enable", Type: TypeBoolean, Default: "false", Doc: "Whether share groups may use the topic as a dead-letter queue; klog has no share groups.",
		Validate: validator(TypeBoolean)},
	{Name: "file.delete.delay.ms", Type: TypeLong, Default: "60000", Doc: "Time to wait before deleting a file from the filesystem.",
		Validate: validator(TypeLong, atLeast(0)), synonyms: []synonym{{"log.segment.delete.delay.ms", 1}}},
	{Name: "flush.messages", Type: TypeLong, Default: maxLong, Doc: "Number of messages written to a log before an fsync is forced.",
		Validate: validator(TypeLong, atLeast(1)), synonyms: []synonym{{"log.flush.interval.messages", 1}}},
	{Name: "flush.ms", Type: TypeLong, Default: maxLong, Doc: "Maximum time a message stays in a log before an fsync is forced.",
		Validate: validator(TypeLong, atLeast(0)), synonyms: []synonym{{"log.flush.interval.ms", 1}, {"log.flush.scheduler.interval.ms", 1}}},
	{Name: "follower.replication.throttled.replicas", Type: TypeList, Default: "", Doc: "Replicas (partition:broker or *) throttled on the follower side.",
		Validate: validator(TypeList, throttledReplicas)},
	{Name: "index.interval.bytes", Type: TypeInt, Default: "4096", Doc: "Bytes of log between two offset index entries.",
		Validate: validator(TypeInt, atLeast(0)), synonyms: []synonym{{"log.index.interval.bytes", 1}}},
	{Name: "internal.segment.bytes", Type: TypeInt, NoDefault: true, Internal: true, Doc: "Segment file size at which a new segment is rolled, in place of segment.bytes and below its 1 MiB floor: for tests and demos that want small segments (Kafka's internal config of that name).",
		Validate: validator(TypeInt)},
	{Name: "leader.replication.throttled.replicas", Type: TypeList, Default: "", Doc: "Replicas (partition:broker or *) throttled on the leader side.",
		Validate: validator(TypeList, throttledReplicas)},
	{Name: "local.retention.bytes", Type: TypeLong, Default: "-2", Doc: "Bytes kept in local segments when tiered storage is on; -2 uses retention.bytes.",
		Validate: validator(TypeLong, atLeast(-2)), synonyms: []synonym{{"log.local.retention.bytes", 1}}},
	{Name: "local.retention.ms", Type: TypeLong, Default: "-2", Doc: "Time local segments are kept when tiered storage is on; -2 uses retention.ms.",
		Validate: validator(TypeLong, atLeast(-2)), synonyms: []synonym{{"log.local.retention.ms", 1}}},
	{Name: "max.compaction.lag.ms", Type: TypeLong, Default: maxLong, Doc: "Maximum time a message stays ineligible for compaction.",
		Validate: validator(TypeLong, atLeast(1)), synonyms: []synonym{{"log.cleaner.max.compaction.lag.ms", 1}}},
	{Name: "max.decompressed.message.bytes", Type: TypeInt, Default: "2147483639", Doc: "Largest decompressed record accepted (Kafka 4.4); klog bounds each compressed batch's decompressed size by max.message.bytes, at least 64 MiB, instead.",
		Validate: validator(TypeInt, atLeast(1)), synonyms: []synonym{{"max.decompressed.message.bytes", 1}}},
	{Name: "max.message.bytes", Type: TypeInt, Default: "1048588", Doc: "Largest record batch size allowed, after compression.",
		Validate: validator(TypeInt, atLeast(0)), synonyms: []synonym{{"message.max.bytes", 1}}},
	{Name: "message.timestamp.after.max.ms", Type: TypeLong, Default: "3600000", Doc: "Largest allowed amount a record timestamp may be ahead of the broker's time.",
		Validate: validator(TypeLong, atLeast(0)), synonyms: []synonym{{"log.message.timestamp.after.max.ms", 1}}},
	{Name: "message.timestamp.before.max.ms", Type: TypeLong, Default: maxLong, Doc: "Largest allowed amount a record timestamp may be behind the broker's time.",
		Validate: validator(TypeLong, atLeast(0)), synonyms: []synonym{{"log.message.timestamp.before.max.ms", 1}}},
	{Name: "message.timestamp.type", Type: TypeString, Default: "CreateTime", Doc: "Record timestamp kind: CreateTime or LogAppendTime.",
		Validate: validator(TypeString, oneOf("CreateTime", "LogAppendTime")), synonyms: []synonym{{"log.message.timestamp.type", 1}}},
	{Name: "min.cleanable.dirty.ratio", Type: TypeDouble, Default: "0.5", Doc: "Minimum dirty-to-total ratio of a log before it is compacted.",
		Validate: validator(TypeDouble, betweenFloat(0, 1)), synonyms: []synonym{{"log.cleaner.min.cleanable.ratio", 1}}},
	{Name: "min.compaction.lag.ms", Type: TypeLong, Default: "0", Doc: "Minimum time a message stays uncompacted.",
		Validate: validator(TypeLong, atLeast(0)), synonyms: []synonym{{"log.cleaner.min.compaction.lag.ms", 1}}},
	{Name: "min.insync.replicas", Type: TypeInt, Default: "1", Doc: "Minimum in-sync replicas needed to acknowledge an acks=all write.",
		Validate: validator(TypeInt, atLeast(1)), synonyms: []synonym{{"min.insync.replicas", 1}}},
	{Name: "preallocate", Type: TypeBoolean, Default: "false", Doc: "Whether segment files are preallocated on creation.",
		Validate: validator(TypeBoolean), synonyms: []synonym{{"log.preallocate", 1}}},
	{Name: "remote.copy.lag.bytes", Type: TypeLong, Default: "-1", Doc: "Bytes of newer data after which a segment may be copied to tiered storage; klog has no tiered storage.",
		Validate: validator(TypeLong, atLeast(-1)), synonyms: []synonym{{"log.remote.copy.lag.bytes", 1}}},
	{Name: "remote.copy.lag.ms", Type: TypeLong, Default: "0", Doc: "Age after which a segment may be copied to tiered storage; klog has no tiered storage.",
		Validate: validator(TypeLong, atLeast(-1)), synonyms: []synonym{{"log.remote.copy.lag.ms", 1}}},
	{Name: "remote.log.copy.disable", Type: TypeBoolean, Default: "false", Doc: "Whether copying to tiered storage stops for the topic; klog has no tiered storage.",
		Validate: validator(TypeBoolean)},
	{Name: "remote.log.delete.on.disable", Type: TypeBoolean, Default: "false", Doc: "Whether tiered data is deleted when tiered storage is turned off for the topic; klog has no tiered storage.",
		Validate: validator(TypeBoolean)},
	{Name: "remote.storage.enable", Type: TypeBoolean, Default: "false", Doc: "Whether tiered storage is enabled for the topic.",
		Validate: validator(TypeBoolean)},
	{Name: "retention.bytes", Type: TypeLong, Default: "-1", Doc: "Maximum size of a partition's log before old segments are deleted; -1 is unlimited.",
		Validate: validator(TypeLong), synonyms: []synonym{{"log.retention.bytes", 1}}},
	{Name: "retention.ms", Type: TypeLong, Default: "604800000", Doc: "Maximum age of a log segment before it is deleted; -1 is unlimited.",
		Validate: validator(TypeLong, atLeast(-1)),
		synonyms: []synonym{{"log.retention.ms", 1}, {"log.retention.minutes", minuteMs}, {"log.retention.hours", hourMs}}},
	{Name: "segment.bytes", Type: TypeInt, Default: "1073741824", Doc: "Segment file size at which a new segment is rolled; at least 1 MiB, as in Kafka 4 (KIP-1030): internal.segment.bytes sets smaller segments.",
		Validate: validator(TypeInt, atLeast(MinSegmentBytes)), synonyms: []synonym{{"log.segment.bytes", 1}}},
	{Name: "segment.index.bytes", Type: TypeInt, Default: "10485760", Doc: "Size of the offset index file preallocated per segment.",
		Validate: validator(TypeInt, atLeast(4)), synonyms: []synonym{{"log.index.size.max.bytes", 1}}},
	{Name: "segment.jitter.ms", Type: TypeLong, Default: "0", Doc: "Maximum random jitter subtracted from segment.ms.",
		Validate: validator(TypeLong, atLeast(0)), synonyms: []synonym{{"log.roll.jitter.ms", 1}, {"log.roll.jitter.hours", hourMs}}},
	{Name: "segment.ms", Type: TypeLong, Default: "604800000", Doc: "Time after which a segment is rolled even if not full.",
		Validate: validator(TypeLong, atLeast(1)), synonyms: []synonym{{"log.roll.ms", 1}, {"log.roll.hours", hourMs}}},
	{Name: "unclean.leader.election.enable", Type: TypeBoolean, Default: "false", Doc: "Whether replicas outside the ISR may be elected leader.",
		Validate: validator(TypeBoolean), synonyms: []synonym{{"unclean.leader.election.enable", 1}}},
}

func gzipLevel(v string) error {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if n == -1 || (n >= 1 && n <= 9) {
		return nil
	}
	return errmsg.With(errors.New("value must be -1 or in [1, 9]"), "Value must be between 1 and 9 or equal to -1")
}

// brokerOnlyDefs are broker configs that are not the default of a topic
// config.
var brokerOnlyDefs = []Def{
	{Name: "advertised.listeners", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "Addresses clients are told, NAME://HOST:PORT for listeners whose published address differs from the bound one; port 0 is the bound port.",
		Validate: validator(TypeString)},
	{Name: "allow.everyone.if.no.acl.found", Type: TypeBoolean, Default: "false", ReadOnly: true, Doc: "With an authorizer (authorizer.class.name), whether a resource that no ACL names is open to everyone; denied to all but super users otherwise.",
		Validate: validator(TypeBoolean)},
	{Name: "authorizer.class.name", Type: TypeString, Default: "", ReadOnly: true, Doc: "The authorizer; empty allows every request. klog knows Kafka's org.apache.kafka.metadata.authorizer.StandardAuthorizer: ACLs in the metadata log (klog acl, CreateAcls), super.users and allow.everyone.if.no.acl.found.",
		Validate: validator(TypeString, knownAuthorizer)},
	{Name: "auto.create.topics.enable", Type: TypeBoolean, Default: "true", ReadOnly: true, Doc: "Create a topic when a client asks for metadata or produces to a missing one.",
		Validate: validator(TypeBoolean)},
	{Name: "auto.leader.rebalance.enable", Type: TypeBoolean, Default: "true", ReadOnly: true, Doc: "Whether the active controller moves leadership back to the preferred replicas every leader.imbalance.check.interval.seconds (a quorum of several voters only).",
		Validate: validator(TypeBoolean)},
	{Name: "broker.heartbeat.interval.ms", Type: TypeInt, Default: "2000", ReadOnly: true, Doc: "How often a broker heartbeats the active controller (a quorum of several voters only).",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "broker.id", Type: TypeInt, Default: "-1", ReadOnly: true, Doc: "This broker's id; must equal node.id when both are set.",
		Validate: validator(TypeInt, atLeast(-1))},
	{Name: "broker.rack", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "Rack of this broker, used for rack-aware placement, listed in Metadata and DescribeCluster, and matched against consumers' client.rack by replica.selector.class.",
		Validate: validator(TypeString)},
	{Name: "broker.session.timeout.ms", Type: TypeInt, Default: "9000", ReadOnly: true, Doc: "Time without a heartbeat after which the active controller fences a broker: Metadata stops listing it until it heartbeats again (a quorum of several voters only).",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "connection.failed.authentication.delay.ms", Type: TypeInt, Default: "100", ReadOnly: true, Doc: "How long the answer to a failed SASL authentication is delayed before the connection is closed, to slow password guessing.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "connections.max.idle.ms", Type: TypeLong, Default: "600000", ReadOnly: true, Doc: "Time after which a connection that sends nothing is closed; -1 never closes one.",
		Validate: validator(TypeLong, atLeast(-1))},
	{Name: "connections.max.reauth.ms", Type: TypeLong, Default: "0", ReadOnly: true, Doc: "Longest session a SASL authentication opens (KIP-368): the connection is closed when it lapses unless the client authenticated again; 0 is no limit.",
		Validate: validator(TypeLong, atLeast(0))},
	{Name: "controller.listener.names", Type: TypeList, Default: "", ReadOnly: true, Doc: "Listener of the metadata quorum's connections (Raft, forwarded proposals, broker-only nodes joining), one name; its protocol is listener.security.protocol.map's: PLAINTEXT, or SSL for mutual TLS between nodes with the listener's ssl.* (listener.name.<name>.ssl.*), every peer presenting a node certificate of the truststore. klog's quorum takes no SASL. The quorum binds each node's controller.quorum.voters entry; an entry of listeners with this name is that address, not a Kafka listener. Empty: PLAINTEXT.",
		Validate: validator(TypeList)},
	{Name: "controller.quorum.voters", Type: TypeList, Default: "", ReadOnly: true, Doc: "The metadata quorum's voters as ID@HOST:PORT,...; each voter's Raft and forwarded-proposal traffic uses its own entry's address. Empty is the single-node quorum, in process. A node.id among them is a voter (controller and broker); any other node is a broker only, which follows the quorum as a Raft non-voter.",
		Validate: validator(TypeList, validateVoters)},
	{Name: "default.replication.factor", Type: TypeInt, Default: "1", ReadOnly: true, Doc: "Replication factor of topics created without one.",
		Validate: validator(TypeInt, between(1, math.MaxInt16))},
	{Name: "delegation.token.expiry.check.interval.ms", Type: TypeLong, Default: "3600000", ReadOnly: true, Doc: "How often the active controller removes the delegation tokens past their expiry or maximum lifetime.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "delegation.token.expiry.time.ms", Type: TypeLong, Default: "86400000", ReadOnly: true, Doc: "How long a delegation token lasts from its creation or renewal unless the request asks for less (never beyond its maximum lifetime).",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "delegation.token.max.lifetime.ms", Type: TypeLong, Default: "604800000", ReadOnly: true, Doc: "Longest lifetime of a delegation token, whatever its renewals; a creation may ask for less.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "delegation.token.secret.key", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "Secret key the HMACs of delegation tokens are computed with (HmacSHA512), the same on every node; delegation tokens are disabled (DELEGATION_TOKEN_AUTH_DISABLED) unless it is set. klog up --secure sets one generated for the cluster.",
		Validate: validator(TypePassword)},
	{Name: "delete.topic.enable", Type: TypeBoolean, Default: "true", ReadOnly: true, Doc: "Whether topics may be deleted.",
		Validate: validator(TypeBoolean)},
	{Name: "fetch.max.bytes", Type: TypeInt, Default: "57671680", ReadOnly: true, Doc: "Largest response a fetch request gets, whatever the client asks for (the first batch is returned even when larger).",
		Validate: validator(TypeInt, atLeast(1024))},
	{Name: "group.initial.rebalance.delay.ms", Type: TypeInt, Default: "0", ReadOnly: true, Doc: "Time the coordinator waits for more members before the first rebalance of a new group. klog defaults to 0 (Kafka: 3000) so that tests and local consumers start within tens of milliseconds; a new classic group still waits at least 50 ms, and 50 ms more after each join, so that consumers started together share its first generation.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "group.coordinator.rebalance.protocols", Type: TypeList, Default: "classic,consumer", ReadOnly: true, Doc: "Group protocols the coordinator serves: klog always serves classic and consumer (KIP-848) groups, and no streams groups (Kafka 4.4: classic,consumer,streams); share groups (KIP-932) follow the share.version feature, as in Kafka.",
		Validate: validator(TypeList, listOf(true, "classic", "consumer"), allOf("classic", "consumer"))},
	{Name: "group.consumer.assignors", Type: TypeList, Default: "uniform,range", ReadOnly: true, Doc: "Server-side assignors of consumer-protocol (KIP-848) groups; the first is the default.",
		Validate: validator(TypeList)},
	{Name: "group.consumer.heartbeat.interval.ms", Type: TypeInt, Default: "5000", ReadOnly: true, Doc: "Heartbeat interval given to consumer-protocol (KIP-848) members.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "group.consumer.max.size", Type: TypeInt, Default: "2147483647", ReadOnly: true, Doc: "Largest number of members of a consumer-protocol (KIP-848) group.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "group.consumer.session.timeout.ms", Type: TypeInt, Default: "45000", ReadOnly: true, Doc: "Session timeout of consumer-protocol (KIP-848) members.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "group.share.delivery.count.limit", Type: TypeInt, Default: "5", ReadOnly: true, Doc: "How many times a record is delivered to a share group (KIP-932) before it is archived: released, or its acquisition lock lapsed, that many times.",
		Validate: validator(TypeInt, between(2, 10))},
	{Name: "group.share.heartbeat.interval.ms", Type: TypeInt, Default: "5000", ReadOnly: true, Doc: "Heartbeat interval given to share group (KIP-932) members.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "group.share.max.share.sessions", Type: TypeInt, Default: "2000", ReadOnly: true, Doc: "Largest number of share sessions (ShareFetch) a node holds; a new one past it is refused SHARE_SESSION_LIMIT_REACHED.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "group.share.max.size", Type: TypeInt, Default: "200", ReadOnly: true, Doc: "Largest number of members of a share group (KIP-932).",
		Validate: validator(TypeInt, between(1, 1000))},
	{Name: "group.share.partition.max.record.locks", Type: TypeInt, Default: "2000", ReadOnly: true, Doc: "Largest number of in-flight records of a share-partition: records past its start by more are not acquired until the start moves.",
		Validate: validator(TypeInt, between(100, 10000))},
	{Name: "group.share.record.lock.duration.ms", Type: TypeInt, Default: "30000", ReadOnly: true, Doc: "How long a share group member holds the records it acquired before they are delivered again.",
		Validate: validator(TypeInt, between(1000, 3600000))},
	{Name: "group.share.session.timeout.ms", Type: TypeInt, Default: "45000", ReadOnly: true, Doc: "Session timeout of share group (KIP-932) members.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "group.max.size", Type: TypeInt, Default: "2147483647", ReadOnly: true, Doc: "Largest number of members of a classic group.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "group.max.session.timeout.ms", Type: TypeInt, Default: "1800000", ReadOnly: true, Doc: "Largest session timeout a consumer may ask for.",
		Validate: validator(TypeInt)},
	{Name: "group.min.session.timeout.ms", Type: TypeInt, Default: "6000", ReadOnly: true, Doc: "Smallest session timeout a consumer may ask for.",
		Validate: validator(TypeInt)},
	{Name: "inter.broker.listener.name", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "Listener other nodes connect to for replication and coordinator requests; unset: the listener named after security.inter.broker.protocol.",
		Validate: validator(TypeString)},
	{Name: "klog.admin.advertised.url", Type: TypeString, Default: "", ReadOnly: true, Doc: "The node's admin API as a Kafka client reaches it (http://HOST:PORT), so that klog's commands and the TUI find it from any Kafka address; empty when the node serves no admin API. klog up sets it to the address its admin API listens on (--admin-listen); set it only when clients reach that API at another address. klog only.",
		Validate: validator(TypeString, adminURL)},
	{Name: "klog.max.partitions", Type: TypeInt, Default: "10000", ReadOnly: true, Doc: "Most partition replicas one node hosts, internal topics included. A CreateTopics, CreatePartitions or topic auto-creation that would place more on a node is refused with POLICY_VIOLATION and creates nothing; a node always starts on its data directory, whatever it holds. klog only: Kafka has no such limit (KIP-578 proposed one). Each partition costs memory (indexes, producer state, its partition and coordinator state) and start-up time (each log is opened and its tail checked); open segment files are bounded on their own, so the limit is not what keeps descriptors in check.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "leader.imbalance.check.interval.seconds", Type: TypeLong, Default: "300", ReadOnly: true, Doc: "How often the active controller runs preferred leader elections when auto.leader.rebalance.enable is set.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "listener.security.protocol.map", Type: TypeString, Default: "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT", ReadOnly: true, Doc: "Security protocol of each listener name, NAME:PROTOCOL,... (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL).",
		Validate: validator(TypeString)},
	{Name: "listeners", Type: TypeString, Default: "PLAINTEXT://127.0.0.1:9092", ReadOnly: true, Doc: "Listeners the broker serves, NAME://HOST:PORT,... (klog binds loopback by default); the first binds klog up's --listen when given.",
		Validate: validator(TypeString)},
	{Name: "log.cleaner.backoff.ms", Type: TypeLong, Default: "15000", ReadOnly: true, Doc: "How long the log cleaner waits when no compacted log needs cleaning.",
		Validate: validator(TypeLong, atLeast(0))},
	{Name: "log.cleaner.dedupe.buffer.size", Type: TypeLong, Default: "134217728", ReadOnly: true, Doc: "Most memory the log cleaner's offset map of one pass may take; a pass cleans only as far as the map holds the keys of.",
		Validate: validator(TypeLong)},
	{Name: "log.cleaner.enable", Type: TypeBoolean, Default: "true", ReadOnly: true, Doc: "Whether the log cleaner compacts topics whose cleanup.policy includes compact.",
		Validate: validator(TypeBoolean)},
	{Name: "log.dir", Type: TypeString, Default: "/tmp/kafka-logs", ReadOnly: true, Doc: "Log directory, used when log.dirs is not set.",
		Validate: validator(TypeString)},
	{Name: "log.dirs", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "Comma-separated log directories; log.dir is used if unset.",
		Validate: validator(TypeString)},
	{Name: "log.flush.offset.checkpoint.interval.ms", Type: TypeInt, Default: "60000", ReadOnly: true, Doc: "How often the recovery point checkpoint is written.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "klog.produce.durable", Type: TypeBoolean, Default: "false", ReadOnly: true, Doc: "Acknowledge a produce (acks=1 or all) only once its records are fsynced, and let consumers read only synced records; concurrent produces, to any partitions and over any connections, share fsyncs (group commit). klog only: Kafka's flush.messages=1 fsyncs each append on its own.",
		Validate: validator(TypeBoolean)},
	{Name: "klog.max.open.files", Type: TypeInt, Default: "0", ReadOnly: true, Doc: "Most segment and checkpoint files the node keeps open at once, all partitions together; beyond it the least recently used are closed and reopened when next used. 0 means half the process's open file limit (RLIMIT_NOFILE, which the Go runtime raises to the hard limit at start), leaving the other half to connections. klog only: Kafka keeps every segment open and relies on the ulimit.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "log.retention.check.interval.ms", Type: TypeLong, Default: "300000", ReadOnly: true, Doc: "How often logs are checked for segments to delete.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "klog.max.inflight.requests.per.connection", Type: TypeInt, Default: "5", ReadOnly: true, Doc: "Requests read from one connection whose responses are not yet written; the connection is not read while it has this many. klog only: Kafka handles one request per connection at a time; 5 is the clients' default max.in.flight.requests.per.connection.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "max.incremental.fetch.session.cache.slots", Type: TypeInt, Default: "1000", ReadOnly: true, Doc: "Most incremental fetch sessions (KIP-227) a node holds; 0 creates none, and every fetch is answered in full.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "max.connections", Type: TypeInt, Default: "2147483647", Doc: "Most client connections the broker keeps; more are closed as they are accepted (Kafka waits for a free slot instead).",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "max.connections.per.ip", Type: TypeInt, Default: "2147483647", Doc: "Most connections the broker keeps from one IP address; more are closed as they are accepted.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "node.id", Type: TypeInt, Default: "-1", ReadOnly: true, Doc: "This node's id in the cluster.",
		Validate: validator(TypeInt, atLeast(-1))},
	{Name: "num.partitions", Type: TypeInt, Default: "1", ReadOnly: true, Doc: "Partition count of topics created without one.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "offsets.commit.timeout.ms", Type: TypeInt, Default: "5000", ReadOnly: true, Doc: "Longest a group coordinator write waits for __consumer_offsets' replicas (its high watermark) before the request is answered COORDINATOR_NOT_AVAILABLE.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "offsets.retention.minutes", Type: TypeInt, Default: "10080", ReadOnly: true, Doc: "How long committed offsets of an empty group are kept.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "offsets.retention.check.interval.ms", Type: TypeLong, Default: "600000", ReadOnly: true, Doc: "How often the coordinator looks for expired offsets.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "offsets.topic.num.partitions", Type: TypeInt, Default: "50", ReadOnly: true, Doc: "Partition count of __consumer_offsets.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "offsets.topic.replication.factor", Type: TypeShort, Default: "3", ReadOnly: true, Doc: "Replication factor of __consumer_offsets.",
		Validate: validator(TypeShort, atLeast(1))},
	{Name: "offsets.topic.segment.bytes", Type: TypeInt, Default: "104857600", ReadOnly: true, Doc: "Segment size of __consumer_offsets.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "producer.id.expiration.ms", Type: TypeInt, Default: "86400000", Doc: "Idle time after which a producer id's state is dropped.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "producer.id.expiration.check.interval.ms", Type: TypeInt, Default: "600000", ReadOnly: true, Doc: "How often partitions drop the producer ids idle for producer.id.expiration.ms. An internal config in Kafka, which DescribeConfigs does not list; klog lists it.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "queued.max.request.bytes", Type: TypeLong, Default: "104857600", ReadOnly: true, Doc: "Bytes of requests being read or handled, all connections together; a connection stops being read while they are taken. At least socket.request.max.bytes. klog defaults to 100 MiB and has no unbounded setting (Kafka: -1, unbounded), so that no client can make the node allocate without limit. Requests of at most 64 KiB may take a headroom of 1/16 of it beyond it (klog only), so that they are not held up by large ones.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "quota.window.num", Type: TypeInt, Default: "11", ReadOnly: true, Doc: "Number of windows a client's produce, fetch and request rates are measured over for its quota.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "quota.window.size.seconds", Type: TypeInt, Default: "1", ReadOnly: true, Doc: "Length of one window of a client's quota rates; the request quota's throttle is at most one window.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "klog.queued.max.response.bytes", Type: TypeLong, Default: "104857600", ReadOnly: true, Doc: "Bytes of responses waiting to be written, all connections together; while they hold this much, a connection with a response of its own still unwritten is not read. klog only: Kafka holds one response per connection.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "klog.queued.max.response.bytes.per.connection", Type: TypeLong, Default: "1048576", ReadOnly: true, Doc: "Bytes of one connection's responses waiting to be written past which it is not read; a connection with nothing unwritten is always read, so one response of any size may wait. klog only.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "replica.fetch.max.bytes", Type: TypeInt, Default: "1048576", ReadOnly: true, Doc: "Bytes a follower asks for per partition in a fetch.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "replica.high.watermark.checkpoint.interval.ms", Type: TypeLong, Default: "5000", ReadOnly: true, Doc: "How often the high watermarks are saved to replication-offset-checkpoint in the data directory (and at shutdown); a restarted replica starts from them.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "replica.lag.time.max.ms", Type: TypeLong, Default: "30000", ReadOnly: true, Doc: "Time after which a follower that has not caught up leaves the ISR.",
		Validate: validator(TypeLong, atLeast(1))},
	{Name: "replica.fetch.wait.max.ms", Type: TypeInt, Default: "500", ReadOnly: true, Doc: "Longest a follower's fetch waits at the leader for new data.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "replica.fetch.backoff.ms", Type: TypeInt, Default: "1000", ReadOnly: true, Doc: "Time a follower waits after a failed fetch before it fetches again from that leader.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "replica.selector.class", Type: TypeClass, NoDefault: true, ReadOnly: true, Doc: "How the leader picks the replica a consumer that names its rack (client.rack, Fetch v11+) should read from (KIP-392). Unset, the leader always serves. klog knows one selector, Kafka's org.apache.kafka.common.replica.RackAwareReplicaSelector: an in-sync replica in the consumer's rack, the leader when it is in that rack or none is.",
		Validate: validator(TypeClass, knownClass(RackAwareReplicaSelector))},
	{Name: "replica.socket.timeout.ms", Type: TypeInt, Default: "30000", ReadOnly: true, Doc: "Time a follower waits for an answer from the leader, beyond replica.fetch.wait.max.ms, before it reconnects.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "replica.fetch.response.max.bytes", Type: TypeInt, Default: "10485760", ReadOnly: true, Doc: "Bytes a follower asks for in one fetch, all partitions together.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "sasl.enabled.mechanisms", Type: TypeList, Default: "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", ReadOnly: true, Doc: "SASL mechanisms SASL listeners offer; klog implements PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER and defaults to the first three (Kafka defaults to GSSAPI, which klog does not implement).",
		Validate: validator(TypeList)},
	{Name: "sasl.jaas.config", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "JAAS login module config whose username and password a node authenticates to other nodes with on a SASL inter-broker listener; set it per listener and mechanism as listener.name.<listener>.<mechanism>.sasl.jaas.config.",
		Validate: validator(TypePassword)},
	{Name: "sasl.mechanism.inter.broker.protocol", Type: TypeString, Default: "PLAIN", ReadOnly: true, Doc: "SASL mechanism nodes authenticate to each other with on a SASL inter-broker listener: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (Kafka defaults to GSSAPI, which klog does not implement).",
		Validate: validator(TypeString, oneOf("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"))},
	{Name: "sasl.oauthbearer.clock.skew.seconds", Type: TypeInt, Default: "30", ReadOnly: true, Doc: "Seconds of clock skew allowed to the exp and nbf of the tokens OAUTHBEARER's JWKS validator checks.",
		Validate: validator(TypeInt, atLeast(0))},
	{Name: "sasl.oauthbearer.expected.audience", Type: TypeList, NoDefault: true, ReadOnly: true, Doc: "Audiences (comma-separated) of which a token's aud must hold one, for OAUTHBEARER's JWKS validator; unset, a token with an aud is refused, as Kafka.",
		Validate: validator(TypeList)},
	{Name: "sasl.oauthbearer.expected.issuer", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "The iss a token must have, for OAUTHBEARER's JWKS validator; unset, any.",
		Validate: validator(TypeString)},
	{Name: "sasl.oauthbearer.jwks.endpoint.refresh.ms", Type: TypeLong, Default: "3600000", ReadOnly: true, Doc: "Age after which OAUTHBEARER's JWKS validator fetches the key set again; a token naming a key the set lacks fetches it sooner, at most once per min(this, 10s), and once a second.",
		Validate: validator(TypeLong, atLeast(0))},
	{Name: "sasl.oauthbearer.jwks.endpoint.url", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "The issuer's JSON Web Key Set, an http(s) URL or a file:// path; set, OAUTHBEARER validates signed tokens against it (JWKS validator) rather than taking unsecured ones.",
		Validate: validator(TypeString)},
	{Name: "sasl.oauthbearer.scope.claim.name", Type: TypeString, Default: "scope", ReadOnly: true, Doc: "The claim holding a token's scope, for OAUTHBEARER's JWKS validator.",
		Validate: validator(TypeString)},
	{Name: "sasl.oauthbearer.sub.claim.name", Type: TypeString, Default: "sub", ReadOnly: true, Doc: "The claim naming a token's principal, for OAUTHBEARER's JWKS validator.",
		Validate: validator(TypeString)},
	{Name: "sasl.server.callback.handler.class", Type: TypeClass, NoDefault: true, ReadOnly: true, Doc: "OAUTHBEARER's token validator, set per listener and mechanism as listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class: Kafka's OAuthBearerUnsecuredValidatorCallbackHandler (unsigned tokens, the default) or OAuthBearerValidatorCallbackHandler (JWKS, the default when sasl.oauthbearer.jwks.endpoint.url is set).",
		Validate: validator(TypeClass)},
	{Name: "security.inter.broker.protocol", Type: TypeString, Default: "PLAINTEXT", ReadOnly: true, Doc: "Security protocol between nodes when inter.broker.listener.name is unset: the listener of that name is used.",
		Validate: validator(TypeString, oneOf("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"))},
	{Name: "socket.request.max.bytes", Type: TypeInt, Default: "104857600", ReadOnly: true, Doc: "Largest request the broker accepts.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "socket.request.progress.timeout.ms", Type: TypeInt, Default: "10000", ReadOnly: true, Doc: "Time after which a connection whose started request receives no more bytes, or whose response being written is not taken, is closed. klog only: Kafka has no such limit and waits for connections.max.idle.ms.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "ssl.client.auth", Type: TypeString, Default: "none", ReadOnly: true, Doc: "Whether TLS listeners ask clients for a certificate: none, requested, or required (mTLS); a SASL_SSL listener only by its own listener.name.<name>.ssl.client.auth, as Kafka.",
		Validate: validator(TypeString, oneOf("required", "requested", "none"))},
	{Name: "ssl.enabled.protocols", Type: TypeList, Default: "TLSv1.2,TLSv1.3", ReadOnly: true, Doc: "TLS versions TLS listeners accept.",
		Validate: validator(TypeList, listOf(true, "TLSv1.2", "TLSv1.3"))},
	{Name: "ssl.endpoint.identification.algorithm", Type: TypeString, Default: "https", ReadOnly: true, Doc: "How a node checks the certificate of another node it connects to over TLS: https checks the host name, empty does not.",
		Validate: validator(TypeString, oneOf("https", ""))},
	{Name: "ssl.key.password", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "Password of the private key in the keystore (PKCS12: ssl.keystore.password when unset; PEM: the password of a key encrypted as PKCS#8, an ENCRYPTED PRIVATE KEY block).",
		Validate: validator(TypePassword)},
	{Name: "ssl.keystore.certificate.chain", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "Certificate chain in PEM, inline, with ssl.keystore.type=PEM and ssl.keystore.key.",
		Validate: validator(TypePassword)},
	{Name: "ssl.keystore.key", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "Private key in PEM (PKCS#8, PKCS#1 or EC), inline, with ssl.keystore.type=PEM and ssl.keystore.certificate.chain.",
		Validate: validator(TypePassword)},
	{Name: "ssl.keystore.location", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "Keystore file of TLS listeners: PEM (key and certificate chain) or PKCS12; read again for new connections when it changes.",
		Validate: validator(TypeString)},
	{Name: "ssl.keystore.password", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "Password of a PKCS12 keystore.",
		Validate: validator(TypePassword)},
	{Name: "ssl.keystore.type", Type: TypeString, Default: "PKCS12", ReadOnly: true, Doc: "Format of the keystore: PKCS12 or PEM (Kafka defaults to JKS, which klog does not read).",
		Validate: validator(TypeString, oneOf("PKCS12", "PEM"))},
	{Name: "ssl.principal.mapping.rules", Type: TypeString, Default: "DEFAULT", ReadOnly: true, Doc: "Rules mapping a client certificate's subject to a principal name: RULE:pattern/replacement/[LU],... then DEFAULT (the subject as is).",
		Validate: validator(TypeString)},
	{Name: "ssl.truststore.certificates", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "Trusted certificates in PEM, inline, with ssl.truststore.type=PEM.",
		Validate: validator(TypePassword)},
	{Name: "ssl.truststore.location", Type: TypeString, NoDefault: true, ReadOnly: true, Doc: "Truststore file (PEM certificates or PKCS12) of the CAs client certificates and other nodes' certificates are checked against; read again for new connections when it changes.",
		Validate: validator(TypeString)},
	{Name: "ssl.truststore.password", Type: TypePassword, NoDefault: true, ReadOnly: true, Doc: "Password of a PKCS12 truststore.",
		Validate: validator(TypePassword)},
	{Name: "ssl.truststore.type", Type: TypeString, Default: "PKCS12", ReadOnly: true, Doc: "Format of the truststore: PKCS12 or PEM (Kafka defaults to JKS, which klog does not read).",
		Validate: validator(TypeString, oneOf("PKCS12", "PEM"))},
	{Name: "super.users", Type: TypeString, Default: "", ReadOnly: true, Doc: "Principals the authorizer allows everything, separated by ';' (User:admin;User:ops).",
		Validate: validator(TypeString)},
	{Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Type: TypeInt, Default: "10000", ReadOnly: true, Doc: "How often the transaction coordinator aborts transactions past their timeout.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "transaction.max.timeout.ms", Type: TypeInt, Default: "900000", ReadOnly: true, Doc: "Largest transaction timeout a producer may ask for.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "transaction.state.log.min.isr", Type: TypeInt, Default: "2", ReadOnly: true, Doc: "min.insync.replicas of __transaction_state.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "transaction.state.log.num.partitions", Type: TypeInt, Default: "50", ReadOnly: true, Doc: "Partition count of __transaction_state.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "transaction.state.log.replication.factor", Type: TypeShort, Default: "3", ReadOnly: true, Doc: "Replication factor of __transaction_state.",
		Validate: validator(TypeShort, atLeast(1))},
	{Name: "transaction.state.log.segment.bytes", Type: TypeInt, Default: "104857600", ReadOnly: true, Doc: "Segment size of __transaction_state.",
		Validate: validator(TypeInt, atLeast(1))},
	{Name: "transactional.id.expiration.ms", Type: TypeInt, Default: "604800000", ReadOnly: true, Doc: "Idle time after which a transactional id expires.",
		Validate: validator(TypeInt, atLeast(1))},
}

// brokerSynonymDefs are the broker keys of topic configs whose type, default
// or validation differ from the topic config they default (other broker keys
// inherit the topic config's definition).
var brokerSynonymDefs = map[string]Def{
	"log.flush.interval.ms": {Type: TypeLong, NoDefault: true, Doc: "Maximum time a message stays unflushed; log.flush.scheduler.interval.ms if unset.",
		Validate: validator(TypeLong, atLeast(0))},
	"log.flush.scheduler.interval.ms": {Type: TypeLong, Default: maxLong, Doc: "How often logs are checked for a needed flush.",
		Validate: validator(TypeLong)},
	"log.retention.ms": {Type: TypeLong, NoDefault: true, Doc: "Log retention in milliseconds; log.retention.minutes if unset.",
		Validate: validator(TypeLong, atLeast(-1))},
	"log.retention.minutes": {Type: TypeInt, NoDefault: true, Doc: "Log retention in minutes; log.retention.hours if unset.",
		Validate: validator(TypeInt)},
	"log.retention.hours": {Type: TypeInt, Default: "168", Doc: "Log retention in hours.",
		Validate: validator(TypeInt)},
	"log.roll.ms": {Type: TypeLong, NoDefault: true, Doc: "Segment roll time in milliseconds; log.roll.hours if unset.",
		Validate: validator(TypeLong, atLeast(1))},
	"log.roll.hours": {Type: TypeInt, Default: "168", Doc: "Segment roll time in hours.",
		Validate: validator(TypeInt, atLeast(1))},
	"log.roll.jitter.ms": {Type: TypeLong, NoDefault: true, Doc: "Segment roll jitter in milliseconds; log.roll.jitter.hours if unset.",
		Validate: validator(TypeLong, atLeast(0))},
	"log.roll.jitter.hours": {Type: TypeInt, Default: "0", Doc: "Segment roll jitter in hours.",
		Validate: validator(TypeInt, atLeast(0))},
}

// registry holds the lookup tables derived from the definition tables.
type registry struct {
	topics       []Def
	topicByName  map[string]int
	brokers      []Def
	brokerByName map[string]int
	// topicBySynonym maps every broker key of a topic config to that config.
	topicBySynonym map[string]string
}

// defs builds the registry once, on first use.
var defs = sync.OnceValue(func() *registry {
	r := &registry{
		topics:         append([]Def(nil), topicDefs...),
		topicByName:    make(map[string]int, len(topicDefs)),
		topicBySynonym: make(map[string]string),
	}
	r.brokers = append([]Def(nil), brokerOnlyDefs...)
	for i := range r.topics {
		td := &r.topics[i]
		r.topicByName[td.Name] = i
		if len(td.synonyms) == 0 {
			continue
		}
		td.BrokerKey = td.synonyms[0].name
		for i, s := range td.synonyms {
			r.topicBySynonym[s.name] = td.Name
			d, ok := brokerSynonymDefs[s.name]
			if !ok {
				d = Def{Type: td.Type, Default: td.Default, Doc: td.Doc, Validate: td.Validate}
			}
			d.Name = s.name
			// The first broker key of a topic config is a dynamic
			// broker config (Kafka's DynamicLogConfig); the others,
			// in other units, are read-only.
			d.ReadOnly = i != 0
			r.brokers = append(r.brokers, d)
		}
	}
	sort.Slice(r.brokers, func(i, j int) bool { return r.brokers[i].Name < r.brokers[j].Name })
	r.brokerByName = make(map[string]int, len(r.brokers))
	for i, d := range r.brokers {
		r.brokerByName[d.Name] = i
	}
	return r
})

// TopicDefs returns every topic config definition, sorted by name.
func TopicDefs() []Def { return append([]Def(nil), defs().topics...) }

// BrokerDefs returns every broker config definition, sorted by name. It
// includes the broker keys that hold topic config defaults.
func BrokerDefs() []Def { return append([]Def(nil), defs().brokers...) }

// LookupTopic returns the topic config named name.
func LookupTopic(name string) (Def, bool) {
	r := defs()
	i, ok := r.topicByName[name]
	if !ok {
		return Def{}, false
	}
	return r.topics[i], true
}

// LookupBroker returns the broker config named name.
func LookupBroker(name string) (Def, bool) {
	r := defs()
	i, ok := r.brokerByName[name]
	if !ok {
		return lookupListenerScoped(name)
	}
	return r.brokers[i], true
}

// ValidateTopicConfigs checks that every name is a topic config and every
// value is valid for it. The error wraps ErrUnknownConfig or ErrInvalidValue
// and names the config; it is meant to be shown to clients.
func ValidateTopicConfigs(overrides map[string]string) error {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := ValidateTopicConfig(n, overrides[n]); err != nil {
			return err
		}
	}
	return nil
}

// javaDouble formats f as Java's Double.toString does: at least one
// fraction digit, and computerized scientific notation outside
// [0.001, 10^7).
func javaDouble(f float64) string {
	if a := math.Abs(f); a == 0 || a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// wireDetail is a validator's message as Kafka's ConfigDef words it.
func wireDetail(err error) string {
	if msg, ok := errmsg.Wire(err); ok {
		return msg
	}
	return err.Error()
}

// ValidateTopicConfig checks one topic config name and value.
func ValidateTopicConfig(name, value string) error {
	d, ok := LookupTopic(name)
	if !ok {
		return errmsg.Withf(fmt.Errorf("%w: %q is not a topic config", ErrUnknownConfig, name),
			"Unknown topic config name: %s", name)
	}
	if err := d.Validate(value); err != nil {
		return invalidValue(d, value, err)
	}
	return nil
}

// invalidValue is the error of value, refused by d's validator with err,
// in Kafka's ConfigException wording; the validators' messages are
// ConfigDef's.
func invalidValue(d Def, value string, err error) error {
	shown := value
	if f, perr := strconv.ParseFloat(strings.TrimSpace(value), 64); d.Type == TypeDouble && perr == nil {
		shown = javaDouble(f) // Kafka shows the parsed value
	}
	return errmsg.Withf(fmt.Errorf("%w: %s=%q: %v", ErrInvalidValue, d.Name, value, err),
		"Invalid value %s for configuration %s: %s", shown, d.Name, wireDetail(err))
}
