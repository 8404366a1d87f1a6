package broker

// Leader hints (KIP-951): a Produce (v10+) partition refused
// NOT_LEADER_OR_FOLLOWER, and a Fetch (v16+) partition refused
// NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH, carry the current leader
// and its epoch, and the response lists the endpoints of those leaders,
// so that the client can go there without asking for metadata first, as
// Kafka's KafkaApis.handleProduceRequest and handleFetchRequest do.

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
)

// leaderHints gathers the leaders named in one response's hints and their
// endpoints.
type leaderHints struct {
	n       *Node
	img     *metadata.Image
	brokers map[int32]metadata.Broker
}

func (n *Node) leaderHints() *leaderHints {
	return &leaderHints{n: n, img: n.ctrl.Image()}
}

// leader is Kafka's KafkaApis.getCurrentLeader: the leader and leader
// epoch of this node's replica of the partition when it hosts one (-1 for
// no leader), else the metadata image's, else (-1, -1). The leader's
// endpoint is listed when it is a registered broker that is not fenced
// (MetadataCache.getAliveBrokerNode).
func (h *leaderHints) leader(topic string, index int32) (leader, epoch int32) {
	leader, epoch = -1, -1
	if p := h.n.partition(topic, index); p != nil {
		st := p.LeaderState()
		leader, epoch = st.Leader, st.Epoch
	} else if t, ok := h.img.Topic(topic); ok && index >= 0 && int(index) < len(t.Partitions) {
		leader, epoch = t.Partitions[index].Leader, t.Partitions[index].LeaderEpoch
	}
	if b, ok := h.img.Brokers[leader]; ok && !b.Fenced {
		if h.brokers == nil {
			h.brokers = map[int32]metadata.Broker{}
		}
		h.brokers[leader] = b
	}
	return leader, epoch
}

// sorted is the endpoints gathered, by broker id.
func (h *leaderHints) sorted() []metadata.Broker {
	out := make([]metadata.Broker, 0, len(h.brokers))
	for _, b := range h.brokers {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b metadata.Broker) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func rackPtr(rack string) *string {
	if rack == "" {
		return nil
	}
	return &rack
}

// addProduceLeaderHints puts the hints in a Produce response of v10+.
func (n *Node) addProduceLeaderHints(req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) {
	if req.Version < 10 {
		return
	}
	h := n.leaderHints()
	for ti := range resp.Topics {
		st := &resp.Topics[ti]
		name := st.Topic
		if req.Version >= 13 {
			t, ok := h.img.TopicByID(st.TopicID)
			if !ok {
				continue
			}
			name = t.Name
		}
		for pi := range st.Partitions {
			sp := &st.Partitions[pi]
			if sp.ErrorCode == kerr.NotLeaderForPartition.Code {
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = h.leader(name, sp.Partition)
			}
		}
	}
	resp.Brokers = resp.Brokers[:0]
	for _, b := range h.sorted() {
		resp.Brokers = append(resp.Brokers, kmsg.ProduceResponseBroker{NodeID: b.ID, Host: b.Host, Port: b.Port, Rack: rackPtr(b.Rack)})
	}
}

// addFetchLeaderHints puts the hints in a Fetch response of v16+.
func (n *Node) addFetchLeaderHints(req *kmsg.FetchRequest, resp *kmsg.FetchResponse) {
	resp.Brokers = resp.Brokers[:0]
	if req.Version < 16 {
		return
	}
	h := n.leaderHints()
	for ti := range resp.Topics {
		st := &resp.Topics[ti]
		t, ok := h.img.TopicByID(st.TopicID)
		if !ok {
			continue
		}
		for pi := range st.Partitions {
			sp := &st.Partitions[pi]
			if sp.ErrorCode == kerr.NotLeaderForPartition.Code || sp.ErrorCode == kerr.FencedLeaderEpoch.Code {
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = h.leader(t.Name, sp.Partition)
			}
		}
	}
	for _, b := range h.sorted() {
		resp.Brokers = append(resp.Brokers, kmsg.FetchResponseBroker{NodeID: b.ID, Host: b.Host, Port: b.Port, Rack: rackPtr(b.Rack)})
	}
}
