package seed

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Result is what Apply did.
type Result struct {
	// Created are the topics Apply created, Existing those it found with
	// the shape asked for and left alone.
	Created  []string `json:"created"`
	Existing []string `json:"existing"`
	// Records counts the records produced.
	Records int `json:"records"`
}

// ProducerOpts are the options the client given to Apply needs: Apply
// picks each record's partition itself (the one a record names, else by
// key as Kafka's default partitioner does, else in turn).
func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner())}
}

// Apply creates the topics of s that do not exist and produces their
// records, acknowledged by all in-sync replicas; it checks those that exist
// against s and fails with ErrConflict, naming what differs, when they do
// not match. cl must be built with ProducerOpts.
func Apply(ctx context.Context, cl *kgo.Client, s Spec) (Result, error) {
	var res Result
	if len(s.Topics) == 0 {
		return res, nil
	}
	adm := kadm.NewClient(cl)
	names := make([]string, len(s.Topics))
	for i, t := range s.Topics {
		names[i] = t.Name
	}
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return res, fmt.Errorf("seed: metadata: %w", err)
	}
	var created []Topic
	for _, t := range s.Topics {
		d, ok := details[t.Name]
		if ok && d.Err == nil {
			if err := check(ctx, adm, t, d); err != nil {
				return res, err
			}
			res.Existing = append(res.Existing, t.Name)
			continue
		}
		if ok && !errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
			return res, fmt.Errorf("seed: topic %s: %w", t.Name, d.Err)
		}
		rf := t.ReplicationFactor
		if rf == 0 {
			rf = -1 // the cluster's default
		}
		configs := make(map[string]*string, len(t.Configs))
		for k, v := range t.Configs {
			configs[k] = kadm.StringPtr(v)
		}
		r, err := adm.CreateTopic(ctx, t.partitions(), rf, configs, t.Name)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			return res, fmt.Errorf("seed: create topic %s: %w", t.Name, err)
		}
		res.Created = append(res.Created, t.Name)
		created = append(created, t)
	}
	var records []*kgo.Record
	for _, t := range created {
		records = append(records, kgoRecords(t)...)
	}
	if len(records) > 0 {
		if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
			return res, fmt.Errorf("seed: produce: %w", err)
		}
	}
	res.Records = len(records)
	return res, nil
}

// check compares an existing topic with the seed's.
func check(ctx context.Context, adm *kadm.Client, t Topic, d kadm.TopicDetail) error {
	var diffs []string
	if got := int32(len(d.Partitions)); got != t.partitions() {
		diffs = append(diffs, fmt.Sprintf("%d partitions, not %d", got, t.partitions()))
	}
	if p, ok := d.Partitions[0]; ok && t.ReplicationFactor != 0 && len(p.Replicas) != int(t.ReplicationFactor) {
		diffs = append(diffs, fmt.Sprintf("replication factor %d, not %d", len(p.Replicas), t.ReplicationFactor))
	}
	if len(t.Configs) > 0 {
		rcs, err := adm.DescribeTopicConfigs(ctx, t.Name)
		if err != nil {
			return fmt.Errorf("seed: describe configs of %s: %w", t.Name, err)
		}
		rc, err := rcs.On(t.Name, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			return fmt.Errorf("seed: describe configs of %s: %w", t.Name, err)
		}
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			got := "(none)"
			for _, c := range rc.Configs {
				if c.Key == k && c.Value != nil {
					got = *c.Value
				}
			}
			if got != t.Configs[k] {
				diffs = append(diffs, fmt.Sprintf("%s=%s, not %s", k, got, t.Configs[k]))
			}
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: topic %s exists with %s; delete it or give the seed another name", ErrConflict, t.Name, strings.Join(diffs, ", "))
	}
	return nil
}

// kgoRecords are t's records with their partitions chosen.
func kgoRecords(t Topic) []*kgo.Record {
	n := int(t.partitions())
	byKey := kgo.StickyKeyPartitioner(nil).ForTopic(t.Name)
	out := make([]*kgo.Record, 0, len(t.Records))
	for i, r := range t.Records {
		kr := &kgo.Record{Topic: t.Name}
		if r.Key != nil {
			kr.Key = []byte(*r.Key)
		}
		if r.Value != nil {
			kr.Value = []byte(*r.Value)
		}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
		}
		switch {
		case r.Partition != nil:
			kr.Partition = *r.Partition
		case r.Key != nil:
			kr.Partition = int32(byKey.Partition(kr, n))
		default:
			kr.Partition = int32(i % n)
		}
		out = append(out, kr)
	}
	return out
}

func isExists(err error) bool { return errors.Is(err, kerr.TopicAlreadyExists) }
