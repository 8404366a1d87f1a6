package metadata

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// MaxPartitions bounds the partition count of one topic, so a request can
// never make the image grow without bound.
const MaxPartitions = 1 << 16

// MaxProducerIDBlock bounds the size of one producer-ID block.
const MaxProducerIDBlock = 1 << 20

// Apply returns the image with r applied. It never modifies img, it is
// deterministic (the result depends only on img and r), and on error it
// returns nil and the image is unchanged. Index is not changed; see
// ApplyEntry.
func (img *Image) Apply(r Record) (*Image, error) {
	if _, err := r.payload(); err != nil {
		return nil, err
	}
	switch r.Type {
	case RecordSetClusterID:
		return img.applySetClusterID(r.SetClusterID)
	case RecordRegisterBroker:
		return img.applyRegisterBroker(r.RegisterBroker)
	case RecordSetController:
		return img.applySetController(r.SetController)
	case RecordCreateTopic:
		return img.applyCreateTopic(r.CreateTopic)
	case RecordDeleteTopic:
		return img.applyDeleteTopic(r.DeleteTopic)
	case RecordCreatePartitions:
		return img.applyCreatePartitions(r.CreatePartitions)
	case RecordAlterTopicConfigs:
		return img.applyAlterTopicConfigs(r.AlterTopicConfigs)
	case RecordAllocateProducerIDs:
		return img.applyAllocateProducerIDs(r.AllocateProducerIDs)
	case RecordPartitionChange:
		return img.applyPartitionChange(r.PartitionChange)
	}
	return nil, fmt.Errorf("%w: %v", ErrUnknownRecordType, r.Type)
}

// ApplyEntry applies the record at Raft log index index. An index at or
// below img.Index was applied already, so img is returned unchanged (replay
// is idempotent). Otherwise the result has Index set to index; when the
// record is rejected the result is img with only Index advanced, and the
// rejection is returned as the error.
func (img *Image) ApplyEntry(index uint64, r Record) (*Image, error) {
	if index <= img.Index {
		return img, nil
	}
	next, err := img.Apply(r)
	if err != nil {
		next = img.shallowCopy()
	}
	next.Index = index
	return next, err
}

// shallowCopy copies the image's top level; maps and topics stay shared.
func (img *Image) shallowCopy() *Image {
	n := *img
	return &n
}

func (img *Image) applySetClusterID(r *SetClusterIDRecord) (*Image, error) {
	if r.ClusterID == "" {
		return nil, fmt.Errorf("%w: empty cluster id", ErrInvalidRecord)
	}
	if img.ClusterID != "" && img.ClusterID != r.ClusterID {
		return nil, fmt.Errorf("%w: %q, not %q", ErrClusterIDSet, img.ClusterID, r.ClusterID)
	}
	n := img.shallowCopy()
	if img.ClusterID == "" && len(r.BrokerDefaults) > 0 {
		clusterWide := ""
		var err error
		if n, err = img.applyAlterBrokerConfigs(&AlterTopicConfigsRecord{Broker: &clusterWide, Set: r.BrokerDefaults}); err != nil {
			return nil, err
		}
	}
	n.ClusterID = r.ClusterID
	return n, nil
}

func (img *Image) applyRegisterBroker(r *RegisterBrokerRecord) (*Image, error) {
	b := r.Broker
	if b.ID < 0 {
		return nil, fmt.Errorf("%w: broker id %d", ErrInvalidRecord, b.ID)
	}
	if b.Port < 0 || b.Port > math.MaxUint16 {
		return nil, fmt.Errorf("%w: broker %d port %d", ErrInvalidRecord, b.ID, b.Port)
	}
	prev, ok := img.Brokers[b.ID]
	switch {
	case r.IfIncarnation != nil:
		// An amendment (fenced, unfenced, shutting down) of the run it
		// was made for, applied as it says.
		if *r.IfIncarnation != b.Incarnation {
			return nil, fmt.Errorf("%w: broker %d amended as incarnation %v for incarnation %v", ErrInvalidRecord, b.ID, b.Incarnation, *r.IfIncarnation)
		}
		if !ok || prev.Incarnation != *r.IfIncarnation {
			return nil, fmt.Errorf("%w: broker %d is registered as incarnation %v, not %v", ErrStaleIncarnation, b.ID, prev.Incarnation, *r.IfIncarnation)
		}
	case !ok:
		// A first registration, as it says.
	case b.Incarnation == UUID{}:
		// A record written before registrations named their run, when
		// fencing changes were plain registrations: as it says, so that
		// an older metadata log replays to the image it made.
	case prev.Incarnation != b.Incarnation:
		// A new incarnation (a restart, clean or not) starts fenced, as
		// a Kafka broker registers fenced: the active controller first
		// takes it out of every ISR and elects other leaders, at a new
		// leader epoch, then unfences it on a heartbeat (controller's
		// liveness.go). Its replicas rejoin as followers, truncate by
		// leader epoch and fetch what they lack.
		b.Fenced = true
	default:
		// The same run registering again (a retry, a new controller's
		// setup on an image not yet current) changes its address at
		// most: only amendments fence, unfence or shut it down, as
		// Kafka's amended registration keeps them.
		b.Fenced, b.ShuttingDown = prev.Fenced, prev.ShuttingDown
	}
	n := img.shallowCopy()
	n.Brokers = maps.Clone(img.Brokers)
	if n.Brokers == nil {
		n.Brokers = map[int32]Broker{}
	}
	n.Brokers[b.ID] = b
	return n, nil
}

func (img *Image) applySetController(r *SetControllerRecord) (*Image, error) {
	if r.ID < -1 {
		return nil, fmt.Errorf("%w: controller id %d", ErrInvalidRecord, r.ID)
	}
	n := img.shallowCopy()
	n.Controller = r.ID
	return n, nil
}

func (img *Image) applyCreateTopic(r *CreateTopicRecord) (*Image, error) {
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

// checkNewPartitions validates partitions to be added at index first and
// returns copies with fresh epochs.
func (img *Image) checkNewPartitions(topic string, first int, ps []Partition) ([]Partition, error) {
	if first+len(ps) > MaxPartitions {
		return nil, fmt.Errorf("%w: topic %q would have %d partitions, more than %d", ErrInvalidRecord, topic, first+len(ps), MaxPartitions)
	}
	out := make([]Partition, len(ps))
	for i, p := range ps {
		if int(p.Index) != first+i {
			return nil, fmt.Errorf("%w: topic %q partition %d at position %d", ErrInvalidRecord, topic, p.Index, first+i)
		}
		np := Partition{
			Index:    p.Index,
			Leader:   p.Leader,
			Replicas: slices.Clone(p.Replicas),
			ISR:      slices.Clone(p.ISR),
		}
		if err := img.checkPartition(topic, np); err != nil {
			return nil, err
		}
		out[i] = np
	}
	return out, nil
}

// checkPartition validates one partition's replica state: replicas are
// distinct registered brokers, the ISR a subset of them, and the leader in
// the ISR (or -1 when there is none).
func (img *Image) checkPartition(topic string, p Partition) error {
	if len(p.Replicas) == 0 {
		return fmt.Errorf("%w: %s-%d has no replicas", ErrInvalidRecord, topic, p.Index)
	}
	seen := make(map[int32]bool, len(p.Replicas))
	for _, id := range p.Replicas {
		if seen[id] {
			return fmt.Errorf("%w: %s-%d lists replica %d twice", ErrInvalidRecord, topic, p.Index, id)
		}
		seen[id] = true
		if _, ok := img.Brokers[id]; !ok {
			return fmt.Errorf("%w: %s-%d replica %d is not a registered broker", ErrInvalidRecord, topic, p.Index, id)
		}
	}
	inISR := make(map[int32]bool, len(p.ISR))
	for _, id := range p.ISR {
		if !seen[id] || inISR[id] {
			return fmt.Errorf("%w: %s-%d isr %v is not a set of replicas %v", ErrInvalidRecord, topic, p.Index, p.ISR, p.Replicas)
		}
		inISR[id] = true
	}
	if p.Leader != -1 && !inISR[p.Leader] {
		return fmt.Errorf("%w: %s-%d leader %d not in isr %v", ErrInvalidRecord, topic, p.Index, p.Leader, p.ISR)
	}
	moving := make(map[int32]bool, len(p.AddingReplicas)+len(p.RemovingReplicas))
	for _, id := range slices.Concat(p.AddingReplicas, p.RemovingReplicas) {
		if !seen[id] || moving[id] {
			return fmt.Errorf("%w: %s-%d adding %v and removing %v are not disjoint sets of replicas %v",
				ErrInvalidRecord, topic, p.Index, p.AddingReplicas, p.RemovingReplicas, p.Replicas)
		}
		moving[id] = true
	}
	if len(p.RemovingReplicas) >= len(p.Replicas) {
		return fmt.Errorf("%w: %s-%d would remove all its replicas %v", ErrInvalidRecord, topic, p.Index, p.Replicas)
	}
	return nil
}

// nilIfEmpty returns a copy of s, or nil for an empty s.
func nilIfEmpty(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// liveTopic returns the topic named name, checking a non-zero id matches.
func (img *Image) liveTopic(name string, id UUID) (*Topic, error) {
	t, ok := img.Topics[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTopic, name)
	}
	if id != (UUID{}) && [16]byte(id) != t.ID {
		return nil, fmt.Errorf("%w: %q has id %v, not %v", ErrUnknownTopic, name, UUID(t.ID), id)
	}
	return t, nil
}

func (img *Image) applyDeleteTopic(r *DeleteTopicRecord) (*Image, error) {
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

// withTopic returns a copy of the image in which t replaces the topic of
// the same name.
func (img *Image) withTopic(t *Topic) *Image {
	n := img.shallowCopy()
	n.Topics = maps.Clone(img.Topics)
	n.Topics[t.Name] = t
	return n
}

func (img *Image) applyCreatePartitions(r *CreatePartitionsRecord) (*Image, error) {
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

func (img *Image) applyAlterTopicConfigs(r *AlterTopicConfigsRecord) (*Image, error) {
	if r.Replace && len(r.Delete) > 0 {
		return nil, fmt.Errorf("%w: replacing configs of %q with deletions", ErrInvalidRecord, r.Topic)
	}
	if r.Broker != nil {
		return img.applyAlterBrokerConfigs(r)
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
	cfg := alteredConfigs(img.BrokerConfigs[name], r)
	n := img.shallowCopy()
	n.BrokerConfigs = maps.Clone(img.BrokerConfigs)
	if n.BrokerConfigs == nil {
		n.BrokerConfigs = map[string]map[string]string{}
	}
	if len(cfg) == 0 {
		delete(n.BrokerConfigs, name)
	} else {
		n.BrokerConfigs[name] = cfg
	}
	return n, nil
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

func (img *Image) applyAllocateProducerIDs(r *AllocateProducerIDsRecord) (*Image, error) {
	if r.BlockSize <= 0 || r.BlockSize > MaxProducerIDBlock {
		return nil, fmt.Errorf("%w: producer id block size %d not in [1, %d]", ErrInvalidRecord, r.BlockSize, MaxProducerIDBlock)
	}
	if img.NextProducerID < 0 || img.NextProducerID > math.MaxInt64-r.BlockSize {
		return nil, fmt.Errorf("%w: next %d, block %d", ErrProducerIDsExhausted, img.NextProducerID, r.BlockSize)
	}
	n := img.shallowCopy()
	n.NextProducerID += r.BlockSize
	return n, nil
}

func (img *Image) applyPartitionChange(r *PartitionChangeRecord) (*Image, error) {
	t, err := img.liveTopic(r.Topic, r.ID)
	if err != nil {
		return nil, err
	}
	old, ok := t.Partition(r.Partition)
	if !ok {
		return nil, fmt.Errorf("%w: %s-%d does not exist", ErrInvalidRecord, r.Topic, r.Partition)
	}
	if r.IfLeaderEpoch != nil && *r.IfLeaderEpoch != old.LeaderEpoch {
		return nil, fmt.Errorf("%w: %s-%d has leader epoch %d, not %d", ErrStaleLeaderEpoch, r.Topic, r.Partition, old.LeaderEpoch, *r.IfLeaderEpoch)
	}
	if r.IfPartitionEpoch != nil && *r.IfPartitionEpoch != old.PartitionEpoch {
		return nil, fmt.Errorf("%w: %s-%d has partition epoch %d, not %d", ErrStalePartitionEpoch, r.Topic, r.Partition, old.PartitionEpoch, *r.IfPartitionEpoch)
	}
	p := old
	if r.Replicas != nil {
		p.Replicas = slices.Clone(r.Replicas)
	}
	if r.ISR != nil {
		p.ISR = slices.Clone(r.ISR)
	}
	if r.Leader != nil {
		p.Leader = *r.Leader
	}
	if r.AddingReplicas != nil {
		p.AddingReplicas = nilIfEmpty(r.AddingReplicas)
	}
	if r.RemovingReplicas != nil {
		p.RemovingReplicas = nilIfEmpty(r.RemovingReplicas)
	}
	if err := img.checkPartition(t.Name, p); err != nil {
		return nil, err
	}
	changed := false
	if p.Leader != old.Leader || r.BumpLeaderEpoch {
		if old.LeaderEpoch == math.MaxInt32 {
			return nil, fmt.Errorf("%w: %s-%d leader epoch exhausted", ErrInvalidRecord, r.Topic, r.Partition)
		}
		p.LeaderEpoch++
		changed = true
	}
	if changed || !slices.Equal(p.ISR, old.ISR) || !slices.Equal(p.Replicas, old.Replicas) ||
		!slices.Equal(p.AddingReplicas, old.AddingReplicas) || !slices.Equal(p.RemovingReplicas, old.RemovingReplicas) {
		if old.PartitionEpoch == math.MaxInt32 {
			return nil, fmt.Errorf("%w: %s-%d partition epoch exhausted", ErrInvalidRecord, r.Topic, r.Partition)
		}
		p.PartitionEpoch++
	}
	nt := *t
	nt.Partitions = slices.Clone(t.Partitions)
	nt.Partitions[r.Partition] = p
	return img.withTopic(&nt), nil
}

// cloneOrNew clones m, or makes an empty map when m is nil.
func cloneOrNew[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return make(map[K]V)
	}
	return maps.Clone(m)
}
