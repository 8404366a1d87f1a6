package inspect

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// nodeAnswerTimeout bounds how long Health waits for one node's answer.
const nodeAnswerTimeout = 2 * time.Second

// Health is whether a cluster serves its partitions fully: every node
// answers, a controller is known, every partition has a leader and an ISR
// of at least min.insync.replicas (or all its replicas, when it has
// fewer).
type Health struct {
	Healthy    bool  `json:"healthy"`
	Controller int32 `json:"controller"` // -1 when unknown
	// Nodes are the brokers of the metadata and the nodes its partitions
	// name as replicas, sorted by id.
	Nodes      []NodeHealth `json:"nodes"`
	Partitions int          `json:"partitions"`
	// Problems says what is wrong, one line each; empty when Healthy.
	Problems []string `json:"problems"`
}

// NodeHealth is one node as Health saw it.
type NodeHealth struct {
	NodeID  int32  `json:"node_id"`
	Address string `json:"address,omitempty"` // empty when not in the metadata
	Answers bool   `json:"answers"`
	Error   string `json:"error,omitempty"`
}

// maxPartitionProblems bounds how many partitions Health names; the rest
// are counted.
const maxPartitionProblems = 10

// CheckHealth asks the cluster of cl (adm its admin client) whether it is
// healthy. It returns an error only when the metadata cannot be read at
// all; what is wrong with a cluster that answers is in Problems.
func CheckHealth(ctx context.Context, cl *kgo.Client, adm *kadm.Client) (Health, error) {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return Health{}, fmt.Errorf("metadata: %w", err)
	}
	h := Health{Controller: md.Controller, Nodes: []NodeHealth{}, Problems: []string{}}
	if md.Controller < 0 {
		h.Problems = append(h.Problems, "no controller is known")
	}
	nodes := map[int32]*NodeHealth{}
	for _, b := range md.Brokers {
		nodes[b.NodeID] = &NodeHealth{NodeID: b.NodeID, Address: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))}
	}
	minISR := map[string]int{}
	if rcs, err := adm.DescribeTopicConfigs(ctx, md.Topics.Names()...); err == nil {
		for _, rc := range rcs {
			for _, c := range rc.Configs {
				if c.Key == "min.insync.replicas" && c.Value != nil {
					minISR[rc.Name], _ = strconv.Atoi(*c.Value)
				}
			}
		}
	} else {
		h.Problems = append(h.Problems, fmt.Sprintf("describe topic configs: %v", err))
	}
	partitions, bad := partitionProblems(md, minISR, nodes)
	h.Partitions = partitions
	ids := make([]int32, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		n := nodes[id]
		switch {
		case n.Address == "":
			n.Error = "is a replica but not in the metadata"
		default:
			actx, cancel := context.WithTimeout(ctx, nodeAnswerTimeout)
			// A metadata request for no topic: the node answers requests.
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = []kmsg.MetadataRequestTopic{}
			_, err := req.RequestWith(actx, cl.Broker(int(id)))
			cancel()
			if err != nil {
				n.Error = err.Error()
			} else {
				n.Answers = true
			}
		}
		switch {
		case n.Answers:
		case n.Address == "":
			h.Problems = append(h.Problems, fmt.Sprintf("node %d %s", id, n.Error))
		default:
			h.Problems = append(h.Problems, fmt.Sprintf("node %d (%s) does not answer: %s", id, n.Address, n.Error))
		}
		h.Nodes = append(h.Nodes, *n)
	}
	if len(bad) > maxPartitionProblems {
		bad = append(bad[:maxPartitionProblems], fmt.Sprintf("and %d more partitions", len(bad)-maxPartitionProblems))
	}
	h.Problems = append(h.Problems, bad...)
	h.Healthy = len(h.Problems) == 0
	return h, nil
}

// WaitHealthy checks the cluster's health until it is healthy or ctx ends,
// and returns what it saw last; the error is the last one CheckHealth
// returned when no check could read the metadata.
func WaitHealthy(ctx context.Context, cl *kgo.Client, adm *kadm.Client) (Health, error) {
	backoff := firstBackoff
	for {
		h, err := CheckHealth(ctx, cl, adm)
		if err == nil && h.Healthy {
			return h, nil
		}
		if !pause(ctx, &backoff) {
			return h, err
		}
	}
}

// partitionProblems checks md's partitions: each has a leader and an ISR
// of at least minISR of its topic (1 when unknown), or all its replicas
// when it has fewer. It adds the replicas not in nodes to nodes, and
// returns how many partitions there are and what is wrong with them.
func partitionProblems(md kadm.Metadata, minISR map[string]int, nodes map[int32]*NodeHealth) (partitions int, bad []string) {
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil {
			bad = append(bad, fmt.Sprintf("topic %s: %v", t.Topic, t.Err))
			continue
		}
		for _, p := range t.Partitions.Sorted() {
			partitions++
			for _, r := range p.Replicas {
				if nodes[r] == nil {
					nodes[r] = &NodeHealth{NodeID: r}
				}
			}
			want := min(max(minISR[t.Topic], 1), len(p.Replicas))
			switch {
			case p.Err != nil:
				bad = append(bad, fmt.Sprintf("%s/%d: %v", t.Topic, p.Partition, p.Err))
			case p.Leader < 0:
				bad = append(bad, fmt.Sprintf("%s/%d has no leader (replicas %v)", t.Topic, p.Partition, p.Replicas))
			case len(p.ISR) < want:
				bad = append(bad, fmt.Sprintf("%s/%d has ISR %v of replicas %v, under min.insync.replicas %d", t.Topic, p.Partition, p.ISR, p.Replicas, want))
			}
		}
	}
	return partitions, bad
}
