package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
)

// adminLookupTimeout bounds the lookup of the nodes' admin API from the
// brokers; clusterIDTimeout the question a command asks the brokers to
// check it picked their cluster (a cluster that does not answer in time is
// picked by its addresses alone).
const (
	adminLookupTimeout = 15 * time.Second
	clusterIDTimeout   = 3 * time.Second
)

// adminNodes returns a client of each node's admin API, each call bounded
// by timeout: those of --admin (or $KLOG_ADMIN) as given; else those the
// brokers the command is pointed at advertise (inspect.AdminAPIs), so
// they are the nodes of exactly that cluster.
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
	var nodes []inspect.NodeAdmin
	err := withAdmin(g, func(adm *kadm.Client) error {
		ctx, cancel := context.WithTimeout(ctx, adminLookupTimeout)
		defer cancel()
		var err error
		_, nodes, err = inspect.AdminAPIs(ctx, adm)
		return err
	})
	const hint = "; give the nodes' admin API addresses with --admin or $KLOG_ADMIN"
	if err != nil {
		return nil, fmt.Errorf("find the admin API from the brokers at %s: %w%s", g.brokers, err, hint)
	}
	var errs []error
	for _, n := range nodes {
		switch {
		case n.Err != nil:
			errs = append(errs, n.Err)
		case n.URL != "":
			addrs = append(addrs, n.URL)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("find the admin API from the brokers at %s: %w%s", g.brokers, err, hint)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("the cluster at %s runs without admin API (klog up --admin-listen off)", g.brokers)
	}
	return clients(addrs, timeout), nil
}

// clusterID is the id of the cluster the brokers at seeds belong to, as
// their metadata reports it.
func (g *globals) clusterID(ctx context.Context, seeds []string) (string, error) {
	cl, err := g.newClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, clusterIDTimeout)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	return md.Cluster, err
}

// clients returns a client of each address, each call bounded by timeout.
func clients(addrs []string, timeout time.Duration) []*nodeapi.Client {
	out := make([]*nodeapi.Client, len(addrs))
	for i, a := range addrs {
		out[i] = nodeapi.NewClient(a, timeout)
	}
	return out
}
