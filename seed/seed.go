// Package seed reads the topics and records a fresh cluster is seeded with
// (klog up --seed-topic and --seed FILE) and creates them over the Kafka
// protocol, so that tests and CI jobs start against known data.
//
// A seed file is YAML or JSON (JSON is YAML too), one document:
//
//	topics:
//	  - name: orders
//	    partitions: 3            # default 1
//	    replication_factor: 1    # default: the cluster's default.replication.factor
//	    configs:
//	      cleanup.policy: compact
//	    records:
//	      - key: order-1         # absent: a null key
//	        value: '{"id":1}'    # absent: a null value (a tombstone)
//	        partition: 0         # absent: the producer's partitioner
//	        headers:
//	          - {key: source, value: seed}
//
// Seeding is idempotent over a restart on the same data: a topic that
// exists already with the partitions, replication factor and configs asked
// for is left alone, records and all (they were produced when it was
// created); one that exists with another shape is an error (ErrConflict).
//
// The package sees a cluster only as a Kafka client does (kgo, kadm); it
// must never import broker/ or store/.
package seed

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrConflict reports a seed topic that exists with another shape than the
// seed asks for, or one named twice with different shapes.
var ErrConflict = errors.New("seed topic conflicts")

// ErrInvalid reports a seed that cannot be read: a bad file, a bad
// name:partitions[:rf].
var ErrInvalid = errors.New("invalid seed")

// Spec is what a cluster is seeded with.
type Spec struct {
	Topics []Topic `yaml:"topics" json:"topics"`
}

// Topic is one topic to create, with the records to produce to it once it
// is created.
type Topic struct {
	Name string `yaml:"name" json:"name"`
	// Partitions is the number of partitions; 0 is 1.
	Partitions int32 `yaml:"partitions" json:"partitions,omitempty"`
	// ReplicationFactor is the number of replicas; 0 is the cluster's
	// default.replication.factor.
	ReplicationFactor int16             `yaml:"replication_factor" json:"replication_factor,omitempty"`
	Configs           map[string]string `yaml:"configs" json:"configs,omitempty"`
	Records           []Record          `yaml:"records" json:"records,omitempty"`
}

// Record is one record to produce. A nil Key or Value is null.
type Record struct {
	Key       *string  `yaml:"key" json:"key,omitempty"`
	Value     *string  `yaml:"value" json:"value,omitempty"`
	Partition *int32   `yaml:"partition" json:"partition,omitempty"`
	Headers   []Header `yaml:"headers" json:"headers,omitempty"`
}

// Header is one record header; a record's headers keep their order and may
// repeat a key.
type Header struct {
	Key   string `yaml:"key" json:"key"`
	Value string `yaml:"value" json:"value"`
}

// partitions is the topic's partition count with the default applied.
func (t Topic) partitions() int32 {
	if t.Partitions == 0 {
		return 1
	}
	return t.Partitions
}

// ParseFile reads a seed file, YAML or JSON.
func ParseFile(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s, err := Parse(b)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse reads a seed document, YAML or JSON; unknown fields are errors, so
// a misspelt one does not go unnoticed.
func Parse(b []byte) (Spec, error) {
	var s Spec
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) { // io.EOF: an empty document
		return Spec{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := s.validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// ParseTopic reads name:partitions[:replication-factor], as --seed-topic
// takes it.
func ParseTopic(s string) (Topic, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return Topic{}, fmt.Errorf("%w: %q: want name:partitions[:replication-factor]", ErrInvalid, s)
	}
	t := Topic{Name: parts[0]}
	p, err := strconv.ParseInt(parts[1], 10, 32)
	if err != nil || p < 1 {
		return Topic{}, fmt.Errorf("%w: %q: partitions %q: want a number, 1 or more", ErrInvalid, s, parts[1])
	}
	t.Partitions = int32(p)
	if len(parts) == 3 {
		rf, err := strconv.ParseInt(parts[2], 10, 16)
		if err != nil || rf < 1 {
			return Topic{}, fmt.Errorf("%w: %q: replication factor %q: want a number, 1 or more", ErrInvalid, s, parts[2])
		}
		t.ReplicationFactor = int16(rf)
	}
	return t, nil
}

// Merge adds o's topics to s. A topic named in both must have the same
// partitions, replication factor and configs; its records are those of
// both.
func (s *Spec) Merge(o Spec) error {
	for _, t := range o.Topics {
		i := s.index(t.Name)
		if i < 0 {
			s.Topics = append(s.Topics, t)
			continue
		}
		have := &s.Topics[i]
		if have.partitions() != t.partitions() || have.ReplicationFactor != t.ReplicationFactor || !maps.Equal(have.Configs, t.Configs) {
			return fmt.Errorf("%w: %s is given twice with different partitions, replication factor or configs", ErrConflict, t.Name)
		}
		have.Records = append(have.Records, t.Records...)
	}
	return s.validate()
}

func (s *Spec) index(name string) int {
	for i, t := range s.Topics {
		if t.Name == name {
			return i
		}
	}
	return -1
}

func (s Spec) validate() error {
	seen := map[string]bool{}
	for _, t := range s.Topics {
		switch {
		case t.Name == "":
			return fmt.Errorf("%w: a topic has no name", ErrInvalid)
		case seen[t.Name]:
			return fmt.Errorf("%w: topic %s is listed twice", ErrInvalid, t.Name)
		case t.Partitions < 0:
			return fmt.Errorf("%w: topic %s: partitions %d", ErrInvalid, t.Name, t.Partitions)
		case t.ReplicationFactor < 0:
			return fmt.Errorf("%w: topic %s: replication_factor %d", ErrInvalid, t.Name, t.ReplicationFactor)
		}
		seen[t.Name] = true
		for i, r := range t.Records {
			if r.Partition != nil && (*r.Partition < 0 || *r.Partition >= t.partitions()) {
				return fmt.Errorf("%w: topic %s record %d: partition %d of %d", ErrInvalid, t.Name, i, *r.Partition, t.partitions())
			}
		}
	}
	return nil
}
