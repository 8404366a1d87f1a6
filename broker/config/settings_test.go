package config

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/errmsg"
)

// topic resolves a topic's typed configs and fails the test on an error.
func topic(t *testing.T, b *Broker, overrides map[string]string) Topic {
	t.Helper()
	tc, err := b.Topic(overrides)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// TestSettingsDefaults resolves the defaults: a field bound to a name that
// is not a defined config, or to one it cannot hold, fails ParseBroker, and
// a field bound to the wrong config shows as a wrong value here.
func TestSettingsDefaults(t *testing.T) {
	b, err := ParseBroker(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		AutoCreateTopics:             true,
		DeleteTopicEnable:            true,
		NumPartitions:                1,
		DefaultReplicationFactor:     1,
		SocketRequestMaxBytes:        104857600,
		QueuedMaxRequestBytes:        104857600,
		RequestProgressTimeout:       10 * time.Second,
		ConnectionsMaxIdle:           10 * time.Minute,
		MaxConnections:               2147483647,
		MaxConnectionsPerIP:          2147483647,
		FetchMaxBytes:                57671680,
		MaxIncrementalFetchSessions:  1000,
		LogRetentionCheckInterval:    5 * time.Minute,
		ProducerIDExpiration:         24 * time.Hour,
		ProducerIDExpiryCheck:        10 * time.Minute,
		MaxPartitions:                10000,
		NodeID:                       -1,
		BrokerHeartbeatInterval:      2 * time.Second,
		BrokerSessionTimeout:         9 * time.Second,
		AutoLeaderRebalance:          true,
		LeaderImbalanceCheckInterval: 300 * time.Second,
		FailedAuthenticationDelay:    100 * time.Millisecond,
		QuotaWindows:                 11,
		QuotaWindow:                  time.Second,

		MaxInflightRequests:                 5,
		QueuedMaxResponseBytesPerConnection: 1 << 20,
		QueuedMaxResponseBytes:              100 << 20,
		// Kafka's DelegationTokenManagerConfigs defaults; no secret key.
		DelegationToken: DelegationTokenSettings{MaxLifetime: 7 * 24 * time.Hour, ExpiryTime: 24 * time.Hour, ExpiryCheck: time.Hour},
		Group: GroupSettings{
			InitialRebalanceDelay:         0,
			MinSessionTimeout:             6 * time.Second,
			MaxSessionTimeout:             30 * time.Minute,
			MaxSize:                       math.MaxInt32,
			OffsetsRetention:              7 * 24 * time.Hour,
			OffsetsRetentionCheckInterval: 10 * time.Minute,
			OffsetsCommitTimeout:          5 * time.Second,
			ConsumerSessionTimeout:        45 * time.Second,
			ConsumerHeartbeatInterval:     5 * time.Second,
			ConsumerAssignors:             []string{"uniform", "range"},
			ConsumerMaxSize:               math.MaxInt32,
			Share: ShareSettings{DeliveryCountLimit: 5, HeartbeatInterval: 5 * time.Second, MaxShareSessions: 2000, MaxSize: 200,
				PartitionMaxRecordLocks: 2000, RecordLockDuration: 30 * time.Second, SessionTimeout: 45 * time.Second},
		},
		Transaction: TransactionSettings{
			MaxTimeout:                15 * time.Minute,
			AbortTimedOutInterval:     10 * time.Second,
			TransactionalIDExpiration: 7 * 24 * time.Hour,
		},
		Replica: ReplicaSettings{
			FetchMaxBytes:                   1 << 20,
			FetchResponseMaxBytes:           10 << 20,
			FetchWaitMax:                    500 * time.Millisecond,
			FetchBackoff:                    time.Second,
			SocketTimeout:                   30 * time.Second,
			LagTimeMax:                      30 * time.Second,
			HighWatermarkCheckpointInterval: 5 * time.Second,
		},
		OffsetsTopic:          InternalTopicSettings{Partitions: 50, ReplicationFactor: 3, SegmentBytes: 104857600},
		TransactionStateTopic: InternalTopicSettings{Partitions: 50, ReplicationFactor: 3, SegmentBytes: 104857600, MinISR: 2},
		Cleaner:               CleanerSettings{Enable: true, Backoff: 15 * time.Second, DedupeBufferBytes: 128 << 20},
	}
	if got := *b.Settings(); !reflect.DeepEqual(got, want) {
		t.Errorf("default settings\n got %+v\nwant %+v", got, want)
	}
	if got := *DefaultBroker().Settings(); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultBroker settings\n got %+v\nwant %+v", got, want)
	}

	wantTopic := Topic{
		MinInsyncReplicas:    1,
		SegmentBytes:         1073741824,
		SegmentMs:            604800000,
		IndexIntervalBytes:   4096,
		SegmentIndexBytes:    10485760,
		RetentionMs:          604800000,
		RetentionBytes:       -1,
		FlushMessages:        math.MaxInt64,
		FlushMs:              math.MaxInt64,
		MaxMessageBytes:      1048588,
		TimestampBeforeMaxMs: math.MaxInt64,
		TimestampAfterMaxMs:  3600000,
		CleanupPolicy:        []string{"delete"},

		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLagMs:     math.MaxInt64,
		DeleteRetentionMs:      86400000,
	}
	if got := topic(t, b, nil); !reflect.DeepEqual(got, wantTopic) {
		t.Errorf("default topic\n got %+v\nwant %+v", got, wantTopic)
	}
}

func TestSettingsFromStatic(t *testing.T) {
	b, err := ParseBroker(map[string]string{
		"offsets.retention.minutes":       "2",
		"group.consumer.assignors":        "range",
		"transaction.max.timeout.ms":      "1000",
		"offsets.topic.num.partitions":    "3",
		"log.retention.hours":             "1",
		"log.message.timestamp.type":      "LogAppendTime",
		"min.insync.replicas":             "2",
		"log.retention.check.interval.ms": "9223372036854775807",
	})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Settings()
	if s.Group.OffsetsRetention != 2*time.Minute {
		t.Errorf("offsets retention %v", s.Group.OffsetsRetention)
	}
	if !reflect.DeepEqual(s.Group.ConsumerAssignors, []string{"range"}) {
		t.Errorf("assignors %q", s.Group.ConsumerAssignors)
	}
	if s.Transaction.MaxTimeout != time.Second {
		t.Errorf("transaction max timeout %v", s.Transaction.MaxTimeout)
	}
	if s.OffsetsTopic.Partitions != 3 {
		t.Errorf("offsets topic partitions %d", s.OffsetsTopic.Partitions)
	}
	if s.LogRetentionCheckInterval != math.MaxInt64 {
		t.Errorf("an interval past time.Duration's range saturates, got %v", s.LogRetentionCheckInterval)
	}
	tc := topic(t, b, nil)
	if tc.RetentionMs != 3600000 || !tc.LogAppendTime || tc.MinInsyncReplicas != 2 {
		t.Errorf("topic from broker keys %+v", tc)
	}
	tc = topic(t, b, map[string]string{"retention.ms": "5", "message.timestamp.type": "CreateTime", "min.insync.replicas": "3"})
	if tc.RetentionMs != 5 || tc.LogAppendTime || tc.MinInsyncReplicas != 3 {
		t.Errorf("topic from overrides %+v", tc)
	}
}

// TestBinderRefusesBadBindings: a binding to an unknown name, to a config
// of another type or unit, or to one without a value is an error, not 0.
func TestBinderRefusesBadBindings(t *testing.T) {
	b := DefaultBroker()
	for _, tc := range []struct {
		name string
		bind func(r *binder)
		want error
	}{
		{"unknown", func(r *binder) { r.int32("num.partition") }, ErrUnknownConfig},
		{"bool from int", func(r *binder) { r.bool("num.partitions") }, ErrBinding},
		{"int from list", func(r *binder) { r.int64("group.consumer.assignors") }, ErrBinding},
		{"ms from minutes", func(r *binder) { r.ms("offsets.retention.minutes") }, ErrBinding},
		{"no value", func(r *binder) { r.int64("log.retention.ms") }, ErrBinding},
		{"too wide", func(r *binder) { r.int16("group.max.size") }, ErrInvalidValue},
	} {
		r := &binder{lookup: LookupBroker, value: b.brokerValue}
		tc.bind(r)
		if err := r.err(); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	r := &binder{lookup: LookupTopic, value: func(d Def) Value { return b.resolveTopic(d, nil) }}
	r.int32("log.retention.ms") // a broker key, not a topic config
	if err := r.err(); !errors.Is(err, ErrUnknownConfig) {
		t.Errorf("broker key bound as a topic config: %v", err)
	}
	if _, err := b.Topic(map[string]string{"segment.bytes": "x"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("unparsable override: %v", err)
	}
}

func TestQuorumVoters(t *testing.T) {
	b, err := ParseBroker(map[string]string{"node.id": "2", "controller.quorum.voters": "1@127.0.0.1:9093, 2@localhost:9094,3@[::1]:9095"})
	if err != nil {
		t.Fatal(err)
	}
	s := b.Settings()
	want := []Voter{{1, "127.0.0.1", 9093}, {2, "localhost", 9094}, {3, "::1", 9095}}
	if s.NodeID != 2 || !slices.Equal(s.QuorumVoters, want) {
		t.Errorf("node %d voters %v", s.NodeID, s.QuorumVoters)
	}
	if got := s.QuorumVoters[2].String(); got != "3@[::1]:9095" {
		t.Errorf("String %q", got)
	}
	if d := DefaultBroker().Settings(); d.NodeID != -1 || len(d.QuorumVoters) != 0 {
		t.Errorf("defaults: node %d voters %v", d.NodeID, d.QuorumVoters)
	}
	for _, tc := range []struct {
		kv   map[string]string
		want string // Kafka's words, from errmsg
	}{
		{map[string]string{"controller.quorum.voters": "1-127.0.0.1:9093"}, "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		{map[string]string{"controller.quorum.voters": "x@127.0.0.1:9093"}, "Failed to parse voter ID as an integer from x"},
		{map[string]string{"controller.quorum.voters": "1@:9093"}, "Failed to parse host name from entry 1@:9093 for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		{map[string]string{"controller.quorum.voters": "1@localhost"}, "Failed to parse host name from entry 1@localhost for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		{map[string]string{"controller.quorum.voters": "1@localhost:x"}, "Failed to parse host port from entry 1@localhost:x for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		{map[string]string{"controller.quorum.voters": "1@0.0.0.0:9093"}, "Host string (0.0.0.0) is not routeable"},
		{map[string]string{"controller.quorum.voters": "1@a:1,1@b:2"}, "Duplicate voter id 1 in controller.quorum.voters"},
	} {
		if _, err := ParseBroker(tc.kv); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%v: %v", tc.kv, err)
		}
		_, err := ParseVoters(tc.kv["controller.quorum.voters"])
		if msg, _ := errmsg.Wire(err); msg != tc.want {
			t.Errorf("%v: %v (message %q)", tc.kv, err, msg)
		}
	}
	if _, err := ParseBroker(map[string]string{"controller.quorum.voters": "1@a:1,2@b:2"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("voters without node.id: %v", err)
	}
	// A node.id outside the voters is a broker-only node.
	if b, err := ParseBroker(map[string]string{"node.id": "3", "controller.quorum.voters": "1@a:1,2@b:2"}); err != nil || b.Settings().NodeID != 3 {
		t.Errorf("broker-only node: %v", err)
	}
}

// TestRackSettings: broker.rack and replica.selector.class are unset by
// default (Kafka: null, the leader serves every fetch); the selector takes
// Kafka's RackAwareReplicaSelector and refuses any other class as Kafka
// refuses one it cannot load.
func TestRackSettings(t *testing.T) {
	if d := DefaultBroker().Settings(); d.Rack != "" || d.Replica.RackAwareSelector {
		t.Errorf("defaults: rack %q, rack-aware selector %v", d.Rack, d.Replica.RackAwareSelector)
	}
	b, err := ParseBroker(map[string]string{"broker.rack": "r2", "replica.selector.class": " " + RackAwareReplicaSelector})
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Settings(); s.Rack != "r2" || !s.Replica.RackAwareSelector {
		t.Errorf("rack %q, rack-aware selector %v", s.Rack, s.Replica.RackAwareSelector)
	}
	const other = "com.example.NearestReplicaSelector"
	if _, err := ParseBroker(map[string]string{"replica.selector.class": other}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("unknown selector: %v", err)
	}
	d, _ := LookupBroker("replica.selector.class")
	if msg, _ := errmsg.Wire(d.Validate(other)); msg != "Class "+other+" could not be found." {
		t.Errorf("unknown selector refused with %q", msg)
	}
}

// TestAuthorizerSettings checks that authorizer.class.name turns the
// StandardAuthorizer on, refuses a class klog does not have, and that
// super.users splits at ';'.
func TestAuthorizerSettings(t *testing.T) {
	if d := DefaultBroker().Settings().Authorizer; d.Enabled || d.AllowEveryoneIfNoACL || len(d.SuperUsers) != 0 {
		t.Errorf("defaults: %+v", d)
	}
	b, err := ParseBroker(map[string]string{"authorizer.class.name": StandardAuthorizer,
		"super.users": "User:admin; User:ops;", "allow.everyone.if.no.acl.found": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if a := b.Settings().Authorizer; !a.Enabled || !a.AllowEveryoneIfNoACL || !slices.Equal(a.SuperUsers, []string{"User:admin", "User:ops"}) {
		t.Errorf("settings: %+v", a)
	}
	if _, err := ParseBroker(map[string]string{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("unknown authorizer: %v", err)
	}
}

// TestDelegationTokenSettings checks the delegation.token.* configs bind,
// the secret key is never shown, and a lifetime must be positive.
func TestDelegationTokenSettings(t *testing.T) {
	b, err := ParseBroker(map[string]string{"delegation.token.secret.key": "s3cret",
		"delegation.token.max.lifetime.ms": "1000", "delegation.token.expiry.time.ms": "500", "delegation.token.expiry.check.interval.ms": "10"})
	if err != nil {
		t.Fatal(err)
	}
	want := DelegationTokenSettings{SecretKey: "s3cret", MaxLifetime: time.Second, ExpiryTime: 500 * time.Millisecond, ExpiryCheck: 10 * time.Millisecond}
	if got := b.Settings().DelegationToken; got != want {
		t.Errorf("settings %+v, want %+v", got, want)
	}
	if v, ok := b.BrokerValue("delegation.token.secret.key"); !ok || !v.Sensitive || v.Value != "" {
		t.Errorf("the secret key is described as %+v", v)
	}
	if _, err := ParseBroker(map[string]string{"delegation.token.max.lifetime.ms": "0"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("a lifetime of 0: %v", err)
	}
}
