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
	// listener is the listener the request came on: the endpoints named
	// are of it, and a broker without it is left out.
	listener string
}

func (n *Node) leaderHints(listener string) *leaderHints {
	return &leaderHints{n: n, img: n.ctrl.Image(), listener: listener}
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
	if b, ok := h.img.Brokers[leader]; ok && !b.Fenced && hasEndpoint(b, h.listener) {
		if h.brokers == nil {
			h.brokers = map[int32]metadata.Broker{}
		}
		h.brokers[leader] = b
	}
	return leader, epoch
}

// hintBroker is a broker a hint names, at its endpoint of the request's
// listener.
type hintBroker struct {
	metadata.Endpoint
	ID   int32
	Rack string
}

// sorted is the endpoints gathered, by broker id.
func (h *leaderHints) sorted() []hintBroker {
	out := make([]hintBroker, 0, len(h.brokers))
	for _, b := range h.brokers {
		e, _ := b.Endpoint(h.listener)
		out = append(out, hintBroker{Endpoint: e, ID: b.ID, Rack: b.Rack})
	}
	slices.SortFunc(out, func(a, b hintBroker) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// hasEndpoint reports whether b has a listener named listener.
func hasEndpoint(b metadata.Broker, listener string) bool {
	_, ok := b.Endpoint(listener)
	return ok
}

func rackPtr(rack string) *string {
	if rack == "" {
		return nil
	}
	return &rack
}

// addProduceLeaderHints puts the hints in a Produce response of v10+.
func (n *Node) addProduceLeaderHints(listener string, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) {
	if req.Version < 10 {
		return
	}
	h := n.leaderHints(listener)
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
func (n *Node) addFetchLeaderHints(listener string, req *kmsg.FetchRequest, resp *kmsg.FetchResponse) {
	resp.Brokers = resp.Brokers[:0]
	if req.Version < 16 {
		return
	}
	h := n.leaderHints(listener)
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
