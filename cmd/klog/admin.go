package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/supervisor"
)

// adminNodes returns a client of each node's admin API, each call bounded
// by timeout: those of --admin (or $KLOG_ADMIN) as given; else, for a
// cluster of klog up -n found from the brokers, its nodes'; else klog up's
// default, 127.0.0.1:9644, once it says it serves one of the brokers.
func (g *globals) adminNodes(ctx context.Context, timeout time.Duration) ([]*nodeapi.Client, error) {
	var addrs []string
	for _, a := range strings.Split(g.admin, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) > 0 {
		return clients(addrs, timeout), nil
	}
	if stateDir, err := defaultStateDir(g.getenv); err == nil {
		if socket, err := supervisor.Find(stateDir, g.seeds()); err == nil {
			resp, err := supervisor.Call(ctx, socket, supervisor.Request{Op: "list", Node: -1})
			if err != nil {
				return nil, err
			}
			for _, n := range resp.Nodes {
				if n.Admin != "" {
					addrs = append(addrs, n.Admin)
				}
			}
			if len(addrs) == 0 {
				return nil, fmt.Errorf("the cluster at %s runs without admin API (--admin-listen off)", g.brokers)
			}
			return clients(addrs, timeout), nil
		}
	}
	c := nodeapi.NewClient(nodeapi.DefaultAddr, timeout)
	n, err := c.Node(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w; give the nodes' admin API addresses with --admin or $KLOG_ADMIN", err)
	}
	if !slices.Contains(g.seeds(), n.Kafka) {
		return nil, fmt.Errorf("the admin API at %s is node %d of the broker at %s, not of %s; give the nodes' admin API addresses with --admin or $KLOG_ADMIN", c.Addr(), n.NodeID, n.Kafka, g.brokers)
	}
	return []*nodeapi.Client{c}, nil
}

// clients returns a client of each address, each call bounded by timeout.
func clients(addrs []string, timeout time.Duration) []*nodeapi.Client {
	out := make([]*nodeapi.Client, len(addrs))
	for i, a := range addrs {
		out[i] = nodeapi.NewClient(a, timeout)
	}
	return out
}
