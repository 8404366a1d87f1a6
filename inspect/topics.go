package inspect

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LookupTopics looks up topics without creating them and returns their
// details, partitions included. A topic that does not exist is an error
// naming it, wrapping ErrTopicNotFound.
func LookupTopics(ctx context.Context, adm *kadm.Client, topics []string) (kadm.TopicDetails, error) {
	details, err := adm.ListTopicsWithInternal(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	for _, t := range topics {
		d, ok := details[t]
		switch {
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			return nil, fmt.Errorf("topic %q: %w", t, ErrTopicNotFound)
		case d.Err != nil:
			return nil, fmt.Errorf("topic %q: %w", t, d.Err)
		}
	}
	return details, nil
}

// TopicListing is one topic as ListTopics lists it.
type TopicListing struct {
	Name              string `json:"name"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Internal          bool   `json:"internal"`
}

// ListTopics lists the topics of the cluster sorted by name, internal ones
// only if asked. Topics the metadata reports with an error are left out.
func ListTopics(ctx context.Context, adm *kadm.Client, internal bool) ([]TopicListing, error) {
	var details kadm.TopicDetails
	var err error
	if internal {
		details, err = adm.ListTopicsWithInternal(ctx)
	} else {
		details, err = adm.ListTopics(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	items := []TopicListing{}
	for _, d := range details.Sorted() {
		if d.Err != nil {
			continue
		}
		items = append(items, TopicListing{
			Name:              d.Topic,
			Partitions:        len(d.Partitions),
			ReplicationFactor: d.Partitions.NumReplicas(),
			Internal:          d.IsInternal,
		})
	}
	return items, nil
}

// TopicDescription is one topic: its partitions and the configs that
// differ from the broker's defaults. Error is present only when the topic,
// or its configs, could not be described.
type TopicDescription struct {
	Name              string                 `json:"name"`
	ID                string                 `json:"id,omitempty"` // base64url, no padding
	Internal          bool                   `json:"internal"`
	ReplicationFactor int                    `json:"replication_factor"`
	Partitions        []PartitionDescription `json:"partitions"`
	Configs           []ConfigDescription    `json:"configs"` // those that differ from the default
	Error             string                 `json:"error,omitempty"`
}

// PartitionDescription is one partition of a topic. An offset that could
// not be listed is -1, and Errors, keyed by the offset's JSON name
// ("log_start_offset", "high_watermark"), says why. Error is the error the
// metadata gives the partition (LEADER_NOT_AVAILABLE...).
type PartitionDescription struct {
	Partition       int32             `json:"partition"`
	Leader          int32             `json:"leader"`
	LeaderEpoch     int32             `json:"leader_epoch"`
	Replicas        []int32           `json:"replicas"`
	ISR             []int32           `json:"isr"`
	OfflineReplicas []int32           `json:"offline_replicas"`
	LogStartOffset  int64             `json:"log_start_offset"`
	HighWatermark   int64             `json:"high_watermark"`
	Error           string            `json:"error,omitempty"`
	Errors          map[string]string `json:"errors,omitempty"`
}

// ConfigDescription is one topic config set on the topic itself.
type ConfigDescription struct {
	Key       string  `json:"key"`
	Value     *string `json:"value"`
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

// DescribeTopics describes the named topics, in the order given: metadata,
// offsets and the configs that differ from the default. A topic that does
// not exist carries ErrTopicNotFound's text as its Error, one whose configs
// could not be described the reason. An offset that could not be listed
// (its leader is down) is -1 with the reason in its partition's Errors. The
// error is non-nil only when the metadata could not be read.
func DescribeTopics(ctx context.Context, adm *kadm.Client, names []string) ([]TopicDescription, error) {
	details, err := adm.ListTopicsWithInternal(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	var found []string
	for _, n := range names {
		if d, ok := details[n]; ok && d.Err == nil {
			found = append(found, n)
		}
	}
	var x topicExtras
	if len(found) > 0 {
		if x, err = listTopicExtras(ctx, adm, found); err != nil {
			return nil, err
		}
	}
	descs := make([]TopicDescription, 0, len(names))
	for _, n := range names {
		d, ok := details[n]
		desc := TopicDescription{Name: n, Partitions: []PartitionDescription{}, Configs: []ConfigDescription{}}
		switch {
		case !ok:
			desc.Error = ErrTopicNotFound.Error()
		case d.Err != nil:
			desc.Error = d.Err.Error()
		}
		if desc.Error == "" {
			x.describe(&desc, d)
		}
		descs = append(descs, desc)
	}
	return descs, nil
}

// topicExtras is what DescribeTopics asks about existing topics beyond
// their metadata: their offsets and configs.
type topicExtras struct {
	starts, ends kadm.ListedOffsets
	configs      kadm.ResourceConfigs
	configsErr   error // the configs could not be described
}

// listTopicExtras lists the start and end offsets and the configs of the
// topics found; a partition whose offsets could not be listed carries the
// reason in starts and ends.
func listTopicExtras(ctx context.Context, adm *kadm.Client, found []string) (topicExtras, error) {
	var x topicExtras
	var err error
	if x.starts, err = perPartition(adm.ListStartOffsets(ctx, found...)); err != nil {
		return topicExtras{}, fmt.Errorf("list start offsets: %w", err)
	}
	if x.ends, err = perPartition(adm.ListEndOffsets(ctx, found...)); err != nil {
		return topicExtras{}, fmt.Errorf("list end offsets: %w", err)
	}
	if x.configs, err = adm.DescribeTopicConfigs(ctx, found...); err != nil {
		x.configsErr = fmt.Errorf("describe configs: %w", err)
	}
	return x, nil
}

// offset looks up one partition's offset in lo: the offset, or -1 and
// the reason under key in pd.Errors.
func (pd *PartitionDescription) offset(lo kadm.ListedOffsets, topic, key string) int64 {
	o, ok := lo.Lookup(topic, pd.Partition)
	err := o.Err
	if !ok {
		err = NoResponse(nil)
	}
	if err == nil {
		return o.Offset
	}
	if pd.Errors == nil {
		pd.Errors = make(map[string]string)
	}
	pd.Errors[key] = err.Error()
	return -1
}

// describe fills desc, of a topic that exists, from its metadata d and
// x: its id, partitions with their offsets, and the configs set on the
// topic itself (not the broker's or the defaults).
func (x topicExtras) describe(desc *TopicDescription, d kadm.TopicDetail) {
	n := desc.Name
	if d.ID != (kadm.TopicID{}) {
		desc.ID = base64.RawURLEncoding.EncodeToString(d.ID[:])
	}
	desc.Internal = d.IsInternal
	desc.ReplicationFactor = d.Partitions.NumReplicas()
	for _, p := range d.Partitions.Sorted() {
		pd := PartitionDescription{
			Partition:       p.Partition,
			Leader:          p.Leader,
			LeaderEpoch:     p.LeaderEpoch,
			Replicas:        nonNil(p.Replicas),
			ISR:             nonNil(p.ISR),
			OfflineReplicas: nonNil(p.OfflineReplicas),
		}
		if p.Err != nil {
			pd.Error = p.Err.Error()
		}
		pd.LogStartOffset = pd.offset(x.starts, n, "log_start_offset")
		pd.HighWatermark = pd.offset(x.ends, n, "high_watermark")
		desc.Partitions = append(desc.Partitions, pd)
	}
	if x.configsErr != nil {
		desc.Error = x.configsErr.Error()
	}
	if rc, err := x.configs.On(n, nil); err == nil {
		if rc.Err != nil {
			desc.Error = "describe configs: " + ErrorText(rc.Err, rc.ErrMessage)
		}
		var own []kadm.Config
		for _, c := range rc.Configs {
			switch c.Source {
			case kmsg.ConfigSourceDefaultConfig, kmsg.ConfigSourceStaticBrokerConfig,
				kmsg.ConfigSourceDynamicDefaultBrokerConfig, kmsg.ConfigSourceDynamicBrokerConfig:
				continue // the broker's or the default
			}
			own = append(own, c)
		}
		desc.Configs = configDescriptions(own)
	}
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// configDescriptions converts configs, sorted by key.
func configDescriptions(configs []kadm.Config) []ConfigDescription {
	out := make([]ConfigDescription, 0, len(configs))
	for _, c := range configs {
		out = append(out, ConfigDescription{Key: c.Key, Value: c.Value, Source: c.Source.String(), Sensitive: c.Sensitive})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Configs describes every config of a topic, or with broker >= 0 of that
// broker (topic ""), each with its value and source (DYNAMIC_TOPIC_CONFIG,
// DYNAMIC_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG, ...), by
// key.
func Configs(ctx context.Context, adm *kadm.Client, topic string, broker int32) ([]ConfigDescription, error) {
	var (
		rcs  kadm.ResourceConfigs
		err  error
		name = topic
	)
	if topic != "" {
		rcs, err = adm.DescribeTopicConfigs(ctx, topic)
	} else {
		rcs, err = adm.DescribeBrokerConfigs(ctx, broker)
		name = strconv.Itoa(int(broker))
	}
	if err != nil {
		return nil, fmt.Errorf("describe configs: %w", err)
	}
	rc, err := rcs.On(name, nil)
	if err != nil {
		return nil, fmt.Errorf("describe configs of %s: %w", name, err)
	}
	if rc.Err != nil {
		return nil, fmt.Errorf("describe configs of %s: %s", name, ErrorText(rc.Err, rc.ErrMessage))
	}
	return configDescriptions(rc.Configs), nil
}
