package broker

// Reconciliation: the node's partition replicas follow the metadata
// image. Each new image creates the logs of the partitions this node
// replicates, drops those of deleted topics, and gives each replica its
// leader state and configs.

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/telemetry"
)

// partition returns the local replica of topic/partition, or nil.
func (n *Node) partition(topic string, index int32) *partition.Partition {
	n.mu.RLock()
	p := n.mu.parts[partitionKey{topic, index}]
	n.mu.RUnlock()
	return p
}

// partitions returns the node's local replicas, in no order.
func (n *Node) partitions() []*partition.Partition {
	n.mu.RLock()
	defer n.mu.RUnlock()
	parts := make([]*partition.Partition, 0, len(n.mu.parts))
	for _, p := range n.mu.parts {
		parts = append(parts, p)
	}
	return parts
}

// watchMetadata reconciles local partitions with each new metadata image.
func (n *Node) watchMetadata() {
	defer n.wg.Done()
	for {
		ch := n.ctrl.Changed()
		n.reconcile()
		select {
		case <-n.ctx.Done():
			return
		case <-ch:
		}
	}
}

// reconcile makes the local partition registry match the metadata image:
// creates logs for partitions this node replicates, removes those of
// deleted topics, and applies leader state and config changes. It is
// idempotent.
func (n *Node) reconcile() {
	n.reconcileMu.Lock()
	defer n.reconcileMu.Unlock()
	img := n.ctrl.Image()
	n.applyBrokerConfigs(img)
	n.applyClientMetrics(img)
	n.quotas.SetQuotas(img.ClientQuotas)

	want := make(map[partitionKey]struct{})
	resolved := make(topicConfigs, len(img.Topics))
	for _, name := range img.SortedTopicNames() {
		t, _ := img.Topic(name)
		tc := n.resolveTopicConfig(t.Configs)
		resolved[name] = resolvedTopic{meta: t, cfg: tc}
		cfg := n.logConfig(tc)
		for _, p := range t.Partitions {
			if !contains(p.Replicas, n.cfg.NodeID) {
				continue
			}
			key := partitionKey{name, p.Index}
			want[key] = struct{}{}
			if existing := n.partition(name, p.Index); existing != nil {
				if existing.TopicID() == t.ID {
					n.setLeaderState(existing, img, p)
					existing.SetConfig(cfg)
					continue
				}
				// Same name, new topic: the old one was deleted and
				// recreated while we were not looking.
				n.dropPartition(key)
			}
			l, err := n.logs.Create(name, p.Index, t.ID, cfg)
			if err != nil {
				n.logger.Error("create partition log", "topic", name, "partition", p.Index, "err", err)
				continue
			}
			hw, _ := n.logs.CheckpointedHighWatermark(name, p.Index)
			part := partition.New(name, p.Index, t.ID, l, partition.Options{
				ReplicaID:           n.cfg.NodeID,
				Logger:              n.logger.With("topic", name, "partition", p.Index),
				ReplicaLagTimeMaxMs: n.settings().Replica.LagTimeMax.Milliseconds(),
				HighWatermark:       hw,
				Durable:             n.settings().ProduceDurable,
			})
			n.mu.Lock()
			n.mu.parts[key] = part
			n.mu.Unlock()
			n.setLeaderState(part, img, p)
		}
	}
	if prev := n.topics.Swap(&resolved); prev != nil {
		n.deleted.update(*prev, resolved)
	}
	n.stats.dropDeletedTopics(img)
	n.mu.RLock()
	var stale []partitionKey
	for key := range n.mu.parts {
		if _, ok := want[key]; !ok {
			stale = append(stale, key)
		}
	}
	n.mu.RUnlock()
	for _, key := range stale {
		n.dropPartition(key)
	}
	n.reconcileInternalTopic(img, n.offsets)
	n.reconcileInternalTopic(img, n.txnState)
	n.reconciled.mark(img.Index)
}

// reconciledIndex is the metadata index of the last image reconcile put
// in effect, for settle to wait on.
type reconciledIndex struct {
	mu    sync.Mutex
	index uint64
	// moved is closed, and replaced, when index moves.
	moved chan struct{}
}

func (r *reconciledIndex) mark(index uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if index <= r.index && r.moved != nil {
		return
	}
	r.index = index
	if r.moved != nil {
		close(r.moved)
	}
	r.moved = make(chan struct{})
}

// reached reports whether index is in effect, and otherwise returns a
// channel closed when the index moves.
func (r *reconciledIndex) reached(index uint64) (bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.moved == nil {
		r.moved = make(chan struct{})
	}
	return r.index >= index, r.moved
}

// settle waits until the node has put in effect the metadata image it
// holds now (watchMetadata reconciles each new one: partitions created
// or removed, leader states and configs applied), or until ctx ends. An
// admin request that changed metadata settles before it answers, so that
// the change is in effect on this node when the client learns of it. The
// controller has committed the change by then, so a node slower than the
// request's timeout (thousands of new partitions on a loaded machine)
// answers when the timeout ends rather than after it, when the client
// would have sent the request again and been told the topic exists.
func (n *Node) settle(ctx context.Context) {
	want := n.ctrl.Image().Index
	for {
		ok, moved := n.reconciled.reached(want)
		if ok {
			return
		}
		select {
		case <-moved:
		case <-ctx.Done():
			n.logger.Warn("answering before the change is in effect on this node: the request's timeout ended", "index", want, "err", ctx.Err())
			return
		}
	}
}

// applyBrokerConfigs puts img's dynamic broker configs (the cluster-wide
// defaults and this node's) over the static ones, when they changed.
// reconcile then resolves every topic's configs again with them and gives
// the logs their new settings: a topic without its own override picks up
// a new log.retention.ms or log.segment.bytes at once.
func (n *Node) applyBrokerConfigs(img *metadata.Image) {
	if b := n.brokerConfig(img); b != n.broker.Load() {
		n.broker.Store(b)
	}
}

// applyClientMetrics gives the telemetry receiver img's client metrics
// resources as its subscriptions (KIP-714), when they changed. The
// controller checked each when it was set; one that no longer parses is
// left out and logged.
func (n *Node) applyClientMetrics(img *metadata.Image) {
	if maps.EqualFunc(n.clientMetrics, img.ClientMetrics, maps.Equal) && (n.clientMetrics == nil) == (img.ClientMetrics == nil) {
		return
	}
	subs := make([]telemetry.Subscription, 0, len(img.ClientMetrics))
	for _, name := range slices.Sorted(maps.Keys(img.ClientMetrics)) {
		s, err := telemetry.ParseSubscription(name, img.ClientMetrics[name])
		if err != nil {
			n.logger.Warn("client metrics resource left out of the telemetry subscriptions", "name", name, "err", err)
			continue
		}
		subs = append(subs, s)
	}
	n.telemetry.SetSubscriptions(subs)
	n.clientMetrics = img.ClientMetrics
}

// brokerConfig is the node's broker configs with img's dynamic ones over
// the static ones: those reconcile applied when they are img's, else
// resolved now, so that an answer right after a change (DescribeConfigs
// on the node that committed it) already shows it.
func (n *Node) brokerConfig(img *metadata.Image) *config.Broker {
	clusterDefault, own := img.BrokerConfigs[""], img.BrokerConfigs[strconv.Itoa(int(n.cfg.NodeID))]
	cur := n.broker.Load()
	if cur.DynamicEqual(clusterDefault, own) {
		return cur
	}
	b, err := n.static.WithDynamic(clusterDefault, own)
	if err != nil {
		n.logger.Warn("dynamic broker configs", "err", err)
	}
	return b
}

// setLeaderState gives part its leader state from the image's p and its
// role with it: as leader it is fetched by nobody here (its follower
// states are kept or reset by SetLeaderState); as follower its leader's
// fetcher fetches it, truncating first at a new leader or epoch; with no
// leader it is fetched by nobody.
func (n *Node) setLeaderState(part *partition.Partition, img *metadata.Image, p metadata.Partition) {
	prev := part.LeaderState()
	defer func() { n.recordLeaderState(part, prev, part.LeaderState()) }()
	if p.Leader == n.cfg.NodeID || p.Leader < 0 {
		// Fetching stops before the replica leads, as Kafka's
		// makeLeader removes the fetcher first: no replicated append
		// races the first append as leader.
		n.replicas.Unfollow(part)
		part.SetLeaderState(leaderState(img, p))
	} else {
		part.SetLeaderState(leaderState(img, p))
		n.replicas.Follow(part, p.Leader)
	}
	n.stats.isrChanged(n.cfg.NodeID, prev, part.LeaderState())
	if prev.Leader != p.Leader || prev.Epoch != p.LeaderEpoch {
		n.logger.Debug("replica role", "topic", part.Topic(), "partition", part.Index(),
			"leader", p.Leader, "leader_epoch", p.LeaderEpoch, "is_leader", p.Leader == n.cfg.NodeID)
	}
}

// brokerAddr is broker id's host:port on the inter-broker listener, as
// the current metadata image has it; false if the image has no such broker, or if unfenced is set and it
// is fenced. The coordinators' peers ask for unfenced brokers only (a
// fenced node is not sent markers or verifications); the fetchers for any
// broker the image has: a follower fetches from the leader it names.
func (n *Node) brokerAddr(id int32, unfenced bool) (string, bool) {
	b, ok := n.ctrl.Image().Brokers[id]
	if !ok || unfenced && b.Fenced {
		return "", false
	}
	return b.EndpointAddr(n.interBroker)
}

// leaderState is a partition's leader state as the metadata image img
// has it.
func leaderState(img *metadata.Image, p metadata.Partition) partition.LeaderState {
	var ineligible []int32
	for _, id := range p.Replicas {
		if b, ok := img.Brokers[id]; !ok || !b.Active() {
			ineligible = append(ineligible, id)
		}
	}
	return partition.LeaderState{
		Leader:         p.Leader,
		Epoch:          p.LeaderEpoch,
		PartitionEpoch: p.PartitionEpoch,
		Replicas:       p.Replicas,
		ISR:            p.ISR,
		Ineligible:     ineligible,
	}
}

func (n *Node) dropPartition(key partitionKey) {
	n.mu.Lock()
	p := n.mu.parts[key]
	delete(n.mu.parts, key)
	n.mu.Unlock()
	if p != nil {
		n.replicas.Unfollow(p)
		p.Close()
	}
	if err := n.logs.Delete(key.topic, key.partition); err != nil {
		n.logger.Error("delete partition log", "topic", key.topic, "partition", key.partition, "err", err)
	}
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
