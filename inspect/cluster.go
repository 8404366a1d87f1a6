package inspect

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Broker is one broker as the metadata lists it.
type Broker struct {
	NodeID     int32  `json:"node_id"`
	Address    string `json:"address"` // host:port
	Rack       string `json:"rack,omitempty"`
	Controller bool   `json:"controller"`
}

// ClusterOverview is the cluster as one Metadata answer shows it: its
// brokers and how healthy its partitions are.
type ClusterOverview struct {
	ClusterID  string   `json:"cluster_id"`
	Controller int32    `json:"controller"` // -1 when unknown
	Brokers    []Broker `json:"brokers"`    // sorted by node id
	Topics     int      `json:"topics"`     // internal ones included
	Partitions int      `json:"partitions"`
	// UnderReplicated counts the partitions whose ISR is smaller than
	// their replica set; Offline those without a leader.
	UnderReplicated int `json:"under_replicated"`
	Offline         int `json:"offline"`
	// TopicErrors counts the topics the metadata answered with an error;
	// they are not counted in Topics or Partitions.
	TopicErrors int `json:"topic_errors"`
}

// Overview reads the cluster's metadata, internal topics included, and
// counts its topics and partitions and those that are under-replicated or
// offline.
func Overview(ctx context.Context, adm *kadm.Client) (ClusterOverview, error) {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return ClusterOverview{}, fmt.Errorf("metadata: %w", err)
	}
	return overviewOf(md), nil
}

// overviewOf counts what Overview reports in a Metadata answer.
func overviewOf(md kadm.Metadata) ClusterOverview {
	o := ClusterOverview{ClusterID: md.Cluster, Controller: md.Controller, Brokers: []Broker{}}
	for _, b := range md.Brokers {
		br := Broker{NodeID: b.NodeID, Address: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), Controller: b.NodeID == md.Controller}
		if b.Rack != nil {
			br.Rack = *b.Rack
		}
		o.Brokers = append(o.Brokers, br)
	}
	slices.SortFunc(o.Brokers, func(a, b Broker) int { return int(a.NodeID) - int(b.NodeID) })
	for _, t := range md.Topics {
		if t.Err != nil {
			o.TopicErrors++
			continue
		}
		o.Topics++
		for _, p := range t.Partitions {
			o.Partitions++
			if p.Leader < 0 {
				o.Offline++
			}
			if len(p.ISR) < len(p.Replicas) {
				o.UnderReplicated++
			}
		}
	}
	return o
}
