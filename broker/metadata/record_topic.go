package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// CreateTopicRecord creates a topic with its partitions, replica
// assignment and config overrides. The ID is chosen by the proposer so that
// applying the record is deterministic.
type CreateTopicRecord struct {
	Name       string            `json:"name"`
	ID         UUID              `json:"id"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
	Internal   bool              `json:"internal,omitempty"`
}

// Type returns "CreateTopic".
func (*CreateTopicRecord) Type() string { return "CreateTopic" }

// apply applies the record to img (see Image.Apply).
func (r *CreateTopicRecord) apply(img *Image) (*Image, error) {
	if err := ValidateTopicName(r.Name); err != nil {
		return nil, err
	}
	if _, ok := img.Topics[r.Name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrTopicExists, r.Name)
	}
	if other, ok := img.CollidingTopic(r.Name); ok {
		return nil, fmt.Errorf("%w: %w: %q collides with %q", ErrInvalidTopic, ErrTopicCollision, r.Name, other)
	}
	id := [16]byte(r.ID)
	if id == ([16]byte{}) {
		return nil, fmt.Errorf("%w: topic %q has a zero id", ErrInvalidRecord, r.Name)
	}
	if other, ok := img.TopicIDs[id]; ok {
		return nil, fmt.Errorf("%w: id %v is used by %q", ErrTopicExists, r.ID, other)
	}
	if len(r.Partitions) == 0 {
		return nil, fmt.Errorf("%w: topic %q without partitions", ErrInvalidRecord, r.Name)
	}
	parts, err := img.checkNewPartitions(r.Name, 0, r.Partitions)
	if err != nil {
		return nil, err
	}
	t := &Topic{Name: r.Name, ID: id, Partitions: parts, Configs: maps.Clone(r.Configs), Internal: r.Internal}
	if t.Configs == nil {
		t.Configs = map[string]string{}
	}
	n := img.shallowCopy()
	n.Topics = cloneOrNew(img.Topics)
	n.Topics[t.Name] = t
	n.TopicIDs = cloneOrNew(img.TopicIDs)
	n.TopicIDs[id] = t.Name
	return n, nil
}

// DeleteTopicRecord deletes a topic. A non-zero ID must match the topic's.
type DeleteTopicRecord struct {
	Name string `json:"name"`
	ID   UUID   `json:"id"`
}

// Type returns "DeleteTopic".
func (*DeleteTopicRecord) Type() string { return "DeleteTopic" }

// apply applies the record to img (see Image.Apply).
func (r *DeleteTopicRecord) apply(img *Image) (*Image, error) {
	t, err := img.liveTopic(r.Name, r.ID)
	if err != nil {
		return nil, err
	}
	n := img.shallowCopy()
	n.Topics = maps.Clone(img.Topics)
	delete(n.Topics, t.Name)
	n.TopicIDs = maps.Clone(img.TopicIDs)
	delete(n.TopicIDs, t.ID)
	return n, nil
}

// CreatePartitionsRecord appends partitions to a topic. Their indexes must
// continue the topic's existing ones.
type CreatePartitionsRecord struct {
	Topic      string      `json:"topic"`
	ID         UUID        `json:"id"`
	Partitions []Partition `json:"partitions"`
}

// Type returns "CreatePartitions".
func (*CreatePartitionsRecord) Type() string { return "CreatePartitions" }

// apply applies the record to img (see Image.Apply).
func (r *CreatePartitionsRecord) apply(img *Image) (*Image, error) {
	t, err := img.liveTopic(r.Topic, r.ID)
	if err != nil {
		return nil, err
	}
	if len(r.Partitions) == 0 {
		return nil, fmt.Errorf("%w: no partitions to add to %q", ErrInvalidRecord, r.Topic)
	}
	added, err := img.checkNewPartitions(t.Name, len(t.Partitions), r.Partitions)
	if err != nil {
		return nil, err
	}
	nt := *t
	nt.Partitions = append(slices.Clone(t.Partitions), added...)
	return img.withTopic(&nt), nil
}

// AlterTopicConfigsRecord changes a topic's config overrides or, with
// Broker set, the dynamic configs of a broker resource (Kafka's
// ConfigRecord of resource type BROKER): a node id, or "" for the
// cluster-wide default; with ClientMetrics set, the configs of that
// client metrics resource (resource type CLIENT_METRICS). With Replace
// the configs become exactly Set; otherwise Set keys are set and Delete
// keys removed.
type AlterTopicConfigsRecord struct {
	Topic string `json:"topic"`
	ID    UUID   `json:"id"`
	// Broker names the broker resource when the record changes one;
	// Topic is then "" and ID zero.
	Broker *string `json:"broker,omitempty"`
	// ClientMetrics names the client metrics resource when the record
	// changes one; Topic is then "" and ID zero.
	ClientMetrics *string           `json:"clientMetrics,omitempty"`
	Replace       bool              `json:"replace,omitempty"`
	Set           map[string]string `json:"set,omitempty"`
	Delete        []string          `json:"delete,omitempty"`
}

// Type returns "AlterTopicConfigs".
func (*AlterTopicConfigsRecord) Type() string { return "AlterTopicConfigs" }

// apply applies the record to img (see Image.Apply).
func (r *AlterTopicConfigsRecord) apply(img *Image) (*Image, error) {
	if r.Replace && len(r.Delete) > 0 {
		return nil, fmt.Errorf("%w: replacing configs of %q with deletions", ErrInvalidRecord, r.Topic)
	}
	if r.Broker != nil && r.ClientMetrics != nil {
		return nil, fmt.Errorf("%w: configs record names a broker and a client metrics resource", ErrInvalidRecord)
	}
	if r.Broker != nil {
		return img.applyAlterBrokerConfigs(r)
	}
	if r.ClientMetrics != nil {
		return img.applyAlterClientMetrics(r)
	}
	t, err := img.liveTopic(r.Topic, r.ID)
	if err != nil {
		return nil, err
	}
	nt := *t
	nt.Configs = alteredConfigs(t.Configs, r)
	return img.withTopic(&nt), nil
}

// applyAlterBrokerConfigs changes the dynamic configs of the broker
// resource r names; a resource left with none is removed.
func (img *Image) applyAlterBrokerConfigs(r *AlterTopicConfigsRecord) (*Image, error) {
	name := *r.Broker
	if r.Topic != "" || r.ID != (UUID{}) {
		return nil, fmt.Errorf("%w: broker configs record names topic %q", ErrInvalidRecord, r.Topic)
	}
	if name != "" {
		if id, err := strconv.ParseInt(name, 10, 32); err != nil || id < 0 {
			return nil, fmt.Errorf("%w: broker resource %q is not a node id", ErrInvalidRecord, name)
		}
	}
	n := img.shallowCopy()
	n.BrokerConfigs = alteredResource(img.BrokerConfigs, name, r)
	return n, nil
}

// MaxClientMetricsResources bounds the client metrics resources the
// image holds.
const MaxClientMetricsResources = 1024

// applyAlterClientMetrics changes the configs of the client metrics
// resource r names; a resource left with none is removed.
func (img *Image) applyAlterClientMetrics(r *AlterTopicConfigsRecord) (*Image, error) {
	name := *r.ClientMetrics
	if name == "" || r.Topic != "" || r.ID != (UUID{}) {
		return nil, fmt.Errorf("%w: client metrics configs record names %q, topic %q", ErrInvalidRecord, name, r.Topic)
	}
	n := img.shallowCopy()
	n.ClientMetrics = alteredResource(img.ClientMetrics, name, r)
	if len(n.ClientMetrics) > MaxClientMetricsResources && len(n.ClientMetrics) > len(img.ClientMetrics) {
		return nil, fmt.Errorf("%w: more than %d client metrics resources", ErrInvalidRecord, MaxClientMetricsResources)
	}
	return n, nil
}

// alteredResource returns a new map of resources' configs: resources with
// r's change applied to the configs of name, which is left out when it
// has none.
func alteredResource(resources map[string]map[string]string, name string, r *AlterTopicConfigsRecord) map[string]map[string]string {
	cfg := alteredConfigs(resources[name], r)
	out := maps.Clone(resources)
	if out == nil {
		out = map[string]map[string]string{}
	}
	if len(cfg) == 0 {
		delete(out, name)
	} else {
		out[name] = cfg
	}
	return out
}

// alteredConfigs returns a new map: cur with r's change applied.
func alteredConfigs(cur map[string]string, r *AlterTopicConfigsRecord) map[string]string {
	var cfg map[string]string
	if r.Replace {
		cfg = maps.Clone(r.Set)
	} else {
		cfg = maps.Clone(cur)
		if cfg == nil {
			cfg = map[string]string{}
		}
		for _, k := range r.Delete {
			delete(cfg, k)
		}
		maps.Copy(cfg, r.Set)
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	return cfg
}
