package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Settings are a node's broker configs as Go values, resolved from the
// static settings by ParseBroker and with the dynamic ones over them by
// WithDynamic. Request paths read these fields; config names stay in the
// definition tables, for DescribeConfigs, validation and synonyms.
// Settings never change: a dynamic broker config change makes a new
// Broker, which the node swaps in whole. The fields of dynamic configs
// (max.connections, max.connections.per.ip, producer.id.expiration.ms)
// are read at each use, so a change applies live; the others are of
// read-only configs, which keep their value from start.
type Settings struct {
	AutoCreateTopics         bool          // auto.create.topics.enable
	DeleteTopicEnable        bool          // delete.topic.enable
	NumPartitions            int32         // num.partitions
	DefaultReplicationFactor int16         // default.replication.factor
	SocketRequestMaxBytes    int32         // socket.request.max.bytes
	QueuedMaxRequestBytes    int64         // queued.max.request.bytes
	RequestProgressTimeout   time.Duration // socket.request.progress.timeout.ms
	ConnectionsMaxIdle       time.Duration // connections.max.idle.ms; negative means never
	MaxConnections           int32         // max.connections
	MaxConnectionsPerIP      int32         // max.connections.per.ip
	FetchMaxBytes            int32         // fetch.max.bytes
	// MaxIncrementalFetchSessions is max.incremental.fetch.session.cache.slots.
	MaxIncrementalFetchSessions int32
	LogRetentionCheckInterval   time.Duration // log.retention.check.interval.ms
	ProducerIDExpiration        time.Duration // producer.id.expiration.ms
	ProducerIDExpiryCheck       time.Duration // producer.id.expiration.check.interval.ms
	MaxPartitions               int32         // klog.max.partitions: most partition replicas on one node
	NodeID                      int32         // node.id; -1 when not set
	Rack                        string        // broker.rack; "" when not set
	// QuorumVoters is controller.quorum.voters; empty is the single-node
	// quorum.
	QuorumVoters []Voter
	// BrokerHeartbeatInterval and BrokerSessionTimeout drive broker
	// liveness in a quorum of several voters.
	BrokerHeartbeatInterval time.Duration // broker.heartbeat.interval.ms
	BrokerSessionTimeout    time.Duration // broker.session.timeout.ms
	// AutoLeaderRebalance and LeaderImbalanceCheckInterval drive the
	// controller's periodic preferred leader elections.
	AutoLeaderRebalance          bool          // auto.leader.rebalance.enable
	LeaderImbalanceCheckInterval time.Duration // leader.imbalance.check.interval.seconds
	// ConnectionsMaxReauth is connections.max.reauth.ms, the longest
	// session a SASL authentication opens (0: no limit), and
	// FailedAuthenticationDelay connection.failed.authentication.delay.ms.
	ConnectionsMaxReauth      time.Duration
	FailedAuthenticationDelay time.Duration

	// QuotaWindows and QuotaWindow are the window client quota rates
	// are measured over: QuotaWindows windows of QuotaWindow.
	QuotaWindows int32         // quota.window.num
	QuotaWindow  time.Duration // quota.window.size.seconds

	// MaxInflightRequests, QueuedMaxResponseBytesPerConnection and
	// QueuedMaxResponseBytes bound the responses waiting to be written:
	// a connection over them is not read (klog only).
	MaxInflightRequests                 int32 // klog.max.inflight.requests.per.connection
	QueuedMaxResponseBytesPerConnection int64 // klog.queued.max.response.bytes.per.connection
	QueuedMaxResponseBytes              int64 // klog.queued.max.response.bytes
	// ProduceDurable is klog.produce.durable: produces are acknowledged
	// once fsynced.
	ProduceDurable bool
	// LogMaxOpenFiles is klog.max.open.files; 0 leaves the cap to
	// store/log.DefaultMaxOpenFiles.
	LogMaxOpenFiles int32

	// Authorizer is authorizer.class.name and the authorizer's configs.
	Authorizer AuthorizerSettings
	// DelegationToken configures delegation tokens (delegation.token.*).
	DelegationToken DelegationTokenSettings
	Group           GroupSettings
	Transaction     TransactionSettings
	Replica         ReplicaSettings
	// OffsetsTopic and TransactionStateTopic say how the coordinators'
	// internal topics, __consumer_offsets and __transaction_state, are
	// created.
	OffsetsTopic          InternalTopicSettings
	TransactionStateTopic InternalTopicSettings
	Cleaner               CleanerSettings
}

// AuthorizerSettings configure authorization.
type AuthorizerSettings struct {
	// Enabled is authorizer.class.name set to StandardAuthorizer.
	Enabled bool
	// SuperUsers is super.users, split at ';'.
	SuperUsers []string
	// AllowEveryoneIfNoACL is allow.everyone.if.no.acl.found.
	AllowEveryoneIfNoACL bool
}

// DelegationTokenSettings configure delegation tokens (KIP-48).
type DelegationTokenSettings struct {
	// SecretKey is delegation.token.secret.key: "" disables tokens.
	SecretKey   string
	MaxLifetime time.Duration // delegation.token.max.lifetime.ms
	ExpiryTime  time.Duration // delegation.token.expiry.time.ms
	ExpiryCheck time.Duration // delegation.token.expiry.check.interval.ms
}

// CleanerSettings configure the log cleaner (log.cleaner.*).
type CleanerSettings struct {
	Enable            bool          // log.cleaner.enable
	Backoff           time.Duration // log.cleaner.backoff.ms
	DedupeBufferBytes int64         // log.cleaner.dedupe.buffer.size
}

// GroupSettings configure the group coordinator (group.* and offsets.*).
type GroupSettings struct {
	InitialRebalanceDelay         time.Duration // group.initial.rebalance.delay.ms
	MinSessionTimeout             time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout             time.Duration // group.max.session.timeout.ms
	MaxSize                       int32         // group.max.size
	OffsetsRetention              time.Duration // offsets.retention.minutes
	OffsetsRetentionCheckInterval time.Duration // offsets.retention.check.interval.ms
	OffsetsCommitTimeout          time.Duration // offsets.commit.timeout.ms
	ConsumerSessionTimeout        time.Duration // group.consumer.session.timeout.ms
	ConsumerHeartbeatInterval     time.Duration // group.consumer.heartbeat.interval.ms
	ConsumerAssignors             []string      // group.consumer.assignors
	ConsumerMaxSize               int32         // group.consumer.max.size
	Share                         ShareSettings
}

// ShareSettings configure share groups (group.share.*, KIP-932).
type ShareSettings struct {
	DeliveryCountLimit      int32         // group.share.delivery.count.limit
	HeartbeatInterval       time.Duration // group.share.heartbeat.interval.ms
	MaxShareSessions        int32         // group.share.max.share.sessions
	MaxSize                 int32         // group.share.max.size
	PartitionMaxRecordLocks int32         // group.share.partition.max.record.locks
	RecordLockDuration      time.Duration // group.share.record.lock.duration.ms
	SessionTimeout          time.Duration // group.share.session.timeout.ms
}

// ReplicaSettings configure replication (replica.*): the followers'
// fetchers and the leader's view of its followers.
type ReplicaSettings struct {
	FetchMaxBytes         int32         // replica.fetch.max.bytes
	FetchResponseMaxBytes int32         // replica.fetch.response.max.bytes
	FetchWaitMax          time.Duration // replica.fetch.wait.max.ms
	FetchBackoff          time.Duration // replica.fetch.backoff.ms
	SocketTimeout         time.Duration // replica.socket.timeout.ms
	LagTimeMax            time.Duration // replica.lag.time.max.ms
	// RackAwareSelector is whether replica.selector.class is Kafka's
	// RackAwareReplicaSelector, the one selector klog knows: the leader
	// then sends consumers to an in-sync replica in their rack (KIP-392).
	RackAwareSelector bool
	// HighWatermarkCheckpointInterval is
	// replica.high.watermark.checkpoint.interval.ms.
	HighWatermarkCheckpointInterval time.Duration
}

// RackAwareReplicaSelector is the value of replica.selector.class that
// turns rack-aware follower fetching on, Kafka's class name.
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

// TransactionSettings configure the transaction coordinator.
type TransactionSettings struct {
	MaxTimeout                time.Duration // transaction.max.timeout.ms
	AbortTimedOutInterval     time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms
	TransactionalIDExpiration time.Duration // transactional.id.expiration.ms
}

// InternalTopicSettings say how an internal topic is created.
type InternalTopicSettings struct {
	Partitions        int32 // *.num.partitions
	ReplicationFactor int16 // *.replication.factor
	SegmentBytes      int32 // *.segment.bytes
	// MinISR is the topic's min.insync.replicas (transaction.state.log.min.isr);
	// 0 when the topic has no such setting and keeps the default.
	MinISR int32
}

// Topic holds a topic's configs as Go values, resolved as TopicValue
// resolves each: the topic's override, else the broker's dynamic
// per-broker value, dynamic cluster default or static value, else the
// default. Times stay int64 milliseconds rather than
// time.Duration: Kafka's sentinels (-1 for unlimited, Long.MAX_VALUE for
// never) do not survive the conversion, and the log takes milliseconds.
type Topic struct {
	MinInsyncReplicas    int32 // min.insync.replicas
	SegmentBytes         int32 // segment.bytes
	InternalSegmentBytes int32 // internal.segment.bytes, in SegmentBytes's place; 0 while unset
	SegmentMs            int64 // segment.ms
	IndexIntervalBytes   int32 // index.interval.bytes
	SegmentIndexBytes    int32 // segment.index.bytes
	RetentionMs          int64 // retention.ms
	RetentionBytes       int64 // retention.bytes
	FlushMessages        int64 // flush.messages
	FlushMs              int64 // flush.ms
	MaxMessageBytes      int32 // max.message.bytes
	LogAppendTime        bool  // message.timestamp.type is LogAppendTime
	TimestampBeforeMaxMs int64 // message.timestamp.before.max.ms
	TimestampAfterMaxMs  int64 // message.timestamp.after.max.ms
	// CleanupPolicy is cleanup.policy: "delete", "compact" or both.
	CleanupPolicy []string
	// The log cleaner's: min.cleanable.dirty.ratio,
	// min.compaction.lag.ms, max.compaction.lag.ms, delete.retention.ms.
	MinCleanableDirtyRatio float64
	MinCompactionLagMs     int64
	MaxCompactionLagMs     int64
	DeleteRetentionMs      int64
	// UncleanLeaderElection is unclean.leader.election.enable: the
	// controller may elect a replica outside the ISR when none in it is
	// left.
	UncleanLeaderElection bool
}

// Settings returns the node's broker settings. The result is shared and
// must not be modified.
func (b *Broker) Settings() *Settings { return &b.settings }

// Topic resolves the configs of a topic with the given overrides. The
// error reports an override that does not parse as its config's type,
// which validation before every change rules out; the field is then 0.
func (b *Broker) Topic(overrides map[string]string) (Topic, error) {
	r := &binder{
		lookup: LookupTopic,
		value:  func(d Def) Value { return b.resolveTopic(d, overrides) },
	}
	t := bindTopic(r)
	return t, r.err()
}

func bindSettings(r *binder) Settings {
	return Settings{
		AutoCreateTopics:             r.bool("auto.create.topics.enable"),
		DeleteTopicEnable:            r.bool("delete.topic.enable"),
		NumPartitions:                r.int32("num.partitions"),
		DefaultReplicationFactor:     r.int16("default.replication.factor"),
		SocketRequestMaxBytes:        r.int32("socket.request.max.bytes"),
		QueuedMaxRequestBytes:        r.int64("queued.max.request.bytes"),
		RequestProgressTimeout:       r.ms("socket.request.progress.timeout.ms"),
		ConnectionsMaxIdle:           r.ms("connections.max.idle.ms"),
		MaxConnections:               r.int32("max.connections"),
		MaxConnectionsPerIP:          r.int32("max.connections.per.ip"),
		FetchMaxBytes:                r.int32("fetch.max.bytes"),
		MaxIncrementalFetchSessions:  r.int32("max.incremental.fetch.session.cache.slots"),
		LogRetentionCheckInterval:    r.ms("log.retention.check.interval.ms"),
		ProducerIDExpiration:         r.ms("producer.id.expiration.ms"),
		ProducerIDExpiryCheck:        r.ms("producer.id.expiration.check.interval.ms"),
		MaxPartitions:                r.int32("klog.max.partitions"),
		NodeID:                       r.int32("node.id"),
		Rack:                         r.optional("broker.rack", TypeString),
		QuorumVoters:                 r.voters("controller.quorum.voters"),
		BrokerHeartbeatInterval:      r.ms("broker.heartbeat.interval.ms"),
		BrokerSessionTimeout:         r.ms("broker.session.timeout.ms"),
		AutoLeaderRebalance:          r.bool("auto.leader.rebalance.enable"),
		LeaderImbalanceCheckInterval: r.duration("leader.imbalance.check.interval.seconds", ".seconds", time.Second),
		ConnectionsMaxReauth:         r.ms("connections.max.reauth.ms"),
		FailedAuthenticationDelay:    r.ms("connection.failed.authentication.delay.ms"),

		QuotaWindows: r.int32("quota.window.num"),
		QuotaWindow:  r.duration("quota.window.size.seconds", ".seconds", time.Second),

		MaxInflightRequests:                 r.int32("klog.max.inflight.requests.per.connection"),
		QueuedMaxResponseBytesPerConnection: r.int64("klog.queued.max.response.bytes.per.connection"),
		QueuedMaxResponseBytes:              r.int64("klog.queued.max.response.bytes"),
		LogMaxOpenFiles:                     r.int32("klog.max.open.files"),
		ProduceDurable:                      r.bool("klog.produce.durable"),
		Authorizer:                          bindAuthorizer(r),
		DelegationToken: DelegationTokenSettings{
			SecretKey:   r.optional("delegation.token.secret.key", TypePassword),
			MaxLifetime: r.ms("delegation.token.max.lifetime.ms"),
			ExpiryTime:  r.ms("delegation.token.expiry.time.ms"),
			ExpiryCheck: r.ms("delegation.token.expiry.check.interval.ms"),
		},
		Group:   bindGroup(r),
		Replica: bindReplica(r),
		Transaction: TransactionSettings{
			MaxTimeout:                r.ms("transaction.max.timeout.ms"),
			AbortTimedOutInterval:     r.ms("transaction.abort.timed.out.transaction.cleanup.interval.ms"),
			TransactionalIDExpiration: r.ms("transactional.id.expiration.ms"),
		},
		OffsetsTopic: InternalTopicSettings{
			Partitions:        r.int32("offsets.topic.num.partitions"),
			ReplicationFactor: r.int16("offsets.topic.replication.factor"),
			SegmentBytes:      r.int32("offsets.topic.segment.bytes"),
		},
		TransactionStateTopic: InternalTopicSettings{
			Partitions:        r.int32("transaction.state.log.num.partitions"),
			ReplicationFactor: r.int16("transaction.state.log.replication.factor"),
			SegmentBytes:      r.int32("transaction.state.log.segment.bytes"),
			MinISR:            r.int32("transaction.state.log.min.isr"),
		},
		Cleaner: CleanerSettings{
			Enable:            r.bool("log.cleaner.enable"),
			Backoff:           r.ms("log.cleaner.backoff.ms"),
			DedupeBufferBytes: r.int64("log.cleaner.dedupe.buffer.size"),
		},
	}
}

// bindGroup binds the group coordinator's settings.
func bindGroup(r *binder) GroupSettings {
	return GroupSettings{
		InitialRebalanceDelay:         r.ms("group.initial.rebalance.delay.ms"),
		MinSessionTimeout:             r.ms("group.min.session.timeout.ms"),
		MaxSessionTimeout:             r.ms("group.max.session.timeout.ms"),
		MaxSize:                       r.int32("group.max.size"),
		OffsetsRetention:              r.minutes("offsets.retention.minutes"),
		OffsetsRetentionCheckInterval: r.ms("offsets.retention.check.interval.ms"),
		OffsetsCommitTimeout:          r.ms("offsets.commit.timeout.ms"),
		ConsumerSessionTimeout:        r.ms("group.consumer.session.timeout.ms"),
		ConsumerHeartbeatInterval:     r.ms("group.consumer.heartbeat.interval.ms"),
		ConsumerAssignors:             r.list("group.consumer.assignors"),
		ConsumerMaxSize:               r.int32("group.consumer.max.size"),
		Share: ShareSettings{
			DeliveryCountLimit:      r.int32("group.share.delivery.count.limit"),
			HeartbeatInterval:       r.ms("group.share.heartbeat.interval.ms"),
			MaxShareSessions:        r.int32("group.share.max.share.sessions"),
			MaxSize:                 r.int32("group.share.max.size"),
			PartitionMaxRecordLocks: r.int32("group.share.partition.max.record.locks"),
			RecordLockDuration:      r.ms("group.share.record.lock.duration.ms"),
			SessionTimeout:          r.ms("group.share.session.timeout.ms"),
		},
	}
}

// bindReplica binds the followers' fetch settings.
func bindReplica(r *binder) ReplicaSettings {
	return ReplicaSettings{
		FetchMaxBytes:                   r.int32("replica.fetch.max.bytes"),
		FetchResponseMaxBytes:           r.int32("replica.fetch.response.max.bytes"),
		FetchWaitMax:                    r.ms("replica.fetch.wait.max.ms"),
		FetchBackoff:                    r.ms("replica.fetch.backoff.ms"),
		SocketTimeout:                   r.ms("replica.socket.timeout.ms"),
		LagTimeMax:                      r.ms("replica.lag.time.max.ms"),
		HighWatermarkCheckpointInterval: r.ms("replica.high.watermark.checkpoint.interval.ms"),
		RackAwareSelector:               r.optional("replica.selector.class", TypeClass) == RackAwareReplicaSelector,
	}
}

func bindTopic(r *binder) Topic {
	return Topic{
		MinInsyncReplicas:     r.int32("min.insync.replicas"),
		SegmentBytes:          r.int32("segment.bytes"),
		InternalSegmentBytes:  r.optionalInt32("internal.segment.bytes"),
		SegmentMs:             r.int64("segment.ms"),
		IndexIntervalBytes:    r.int32("index.interval.bytes"),
		SegmentIndexBytes:     r.int32("segment.index.bytes"),
		RetentionMs:           r.int64("retention.ms"),
		RetentionBytes:        r.int64("retention.bytes"),
		FlushMessages:         r.int64("flush.messages"),
		FlushMs:               r.int64("flush.ms"),
		MaxMessageBytes:       r.int32("max.message.bytes"),
		LogAppendTime:         strings.EqualFold(r.string("message.timestamp.type"), "LogAppendTime"),
		TimestampBeforeMaxMs:  r.int64("message.timestamp.before.max.ms"),
		TimestampAfterMaxMs:   r.int64("message.timestamp.after.max.ms"),
		CleanupPolicy:         r.list("cleanup.policy"),
		UncleanLeaderElection: r.bool("unclean.leader.election.enable"),

		MinCleanableDirtyRatio: r.float64("min.cleanable.dirty.ratio"),
		MinCompactionLagMs:     r.int64("min.compaction.lag.ms"),
		MaxCompactionLagMs:     r.int64("max.compaction.lag.ms"),
		DeleteRetentionMs:      r.int64("delete.retention.ms"),
	}
}

// binder reads configs by name into typed fields. Every read looks the
// name up in the definitions and checks that the field's Go type can hold
// the config's type, so a misspelt or mistyped binding fails resolution
// (and the tests that resolve the defaults) instead of reading as zero.
type binder struct {
	lookup func(name string) (Def, bool)
	value  func(Def) Value
	errs   []error
}

func (r *binder) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("resolve configs: %w", errors.Join(r.errs...))
}

// raw returns the value of config name, which must be of one of types.
func (r *binder) raw(name string, types ...Type) (string, bool) {
	d, ok := r.lookup(name)
	if !ok {
		r.errs = append(r.errs, fmt.Errorf("%w: %q is not a defined config", ErrUnknownConfig, name))
		return "", false
	}
	if !slices.Contains(types, d.Type) {
		r.errs = append(r.errs, fmt.Errorf("%w: %q is a %s config", ErrBinding, name, d.Type))
		return "", false
	}
	v := r.value(d)
	if v.Null {
		r.errs = append(r.errs, fmt.Errorf("%w: %q has no value", ErrBinding, name))
		return "", false
	}
	return strings.TrimSpace(v.Value), true
}

func (r *binder) bool(name string) bool {
	v, ok := r.raw(name, TypeBoolean)
	if !ok {
		return false
	}
	t, err := parseBool(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%w: %s: %v", ErrInvalidValue, name, err))
	}
	return t
}

func (r *binder) string(name string) string {
	v, _ := r.raw(name, TypeString)
	return v
}

// bindAuthorizer reads the authorizer's configs.
func bindAuthorizer(r *binder) AuthorizerSettings {
	return AuthorizerSettings{
		Enabled:              strings.TrimSpace(r.string("authorizer.class.name")) == StandardAuthorizer,
		SuperUsers:           splitSuperUsers(r.string("super.users")),
		AllowEveryoneIfNoACL: r.bool("allow.everyone.if.no.acl.found"),
	}
}

// splitSuperUsers splits super.users: principals separated by ';'.
func splitSuperUsers(v string) []string {
	var out []string
	for p := range strings.SplitSeq(v, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// optional reads a config with no default (NoDefault) of type t: "" while
// it is null.
func (r *binder) optional(name string, t Type) string {
	d, ok := r.lookup(name)
	if ok && d.NoDefault && r.value(d).Null {
		return ""
	}
	v, _ := r.raw(name, t)
	return v
}

// optionalInt32 reads an INT config with no default: 0 while it is null.
func (r *binder) optionalInt32(name string) int32 {
	if r.optional(name, TypeInt) == "" {
		return 0
	}
	return r.int32(name)
}

// voters reads controller.quorum.voters.
func (r *binder) voters(name string) []Voter {
	v, ok := r.raw(name, TypeList)
	if !ok {
		return nil
	}
	vs, err := ParseVoters(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%w: %s: %v", ErrInvalidValue, name, err))
	}
	return vs
}

func (r *binder) list(name string) []string {
	v, _ := r.raw(name, TypeList)
	return splitList(v)
}

// integer parses an integer config into a field of the given bit size.
func (r *binder) integer(name string, bits int) int64 {
	v, ok := r.raw(name, TypeShort, TypeInt, TypeLong)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%w: %s=%q does not fit %d bits", ErrInvalidValue, name, v, bits))
		return 0
	}
	return n
}

// float64 parses a double config.
func (r *binder) float64(name string) float64 {
	v, ok := r.raw(name, TypeDouble)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%w: %s=%q is not a number", ErrInvalidValue, name, v))
	}
	return f
}

func (r *binder) int16(name string) int16 { return int16(r.integer(name, 16)) }
func (r *binder) int32(name string) int32 { return int32(r.integer(name, 32)) }
func (r *binder) int64(name string) int64 { return r.integer(name, 64) }

// ms reads a config in milliseconds (its name ends in .ms) as a duration.
func (r *binder) ms(name string) time.Duration { return r.duration(name, ".ms", time.Millisecond) }

// minutes reads a config in minutes (its name ends in .minutes).
func (r *binder) minutes(name string) time.Duration {
	return r.duration(name, ".minutes", time.Minute)
}

func (r *binder) duration(name, suffix string, unit time.Duration) time.Duration {
	if !strings.HasSuffix(name, suffix) {
		r.errs = append(r.errs, fmt.Errorf("%w: %q is not in %s", ErrBinding, name, strings.TrimPrefix(suffix, ".")))
		return 0
	}
	return time.Duration(saturatingMul(r.int64(name), int64(unit)))
}
