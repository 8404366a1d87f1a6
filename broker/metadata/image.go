package metadata

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/klogdev/klog/broker/errmsg"
)

// Image is an immutable view of the cluster metadata. Nothing reachable
// from an Image may be modified: Apply builds new images that share
// unchanged parts with old ones, and readers hold images without locks.
type Image struct {
	// ClusterID is the cluster's ID, set once ("" until then).
	ClusterID string
	// Controller is the node ID of the active controller, -1 if unknown.
	Controller int32
	// Brokers are the registered brokers by ID.
	Brokers map[int32]Broker
	// Topics are the topics by name.
	Topics map[string]*Topic
	// TopicIDs maps topic IDs to names.
	TopicIDs map[[16]byte]string
	// BrokerConfigs are the dynamic broker configs by broker resource
	// name: a node id ("1") for one broker's, "" for the cluster-wide
	// defaults. Values are as set; resolution is broker/config's.
	BrokerConfigs map[string]map[string]string
	// ClientMetrics are the client metrics resources (KIP-714
	// subscriptions) by name, each with its configs; a resource exists
	// while it has configs. At most MaxClientMetricsResources.
	ClientMetrics map[string]map[string]string
	// SCRAMCredentials are the users' SCRAM credentials by user, then
	// by mechanism; nil when there are none.
	SCRAMCredentials map[string]map[string]SCRAMCredential
	// ClientQuotas are the client quotas by entity: each entity's quota
	// keys (producer_byte_rate, ...) and their values.
	ClientQuotas map[QuotaEntity]map[string]float64
	// DelegationTokens are the delegation tokens by id; nil when there
	// are none.
	DelegationTokens map[string]DelegationToken
	// FeatureLevels are the finalized feature levels UpdateFeatures set,
	// by feature name; a feature not here is at its default level
	// (FeatureLevel). nil when none was set.
	FeatureLevels map[string]int16
	// NextProducerID is the first producer ID of the next block to hand out.
	NextProducerID int64
	// ACLs are the ACL bindings (nil when there are none).
	ACLs *ACLs
	// Index is the Raft index of the last applied record.
	Index uint64
}

// Broker is a registered broker. Fenced is set when its session expired
// (until it heartbeats again), ShuttingDown while it is in a controlled
// shutdown (until it registers again at its next start); Kafka keeps
// these in FenceBroker, UnfenceBroker and BrokerRegistrationChange
// records, klog in the registration.
//
// Incarnation is the random ID of the process that registered, new at
// each start, as Kafka's BrokerRegistration IncarnationId: a registration
// of a new incarnation replaces the previous one fenced
// (RegisterBrokerRecord.apply), so that a restarted node, whose log may be shorter than what it
// acknowledged before, neither leads nor stays in an ISR on the strength
// of its previous run. UncleanShutdown says the new incarnation found no
// clean-shutdown marker in its data directory (Kafka's
// .kafka_cleanshutdown): its logs were recovered and may have lost a tail.
type Broker struct {
	ID              int32  `json:"id"`
	Host            string `json:"host"`
	Port            int32  `json:"port"`
	Rack            string `json:"rack,omitempty"`
	Fenced          bool   `json:"fenced,omitempty"`
	ShuttingDown    bool   `json:"shuttingDown,omitempty"`
	Incarnation     UUID   `json:"incarnation,omitzero"`
	UncleanShutdown bool   `json:"uncleanShutdown,omitempty"`
	// Endpoints are the broker's listeners as clients reach them, as
	// Kafka's RegisterBrokerRecord lists them; Host and Port are the
	// first's. A registration without them (one written before brokers
	// had several listeners) has the one listener PLAINTEXT at Host and
	// Port.
	Endpoints []Endpoint `json:"endpoints,omitempty"`
}

// Endpoint is one listener of a broker, as its clients reach it.
type Endpoint struct {
	// Name is the listener's name (PLAINTEXT, CLIENT).
	Name string `json:"name"`
	Host string `json:"host"`
	Port int32  `json:"port"`
	// Protocol is the listener's security protocol (PLAINTEXT, SSL,
	// SASL_PLAINTEXT, SASL_SSL).
	Protocol string `json:"protocol"`
}

// Addr is the broker's Kafka address, host:port.
func (b Broker) Addr() string { return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) }

// Equal reports whether b and o are the same registration.
func (b Broker) Equal(o Broker) bool {
	return b.ID == o.ID && b.Host == o.Host && b.Port == o.Port && b.Rack == o.Rack && b.Fenced == o.Fenced &&
		b.ShuttingDown == o.ShuttingDown && b.Incarnation == o.Incarnation && b.UncleanShutdown == o.UncleanShutdown &&
		slices.Equal(b.Endpoints, o.Endpoints)
}

// Endpoint returns the broker's endpoint of listener, as Kafka answers a
// request that came on that listener; false when the broker has no
// listener of that name.
func (b Broker) Endpoint(listener string) (Endpoint, bool) {
	if len(b.Endpoints) == 0 {
		return Endpoint{Name: "PLAINTEXT", Host: b.Host, Port: b.Port, Protocol: "PLAINTEXT"}, listener == "PLAINTEXT"
	}
	for _, e := range b.Endpoints {
		if e.Name == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

// EndpointAddr is the host:port of the broker's endpoint of listener.
func (b Broker) EndpointAddr(listener string) (string, bool) {
	e, ok := b.Endpoint(listener)
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))), ok
}

// Active reports whether the broker may lead, join an ISR or get new
// replicas: neither fenced nor shutting down.
func (b Broker) Active() bool { return !b.Fenced && !b.ShuttingDown }

// Topic is one topic. Partitions are indexed by partition number.
type Topic struct {
	Name       string
	ID         [16]byte
	Partitions []Partition
	// Configs holds the topic's config overrides only; resolved values
	// come from broker/config.
	Configs  map[string]string
	Internal bool
}

// Partition is one partition's replica state.
type Partition struct {
	Index          int32   `json:"index"`
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leaderEpoch"`
	PartitionEpoch int32   `json:"partitionEpoch"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	// AddingReplicas and RemovingReplicas are set while a reassignment
	// (AlterPartitionReassignments) moves the partition: Replicas is then
	// the target replicas followed by those being removed, Adding the
	// target replicas not yet in the ISR's company before it began, and
	// Removing the replicas that leave once every target replica is in
	// the ISR (Kafka's PartitionRegistration).
	AddingReplicas   []int32 `json:"addingReplicas,omitempty"`
	RemovingReplicas []int32 `json:"removingReplicas,omitempty"`
}

// Reassigning reports whether a reassignment of the partition is under
// way.
func (p Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// Empty returns the image of a cluster with nothing in it.
func Empty() *Image {
	return &Image{
		Controller: -1,
		Brokers:    map[int32]Broker{},
		Topics:     map[string]*Topic{},
		TopicIDs:   map[[16]byte]string{},
	}
}

// Topic returns the topic named name.
func (img *Image) Topic(name string) (*Topic, bool) {
	t, ok := img.Topics[name]
	return t, ok
}

// TopicByID returns the topic with the given ID.
func (img *Image) TopicByID(id [16]byte) (*Topic, bool) {
	name, ok := img.TopicIDs[id]
	if !ok {
		return nil, false
	}
	return img.Topic(name)
}

// SortedTopicNames returns every topic name in ascending order.
func (img *Image) SortedTopicNames() []string {
	names := make([]string, 0, len(img.Topics))
	for n := range img.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SortedBrokerIDs returns every registered broker ID in ascending order.
func (img *Image) SortedBrokerIDs() []int32 {
	ids := make([]int32, 0, len(img.Brokers))
	for id := range img.Brokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Partition returns partition p of the topic.
func (t *Topic) Partition(p int32) (Partition, bool) {
	if p < 0 || int(p) >= len(t.Partitions) {
		return Partition{}, false
	}
	return t.Partitions[p], true
}

// UUID is a 16-byte ID written as unpadded URL-safe base64, the way clients
// and tools print topic IDs.
type UUID [16]byte

// String returns the 22-character base64 form.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// MarshalText implements encoding.TextMarshaler.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (u *UUID) UnmarshalText(b []byte) error {
	if len(b) != 22 {
		return fmt.Errorf("%w: uuid %q is not 22 base64 characters", ErrMalformedRecord, b)
	}
	var tmp [16]byte
	n, err := base64.RawURLEncoding.Decode(tmp[:], b)
	if err != nil || n != 16 {
		return fmt.Errorf("%w: uuid %q: bad base64", ErrMalformedRecord, b)
	}
	*u = tmp
	return nil
}

// NewTopicID returns a random version-4 UUID from r (crypto/rand.Reader
// when nil) that is neither all zeros, nor the reserved ID 1, nor one whose
// printed form starts with '-' (which command lines would take for a flag).
func NewTopicID(r io.Reader) ([16]byte, error) {
	if r == nil {
		r = rand.Reader
	}
	for {
		var id [16]byte
		if _, err := io.ReadFull(r, id[:]); err != nil {
			return id, fmt.Errorf("generate topic id: %w", err)
		}
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		if id == ([16]byte{}) || id == ([16]byte{15: 1}) || strings.HasPrefix(UUID(id).String(), "-") {
			continue
		}
		return id, nil
	}
}

// ValidateTopicName checks a topic name against the naming rules: 1 to 249
// characters from [a-zA-Z0-9._-], and neither "." nor "..". The error's
// wire message is Kafka's (org.apache.kafka.common.internals.Topic).
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return errmsg.With(fmt.Errorf("%w: the name is empty", ErrInvalidTopic),
			"Topic name is invalid: the empty string is not allowed")
	case name == "." || name == "..":
		return errmsg.Withf(fmt.Errorf("%w: %q is not allowed", ErrInvalidTopic, name),
			"Topic name is invalid: '%s' is not allowed", name)
	case len(name) > 249:
		return errmsg.Withf(fmt.Errorf("%w: the name is %d characters, more than the maximum 249", ErrInvalidTopic, len(name)),
			"Topic name is invalid: the length of '%s' is longer than the max allowed length 249", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			continue
		}
		return errmsg.Withf(fmt.Errorf("%w: %q contains a character other than ASCII alphanumerics, '.', '_' and '-'", ErrInvalidTopic, name),
			"Topic name is invalid: '%s' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'", name)
	}
	return nil
}

// collisionKey maps a topic name to the form in which '.' and '_' are the
// same character; two names with one key would collide in metric names.
func collisionKey(name string) string { return strings.ReplaceAll(name, ".", "_") }

// CollidingTopic returns an existing topic whose name differs from name
// only by '.' versus '_', if any. A name equal to an existing one is not a
// collision.
func (img *Image) CollidingTopic(name string) (string, bool) {
	if !strings.ContainsAny(name, "._") {
		return "", false
	}
	key := collisionKey(name)
	for _, other := range img.SortedTopicNames() {
		if other != name && collisionKey(other) == key {
			return other, true
		}
	}
	return "", false
}

// IsInternalTopic reports whether name is one of the internal topics.
func IsInternalTopic(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

// CoordinatorPartition is the partition of an internal topic
// (__consumer_offsets, __transaction_state) that holds key — a group id or
// a transactional id — as Kafka computes it: Java's String.hashCode over
// UTF-16 code units, made non-negative with Kafka's Utils.abs (which maps
// Integer.MIN_VALUE to 0), modulo partitions.
func CoordinatorPartition(key string, partitions int32) int32 {
	if partitions <= 0 {
		return 0
	}
	var h int32
	for _, u := range utf16.Encode([]rune(key)) {
		h = 31*h + int32(u)
	}
	switch {
	case h == math.MinInt32:
		h = 0
	case h < 0:
		h = -h
	}
	return h % partitions
}
