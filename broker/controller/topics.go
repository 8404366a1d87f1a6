package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
)

// TopicSpec describes a topic to create.
type TopicSpec struct {
	Name string
	// Partitions is the partition count; -1 uses num.partitions.
	Partitions int32
	// ReplicationFactor is the replica count; -1 uses
	// default.replication.factor.
	ReplicationFactor int16
	// Assignment optionally places replicas by hand, in the request's
	// order: each partition's index and broker IDs, preferred leader
	// first. Partitions and ReplicationFactor must then be -1.
	Assignment []PartitionReplicas
	// Configs are the topic's config overrides.
	Configs map[string]string
	// NullConfigs are the configs the request named without a value,
	// which Kafka refuses (INVALID_CONFIG).
	NullConfigs []string
}

// PartitionReplicas is the manual assignment of one partition: its index
// and its replicas, the preferred leader first.
type PartitionReplicas struct {
	Partition int32
	Replicas  []int32
}

// CreateTopic validates spec, places its replicas and creates the topic.
// With validateOnly nothing is written and the returned topic shows what
// would be created, with a random ID that no topic keeps (Kafka answers a
// validate-only creation with one too).
func (c *Controller) CreateTopic(ctx context.Context, spec TopicSpec, validateOnly bool) (*metadata.Topic, error) {
	if err := metadata.ValidateTopicName(spec.Name); err != nil {
		return nil, err
	}
	if spec.Name == clusterMetadataTopic {
		return nil, errmsg.Withf(fmt.Errorf("%w: creation of internal topic %s is prohibited", ErrInvalidRequest, spec.Name),
			"Creation of internal topic %s is prohibited.", spec.Name)
	}
	unlock, err := c.lockCreate(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := c.CatchUp(ctx); err != nil {
		return nil, err
	}
	img := c.Image()
	if _, ok := img.Topic(spec.Name); ok {
		return nil, errmsg.Withf(fmt.Errorf("%w: %q", ErrTopicExists, spec.Name), "Topic '%s' already exists.", spec.Name)
	}
	if other, ok := img.CollidingTopic(spec.Name); ok {
		return nil, errmsg.Withf(fmt.Errorf("%w: %w: %q collides with %q", ErrInvalidTopic, ErrTopicCollision, spec.Name, other),
			"Topic '%s' collides with existing topic: %s", spec.Name, other)
	}
	if len(spec.NullConfigs) > 0 {
		return nil, errmsg.Withf(fmt.Errorf("%w: %s has no value", ErrInvalidConfig, spec.NullConfigs[0]),
			"Null value not supported for topic configs: %s", spec.NullConfigs[0])
	}
	if err := validateConfigs(spec.Configs); err != nil {
		return nil, err
	}
	var parts []metadata.Partition
	if len(spec.Assignment) > 0 {
		both := fmt.Errorf("%w: a replica assignment requires partitions and replication factor of -1", ErrInvalidRequest)
		switch { // in Kafka's order
		case spec.ReplicationFactor != -1:
			return nil, errmsg.With(both, "A manual partition assignment was specified, but replication factor was not set to -1.")
		case spec.Partitions != -1:
			return nil, errmsg.With(both, "A manual partition assignment was specified, but numPartitions was not set to -1.")
		}
		parts, err = manualPartitions(img, spec.Assignment)
	} else {
		parts, err = c.placeNew(img, spec.Partitions, spec.ReplicationFactor)
	}
	if err != nil {
		return nil, err
	}
	if err := c.checkPlaced(img, parts); err != nil {
		return nil, err
	}
	rec := &metadata.CreateTopicRecord{
		Name:       spec.Name,
		Partitions: parts,
		Configs:    maps.Clone(spec.Configs),
		Internal:   metadata.IsInternalTopic(spec.Name),
	}
	id, err := metadata.NewTopicID(nil)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	rec.ID = id
	if validateOnly {
		return &metadata.Topic{Name: rec.Name, ID: rec.ID, Partitions: rec.Partitions, Configs: rec.Configs, Internal: rec.Internal}, nil
	}
	res, err := c.propose(ctx, rec)
	if err != nil {
		return nil, err
	}
	if res.err != nil {
		return nil, res.err
	}
	t, ok := res.next.Topic(spec.Name)
	if !ok {
		return nil, fmt.Errorf("%w: %q vanished after creation", ErrUnknownTopic, spec.Name)
	}
	c.spread(ctx)
	c.log.Info("topic created", "topic", spec.Name, "id", metadata.UUID(t.ID), "partitions", len(t.Partitions))
	return t, nil
}

// DeleteTopic deletes a topic.
func (c *Controller) DeleteTopic(ctx context.Context, name string) error {
	if !c.cfg.Broker.Settings().DeleteTopicEnable {
		return ErrTopicDeletionDisabled
	}
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	t, ok := c.Image().Topic(name)
	if !ok {
		return unknownTopic(name)
	}
	res, err := c.propose(ctx, &metadata.DeleteTopicRecord{Name: name, ID: t.ID})
	if err != nil {
		return err
	}
	if res.err == nil {
		c.log.Info("topic deleted", "topic", name, "id", metadata.UUID(t.ID))
		c.spread(ctx)
	}
	return res.err
}

// CreatePartitions grows a topic to total partitions. Without assignment
// klog places the new ones with the replication factor of the existing
// ones; a non-nil assignment lists the replicas of each new partition in
// order, preferred leader first, and is checked as Kafka's controller
// checks it (ReplicationControlManager.createPartitions): one entry per new
// partition, each of the topic's replication factor, of distinct
// registered brokers, at least one of them active.
func (c *Controller) CreatePartitions(ctx context.Context, topic string, total int32, assignment [][]int32, validateOnly bool) error {
	unlock, err := c.lockCreate(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	img := c.Image()
	t, ok := img.Topic(topic)
	if !ok {
		// Kafka's ReplicationControlManager sends no message here.
		return errmsg.With(fmt.Errorf("%w: %q", ErrUnknownTopic, topic), "")
	}
	cur := int32(len(t.Partitions))
	switch {
	case t.Internal:
		// Kafka allows it, and its coordinators, which read the count at
		// startup, move the groups and transactional ids that hash
		// elsewhere away from their state at the next restart. klog's
		// coordinators follow the count at once, so refuse.
		return fmt.Errorf("%w: the partition count of internal topic %s cannot change: its groups or transactional ids would hash to partitions without their state", ErrPolicyViolation, topic)
	case total == cur:
		return errmsg.Withf(fmt.Errorf("%w: topic already has %d partitions", ErrInvalidPartitions, cur), "Topic already has %d partition(s).", cur)
	case total < cur:
		return errmsg.Withf(fmt.Errorf("%w: topic currently has %d partitions, which is higher than the requested %d", ErrInvalidPartitions, cur, total),
			"The topic %s currently has %d partition(s); %d would not be an increase.", topic, cur, total)
	case assignment != nil && len(assignment) != int(total-cur):
		return errmsg.Withf(fmt.Errorf("%w: %d new partitions but %d assignments", ErrInvalidReplicaAssignment, total-cur, len(assignment)),
			"Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", total-cur, len(assignment))
	case total > metadata.MaxPartitions:
		return fmt.Errorf("%w: %d partitions is more than the maximum %d", ErrInvalidPartitions, total, metadata.MaxPartitions)
	}
	rf := 1
	if cur > 0 {
		rf = len(t.Partitions[0].Replicas)
	}
	var added []metadata.Partition
	if assignment != nil {
		added = make([]metadata.Partition, 0, len(assignment))
		for i, replicas := range assignment {
			p, err := manualPartition(img, cur+int32(i), replicas, rf)
			if err != nil {
				return err
			}
			added = append(added, p)
		}
	} else {
		if err := c.checkRoom(img, int64(total-cur), int64(rf)); err != nil {
			return err
		}
		if added, err = c.place(img, cur, total-cur, rf); err != nil {
			return err
		}
	}
	if err := c.checkPlaced(img, added); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	res, err := c.propose(ctx, &metadata.CreatePartitionsRecord{
		Topic: topic, ID: t.ID, Partitions: added,
	})
	if err != nil {
		return err
	}
	if res.err == nil {
		c.spread(ctx)
	}
	return res.err
}

// AlterTopicConfigs changes a topic's config overrides. Incrementally, a
// non-nil value sets a key and a nil value deletes it; otherwise the
// non-nil entries replace all overrides.
func (c *Controller) AlterTopicConfigs(ctx context.Context, topic string, set map[string]*string, incremental, validateOnly bool) error {
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	t, ok := c.Image().Topic(topic)
	if !ok {
		return errmsg.Withf(fmt.Errorf("%w: %q", ErrUnknownTopic, topic), "The topic '%s' does not exist.", topic)
	}
	rec := &metadata.AlterTopicConfigsRecord{Topic: topic, ID: t.ID}
	return c.alterConfigs(ctx, rec, set, incremental, validateOnly, func(sets map[string]string, deletes []string) error {
		for _, k := range deletes {
			if _, ok := config.LookupTopic(k); !ok {
				return errmsg.Withf(fmt.Errorf("%w: %w: %q is not a topic config", ErrInvalidConfig, config.ErrUnknownConfig, k),
					"Unknown topic config name: %s", k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(sets)) {
			if err := config.ValidateTopicConfig(k, sets[k]); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
			}
		}
		return nil
	})
}

// AlterBrokerConfigs changes the dynamic configs of a broker resource: a
// node id ("1"), or "" for the cluster-wide defaults; set as for
// AlterTopicConfigs. Only dynamic configs may be set (and names klog does
// not define, which Kafka stores too); every node applies the change when
// its metadata has it.
func (c *Controller) AlterBrokerConfigs(ctx context.Context, broker string, set map[string]*string, incremental, validateOnly bool) error {
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	rec := &metadata.AlterTopicConfigsRecord{Broker: &broker}
	return c.alterConfigs(ctx, rec, set, incremental, validateOnly, func(sets map[string]string, _ []string) error {
		if err := config.ValidateDynamicBroker(sets); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
		}
		return nil
	})
}

// AlterClientMetricsConfigs changes the configs of client metrics
// resource name (set values; nil deletes, when incremental), checked as
// Kafka checks the configs the resource would then have (config's
// ValidateClientMetrics: ErrInvalidRequest or ErrInvalidConfig). A new
// resource past metadata.MaxClientMetricsResources is ErrPolicyViolation.
func (c *Controller) AlterClientMetricsConfigs(ctx context.Context, name string, set map[string]*string, incremental, validateOnly bool) error {
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	for k, v := range set {
		if v != nil {
			set[k] = new(config.ClientMetricsValue(k, *v))
		}
	}
	rec := &metadata.AlterTopicConfigsRecord{ClientMetrics: &name}
	return c.alterConfigs(ctx, rec, set, incremental, validateOnly, func(sets map[string]string, deletes []string) error {
		img := c.Image()
		cur, exists := img.ClientMetrics[name]
		after := maps.Clone(sets)
		if incremental {
			after = maps.Clone(cur)
			if after == nil {
				after = map[string]string{}
			}
			for _, k := range deletes {
				delete(after, k)
			}
			maps.Copy(after, sets)
		}
		err := config.ValidateClientMetrics(name, after)
		switch {
		case errors.Is(err, config.ErrInvalidSubscription):
			return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
		case err != nil:
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		case !exists && len(after) > 0 && len(img.ClientMetrics) >= metadata.MaxClientMetricsResources:
			return fmt.Errorf("%w: klog keeps at most %d client metrics resources", ErrPolicyViolation, metadata.MaxClientMetricsResources)
		}
		return nil
	})
}

// alterConfigs fills rec, a config record of a topic or a broker, from
// set, checks it with validate and commits it unless validateOnly.
func (c *Controller) alterConfigs(ctx context.Context, rec *metadata.AlterTopicConfigsRecord, set map[string]*string, incremental, validateOnly bool,
	validate func(sets map[string]string, deletes []string) error) error {
	rec.Replace, rec.Set = !incremental, map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		v := set[k]
		if v == nil {
			if incremental {
				rec.Delete = append(rec.Delete, k)
			}
			continue
		}
		rec.Set[k] = *v
	}
	if err := validate(rec.Set, rec.Delete); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	return c.proposeAndSpread(ctx, rec)
}

// AllocateProducerIDs reserves a block of n producer IDs and returns the
// first; the block is [first, first+n). Blocks never overlap, across
// restarts included.
func (c *Controller) AllocateProducerIDs(ctx context.Context, n int64) (first int64, err error) {
	if n <= 0 || n > metadata.MaxProducerIDBlock {
		return 0, fmt.Errorf("%w: producer id block of %d not in [1, %d]", ErrInvalidRequest, n, metadata.MaxProducerIDBlock)
	}
	res, err := c.propose(ctx, &metadata.AllocateProducerIDsRecord{BlockSize: n})
	if err != nil {
		return 0, err
	}
	if res.err != nil {
		return 0, res.err
	}
	return res.prev.NextProducerID, nil
}

func validateConfigs(cfg map[string]string) error {
	if err := config.ValidateTopicConfigs(cfg); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// unknownTopic is ErrUnknownTopic for topic, with Kafka's default message
// for UNKNOWN_TOPIC_OR_PARTITION on the wire.
func unknownTopic(topic string) error {
	return errmsg.With(fmt.Errorf("%w: %q", ErrUnknownTopic, topic), "This server does not host this topic-partition.")
}

// placeNew resolves the defaults of a new topic's partition count and
// replication factor and places its replicas.
func (c *Controller) placeNew(img *metadata.Image, partitions int32, rf int16) ([]metadata.Partition, error) {
	n := int64(partitions)
	if partitions == -1 {
		n = int64(c.cfg.Broker.Settings().NumPartitions)
	}
	if n <= 0 {
		return nil, errmsg.With(fmt.Errorf("%w: number of partitions was set to an invalid non-positive value", ErrInvalidPartitions),
			"Number of partitions was set to an invalid non-positive value.")
	}
	if n > metadata.MaxPartitions {
		return nil, fmt.Errorf("%w: %d partitions is more than the maximum %d", ErrInvalidPartitions, n, metadata.MaxPartitions)
	}
	r := int64(rf)
	if rf == -1 {
		r = int64(c.cfg.Broker.Settings().DefaultReplicationFactor)
	}
	if r <= 0 || r > math.MaxInt16 {
		return nil, errmsg.With(fmt.Errorf("%w: replication factor must be larger than 0", ErrInvalidReplicationFactor),
			"Replication factor must be larger than 0, or -1 to use the default value.")
	}
	if err := c.checkRoom(img, n, r); err != nil {
		return nil, err
	}
	return c.place(img, 0, int32(n), int(r))
}

// clusterMetadataTopic is the name of Kafka's metadata log, which no client
// may create (Kafka's ControllerApis.createTopics).
const clusterMetadataTopic = "__cluster_metadata"

// lockCreate takes the creation token, waiting no longer than ctx allows.
func (c *Controller) lockCreate(ctx context.Context) (unlock func(), err error) {
	select {
	case c.creating <- struct{}{}:
		return func() { <-c.creating }, nil
	case <-c.stop:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, fmt.Errorf("controller: wait to create: %w", ctx.Err())
	}
}

// hostedReplicas counts the partition replicas each active broker hosts.
func hostedReplicas(img *metadata.Image) map[int32]int64 {
	hosted := make(map[int32]int64, len(img.Brokers))
	for id, b := range img.Brokers {
		if b.Active() {
			hosted[id] = 0
		}
	}
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			for _, r := range p.Replicas {
				if _, ok := hosted[r]; ok {
					hosted[r]++
				}
			}
		}
	}
	return hosted
}

// checkRoom refuses, before any is placed, count new partitions of rf
// replicas that cannot fit under klog.max.partitions even spread evenly
// over the unfenced brokers; with one broker the check is exact.
func (c *Controller) checkRoom(img *metadata.Image, count, rf int64) error {
	limit := int64(c.cfg.Broker.Settings().MaxPartitions)
	hosted := hostedReplicas(img)
	if int64(len(hosted)) < rf {
		return nil // place refuses the replication factor
	}
	var total int64
	for _, n := range hosted {
		total += n
	}
	if room := limit*int64(len(hosted)) - total; count*rf > room {
		return fmt.Errorf("%w: %d new partitions with %d replica(s) each do not fit under klog.max.partitions=%d per node: %d node(s) host %d partition replicas, room for %d more",
			ErrPolicyViolation, count, rf, limit, len(hosted), total, max(room, 0))
	}
	return nil
}

// checkPlaced refuses placed partitions that would put more than
// klog.max.partitions replicas on a broker.
func (c *Controller) checkPlaced(img *metadata.Image, added []metadata.Partition) error {
	limit := int64(c.cfg.Broker.Settings().MaxPartitions)
	hosted := hostedReplicas(img)
	adding := make(map[int32]int64)
	for _, p := range added {
		for _, r := range p.Replicas {
			adding[r]++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(adding)) {
		if hosted[id]+adding[id] > limit {
			return fmt.Errorf("%w: %d new partition replicas on node %d, which hosts %d, would exceed klog.max.partitions=%d per node",
				ErrPolicyViolation, adding[id], id, hosted[id], limit)
		}
	}
	return nil
}

// place assigns replicas to count partitions starting at index first.
// The unfenced brokers are put in rack-alternating order (one broker of
// each rack in turn, racks by name, brokers by ID; without broker.rack
// all are in one rack and the order is by ID). Partition p is led by the
// broker at (start+p) in that order, from a start that rotates with each
// call, so preferred leaders spread evenly across brokers and topics
// (as Kafka's StripedReplicaPlacer, without its shuffle). Its followers
// are the next brokers in order, first those of racks that have no
// replica of it yet, then any. The first replica leads and all replicas
// start in the ISR.
func (c *Controller) place(img *metadata.Image, first, count int32, rf int) ([]metadata.Partition, error) {
	brokers, racks := placementOrder(img)
	if rf > len(brokers) {
		return nil, errmsg.Withf(fmt.Errorf("%w: unable to replicate the partition %d time(s): the target replication factor of %d cannot be reached because only %d broker(s) are registered",
			ErrInvalidReplicationFactor, rf, rf, len(brokers)),
			"Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered or some brokers have all their log directories cordoned.",
			rf, rf, len(brokers))
	}
	start := int(c.placement.Add(1)-1) % len(brokers)
	if start < 0 {
		start += len(brokers)
	}
	parts := make([]metadata.Partition, count)
	for i := range parts {
		p := int(first) + i
		replicas := pickReplicas(brokers, racks, (start+p)%len(brokers), rf)
		parts[i] = metadata.Partition{Index: int32(p), Leader: replicas[0], Replicas: replicas, ISR: slices.Clone(replicas)}
	}
	return parts, nil
}

// placementOrder returns the active brokers (unfenced, not shutting
// down) in rack-alternating order
// and each one's rack ("" for none, a rack of its own).
func placementOrder(img *metadata.Image) ([]int32, []string) {
	byRack := map[string][]int32{}
	for _, id := range img.SortedBrokerIDs() {
		if b := img.Brokers[id]; b.Active() {
			byRack[b.Rack] = append(byRack[b.Rack], id)
		}
	}
	names := slices.Sorted(maps.Keys(byRack))
	var brokers []int32
	var racks []string
	for round := 0; len(brokers) < len(img.Brokers); round++ {
		added := false
		for _, r := range names {
			if round < len(byRack[r]) {
				brokers = append(brokers, byRack[r][round])
				racks = append(racks, r)
				added = true
			}
		}
		if !added {
			break
		}
	}
	return brokers, racks
}

// pickReplicas takes rf brokers walking the order from lead: first those
// on racks not yet holding a replica, then the rest.
func pickReplicas(brokers []int32, racks []string, lead, rf int) []int32 {
	n := len(brokers)
	picked := make([]bool, n)
	used := map[string]bool{}
	replicas := make([]int32, 0, rf)
	for pass := 0; pass < 2 && len(replicas) < rf; pass++ {
		for k := 0; k < n && len(replicas) < rf; k++ {
			i := (lead + k) % n
			if picked[i] || (pass == 0 && used[racks[i]]) {
				continue
			}
			picked[i], used[racks[i]] = true, true
			replicas = append(replicas, brokers[i])
		}
	}
	return replicas
}

// manualPartitions checks a CreateTopics manual assignment, in the
// request's order as Kafka's controller does (ReplicationControlManager.
// createTopic), and turns it into partitions numbered 0 to n-1.
func manualPartitions(img *metadata.Image, assignment []PartitionReplicas) ([]metadata.Partition, error) {
	if len(assignment) > metadata.MaxPartitions {
		return nil, fmt.Errorf("%w: %d partitions is more than the maximum %d", ErrInvalidPartitions, len(assignment), metadata.MaxPartitions)
	}
	byIndex := make(map[int32]metadata.Partition, len(assignment))
	rf := -1 // any, until the first partition sets it
	for _, a := range assignment {
		if _, ok := byIndex[a.Partition]; ok {
			return nil, errmsg.Withf(fmt.Errorf("%w: partition %d assigned twice", ErrInvalidReplicaAssignment, a.Partition),
				"Found multiple manual partition assignments for partition %d", a.Partition)
		}
		p, err := manualPartition(img, a.Partition, a.Replicas, rf)
		if err != nil {
			return nil, err
		}
		rf = len(a.Replicas)
		byIndex[a.Partition] = p
	}
	parts := make([]metadata.Partition, len(byIndex))
	for i := range parts {
		p, ok := byIndex[int32(i)]
		if !ok {
			return nil, errmsg.With(fmt.Errorf("%w: partitions must be numbered 0 to %d without gaps; %d is missing", ErrInvalidReplicaAssignment, len(parts)-1, i),
				"partitions should be a consecutive 0-based integer sequence")
		}
		parts[i] = p
	}
	return parts, nil
}

// manualPartition checks the replicas assigned by hand to partition index
// (rf of them, or any number when rf is -1) and makes the partition: its
// ISR the active ones among them, its leader the first of those.
func manualPartition(img *metadata.Image, index int32, replicas []int32, rf int) (metadata.Partition, error) {
	if err := checkReplicaList(img, replicas); err != nil {
		return metadata.Partition{}, fmt.Errorf("partition %d: %w", index, err)
	}
	if rf != -1 && len(replicas) != rf {
		return metadata.Partition{}, errmsg.Withf(fmt.Errorf("%w: partition %d has %d replicas, the others %d", ErrInvalidReplicaAssignment, index, len(replicas), rf),
			"The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).",
			len(replicas), rf)
	}
	var isr []int32
	for _, b := range replicas {
		if img.Brokers[b].Active() {
			isr = append(isr, b)
		}
	}
	if len(isr) == 0 {
		return metadata.Partition{}, errmsg.Withf(fmt.Errorf("%w: no active broker among partition %d's replicas %v", ErrInvalidReplicaAssignment, index, replicas),
			"All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", index)
	}
	return metadata.Partition{Index: index, Leader: isr[0], Replicas: slices.Clone(replicas), ISR: isr}, nil
}

// CreateACLs adds acls, checked by the caller, in one record; an ACL
// equal to one the cluster has is not added again, as Kafka's controller
// keeps one of each.
func (c *Controller) CreateACLs(ctx context.Context, acls []metadata.ACL) error {
	if err := c.CatchUp(ctx); err != nil {
		return err
	}
	held := c.Image().ACLs
	rec := &metadata.CreateACLsRecord{}
	seen := map[metadata.ACL]bool{}
	for _, a := range acls {
		if _, ok := held.ID(a); ok || seen[a] {
			continue
		}
		seen[a] = true
		id, err := metadata.NewTopicID(nil)
		if err != nil {
			return err
		}
		rec.ACLs = append(rec.ACLs, metadata.ACLEntry{ID: id, ACL: a})
	}
	if len(rec.ACLs) == 0 {
		return nil
	}
	return c.proposeAndSpread(ctx, rec)
}

// DeleteACLs removes, in one record, the ACLs each filter matches and
// returns them, by filter.
func (c *Controller) DeleteACLs(ctx context.Context, filters []func(metadata.ACL) bool) ([][]metadata.ACL, error) {
	if err := c.CatchUp(ctx); err != nil {
		return nil, err
	}
	held := c.Image().ACLs.Sorted()
	out := make([][]metadata.ACL, len(filters))
	rec := &metadata.RemoveACLsRecord{}
	removed := map[metadata.UUID]bool{}
	for i, match := range filters {
		for _, e := range held {
			if !match(e.ACL) {
				continue
			}
			out[i] = append(out[i], e.ACL)
			if !removed[e.ID] {
				removed[e.ID] = true
				rec.IDs = append(rec.IDs, e.ID)
			}
		}
	}
	if len(rec.IDs) == 0 {
		return out, nil
	}
	return out, c.proposeAndSpread(ctx, rec)
}

// proposeAndSpread commits rec and, once applied, waits for the other
// nodes to have it (spread).
func (c *Controller) proposeAndSpread(ctx context.Context, rec metadata.Record) error {
	res, err := c.propose(ctx, rec)
	if err != nil {
		return err
	}
	if res.err == nil {
		c.spread(ctx)
	}
	return res.err
}
