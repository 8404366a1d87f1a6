package broker

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
)

// What a node counts and shows for its metrics (GET /metrics of the admin
// API, broker/adminapi, which alone knows the metrics library): plain
// values. Counters are atomics bumped where the work is done: dispatch
// times every request it decoded, Produce counts what it appended, Fetch
// the record bytes it answers consumers with, setLeaderState the ISR
// changes a leader sees. Everything else is computed when asked, from
// snapshots: Stats reads each local replica's state and the metadata
// image, GroupLags the group coordinator's committed offsets against the
// local replicas' high watermarks. Nothing runs in the background.
//
// Bounds: request times are kept per API key (a fixed array); topic
// counters per topic the node served, only topics of the metadata image,
// and reconcile drops those of deleted topics; GroupLags returns at most
// the entries asked for.

// requestTimeBuckets are the upper bounds of the request time histogram's
// buckets; a last bucket holds the longer ones. A fetch's long poll
// (fetch.max.wait.ms, 500 ms by default) and an acks=all produce's wait
// for its followers are part of the time, as in Kafka's TotalTimeMs.
var requestTimeBuckets = [...]time.Duration{
	500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
	250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond,
	5 * time.Second, 10 * time.Second, 30 * time.Second,
}

// RequestTimeBucketsMs are the upper bounds, in milliseconds, of the
// buckets of RequestStats.Buckets.
func RequestTimeBucketsMs() []float64 {
	out := make([]float64, len(requestTimeBuckets))
	for i, b := range requestTimeBuckets {
		out[i] = float64(b) / float64(time.Millisecond)
	}
	return out
}

// requestTimes is a histogram of one kind of request's times.
type requestTimes struct {
	sumNanos atomic.Uint64
	// buckets count the requests by the first bound not below their
	// time; the last counts those above every bound.
	buckets [len(requestTimeBuckets) + 1]atomic.Uint64
}

func (r *requestTimes) observe(d time.Duration) {
	d = max(d, 0)
	i := 0
	for i < len(requestTimeBuckets) && d > requestTimeBuckets[i] {
		i++
	}
	r.buckets[i].Add(1)
	r.sumNanos.Add(uint64(d))
}

func (r *requestTimes) snapshot(name string) RequestStats {
	s := RequestStats{Request: name, Buckets: make([]uint64, len(requestTimeBuckets))}
	for i := range r.buckets {
		s.Count += r.buckets[i].Load()
		if i < len(requestTimeBuckets) {
			s.Buckets[i] = s.Count
		}
	}
	s.SumMs = float64(r.sumNanos.Load()) / float64(time.Millisecond)
	return s
}

// topicCounters are what a node served of one topic: the record bytes
// appended by produce requests and answered to consumers' fetches, and the
// records appended, as Kafka's BrokerTopicMetrics (replication not
// counted).
type topicCounters struct {
	bytesIn, bytesOut, messagesIn atomic.Uint64
}

// nodeStats are a node's counters.
type nodeStats struct {
	requests [kmsg.MaxKey + 1]requestTimes
	// fetchConsumer and fetchFollower split Fetch by who sent it, as
	// Kafka's RequestMetrics do (FetchConsumer, FetchFollower).
	fetchConsumer, fetchFollower requestTimes
	topics                       sync.Map // topic name -> *topicCounters
	isrShrinks, isrExpands       atomic.Uint64
}

// topic is the counters of topic, a topic of the metadata image.
func (s *nodeStats) topic(name string) *topicCounters {
	if c, ok := s.topics.Load(name); ok {
		return c.(*topicCounters)
	}
	c, _ := s.topics.LoadOrStore(name, new(topicCounters))
	return c.(*topicCounters)
}

// produced counts a produce request's append to topic: its bytes and
// records.
func (s *nodeStats) produced(topic string, bytes, records int) {
	c := s.topic(topic)
	c.bytesIn.Add(uint64(bytes))
	c.messagesIn.Add(uint64(records))
}

// countBytesOut counts the record bytes of a consumer's fetch response,
// per topic.
func (n *Node) countBytesOut(req *kmsg.FetchRequest, resp *kmsg.FetchResponse) {
	var img *metadata.Image
	for ti := range resp.Topics {
		size := 0
		for pi := range resp.Topics[ti].Partitions {
			size += len(resp.Topics[ti].Partitions[pi].RecordBatches)
		}
		if size == 0 {
			continue
		}
		if img == nil {
			img = n.ctrl.Image()
		}
		// Named from the response: an incremental fetch answers fewer
		// topics than it read.
		name := resp.Topics[ti].Topic
		if req.Version >= 13 {
			name = ""
			if t, ok := img.TopicByID(resp.Topics[ti].TopicID); ok {
				name = t.Name
			}
		}
		if img.Topics[name] != nil {
			n.stats.topic(name).bytesOut.Add(uint64(size))
		}
	}
}

// dropDeletedTopics forgets the counters of the topics img does not have.
func (s *nodeStats) dropDeletedTopics(img *metadata.Image) {
	s.topics.Range(func(k, _ any) bool {
		if _, ok := img.Topics[k.(string)]; !ok {
			s.topics.Delete(k)
		}
		return true
	})
}

// requestDone counts a request dispatched with key that took d.
func (s *nodeStats) requestDone(key int16, req kmsg.Request, d time.Duration) {
	s.requests[key].observe(d)
	if f, ok := req.(*kmsg.FetchRequest); ok {
		if fetchReplicaID(f) >= 0 {
			s.fetchFollower.observe(d)
		} else {
			s.fetchConsumer.observe(d)
		}
	}
}

// isrChanged counts the ISR change from prev to next of a partition this
// node leads in both, at one leader epoch: a shrink when a replica left,
// an expand when one joined, once per change, as Kafka's leader marks
// IsrShrinksPerSec and IsrExpandsPerSec. klog counts every such change
// the leader sees, the controller's own too (a fenced broker leaving the
// ISR), where Kafka's leader counts those it proposed.
func (s *nodeStats) isrChanged(self int32, prev, next partition.LeaderState) {
	if prev.Leader != self || next.Leader != self || prev.Epoch != next.Epoch {
		return
	}
	if slices.ContainsFunc(prev.ISR, func(id int32) bool { return !slices.Contains(next.ISR, id) }) {
		s.isrShrinks.Add(1)
	}
	if slices.ContainsFunc(next.ISR, func(id int32) bool { return !slices.Contains(prev.ISR, id) }) {
		s.isrExpands.Add(1)
	}
}

// kafkaAPINames are Kafka's names of the APIs whose kmsg name differs
// (kmsg.NameForKey), for RequestStats.Request.
var kafkaAPINames = map[kmsg.Key]string{
	kmsg.InitProducerID:            "InitProducerId",
	kmsg.AlterPartitionAssignments: "AlterPartitionReassignments",
}

// Stats is a snapshot of a node's counters and of its replicas, for its
// metrics.
type Stats struct {
	// ActiveController is set on the node that leads the metadata quorum.
	ActiveController bool
	// OfflinePartitions, on the active controller only (0 elsewhere, as
	// Kafka reports it), counts the partitions of the metadata image
	// without a leader.
	OfflinePartitions int
	// Replicas are the node's replicas, by topic and partition.
	Replicas []ReplicaStats
	// Topics are the counters of the topics the node served (and that
	// still exist), by name.
	Topics []TopicStats
	// IsrShrinks and IsrExpands count the ISR changes of the partitions
	// the node leads (nodeStats.isrChanged).
	IsrShrinks, IsrExpands uint64
	// Requests are the times of the requests of every API the node
	// serves, by Kafka's API name, and of Fetch again as FetchConsumer
	// and FetchFollower.
	Requests []RequestStats
}

// ReplicaStats is one local replica's state.
type ReplicaStats struct {
	Topic     string
	Partition int32
	Leader    bool // this replica leads the partition
	// Replicas and ISR are the sizes of the assigned replicas and of the
	// in-sync ones; MinISR the min.insync.replicas in effect, capped by
	// Replicas as Kafka's effectiveMinIsr.
	Replicas, ISR, MinISR int
	// Size is the log's segments' bytes (Kafka's Log Size).
	Size                         int64
	LogStartOffset, LogEndOffset int64
	HighWatermark                int64
}

// TopicStats is the counters of one topic.
type TopicStats struct {
	Topic                         string
	BytesIn, BytesOut, MessagesIn uint64
}

// RequestStats is the histogram of one kind of request's times.
type RequestStats struct {
	Request string
	Count   uint64
	SumMs   float64
	// Buckets count the requests that took no longer than each bound of
	// RequestTimeBucketsMs, cumulative.
	Buckets []uint64
}

// Stats snapshots the node's counters and replicas. It holds the node's
// registry lock only to copy the list of replicas.
func (n *Node) Stats() Stats {
	img := n.ctrl.Image()
	st := Stats{
		ActiveController: n.ctrl.IsLeader(),
		IsrShrinks:       n.stats.isrShrinks.Load(),
		IsrExpands:       n.stats.isrExpands.Load(),
	}
	if st.ActiveController {
		for _, t := range img.Topics {
			for _, p := range t.Partitions {
				if p.Leader < 0 {
					st.OfflinePartitions++
				}
			}
		}
	}
	for _, p := range n.partitions() {
		ls := p.LeaderState()
		r := ReplicaStats{
			Topic: p.Topic(), Partition: p.Index(), Leader: p.IsLeader(),
			Replicas: len(ls.Replicas), ISR: len(ls.ISR), MinISR: len(ls.Replicas),
			Size: p.Size(), LogStartOffset: p.LogStartOffset(), LogEndOffset: p.LogEndOffset(), HighWatermark: p.HighWatermark(),
		}
		if t, ok := img.Topic(p.Topic()); ok {
			r.MinISR = min(int(n.topicConfig(t).MinInsyncReplicas), r.Replicas)
		}
		st.Replicas = append(st.Replicas, r)
	}
	slices.SortFunc(st.Replicas, func(a, b ReplicaStats) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	n.stats.topics.Range(func(k, v any) bool {
		c := v.(*topicCounters)
		st.Topics = append(st.Topics, TopicStats{Topic: k.(string), BytesIn: c.bytesIn.Load(), BytesOut: c.bytesOut.Load(), MessagesIn: c.messagesIn.Load()})
		return true
	})
	slices.SortFunc(st.Topics, func(a, b TopicStats) int { return cmp.Compare(a.Topic, b.Topic) })
	for _, a := range apiTable() {
		name := kmsg.NameForKey(a.key.Int16())
		if k, ok := kafkaAPINames[a.key]; ok {
			name = k
		}
		st.Requests = append(st.Requests, n.stats.requests[a.key].snapshot(name))
		if a.key == kmsg.Fetch {
			st.Requests = append(st.Requests, n.stats.fetchConsumer.snapshot(name+"Consumer"), n.stats.fetchFollower.snapshot(name+"Follower"))
		}
	}
	return st
}

// GroupLag is how far one group's committed offset of a partition is
// behind the partition's high watermark.
type GroupLag struct {
	Group         string
	Topic         string
	Partition     int32
	Committed     int64
	HighWatermark int64
	Lag           int64 // HighWatermark - Committed, not below 0
}

// GroupLags returns the lag of the groups this node coordinates on the
// partitions it has a replica of (the high watermark a follower learned
// from its leader's last answer), sorted by group, topic and partition:
// at most limit of them, truncated set when there were more. A group's
// partition with no local replica has no entry: another node's high
// watermark would take a request to learn.
func (n *Node) GroupLags(ctx context.Context, limit int) (lags []GroupLag, truncated bool) {
	offs, truncated := n.groups.CommittedOffsets(ctx, limit)
	for _, o := range offs {
		p := n.partition(o.Topic, o.Partition)
		if p == nil {
			continue
		}
		hw := p.HighWatermark()
		lags = append(lags, GroupLag{Group: o.Group, Topic: o.Topic, Partition: o.Partition, Committed: o.Offset, HighWatermark: hw, Lag: max(hw-o.Offset, 0)})
	}
	return lags, truncated
}
