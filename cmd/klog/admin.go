package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
)

// adminHelp says, in the help of the commands that call the nodes' admin
// API, how they find it (adminNodes).
const adminHelp = `klog reaches the nodes through their admin API (klog up --admin-listen):
--admin or $KLOG_ADMIN, else the URL each broker of the cluster -b reaches
advertises (klog cluster admin).`

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
	_, nodes, err := g.advertisedAdmin(ctx)
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

// advertisedAdmin reads the cluster's id and the admin API each of its
// brokers advertises (inspect.AdminAPIs).
func (g *globals) advertisedAdmin(ctx context.Context) (clusterID string, nodes []inspect.NodeAdmin, err error) {
	err = withAdmin(g, func(adm *kadm.Client) error {
		ctx, cancel := context.WithTimeout(ctx, adminLookupTimeout)
		defer cancel()
		clusterID, nodes, err = inspect.AdminAPIs(ctx, adm)
		return err
	})
	return clusterID, nodes, err
}

// clusterAdminJSON is klog cluster admin's JSON.
type clusterAdminJSON struct {
	Version   int             `json:"version"`
	ClusterID string          `json:"cluster_id"`
	Nodes     []nodeAdminJSON `json:"nodes"`
}

// nodeAdminJSON is one node of clusterAdminJSON.
type nodeAdminJSON struct {
	inspect.NodeAdmin
	Error string `json:"error,omitempty"`
}

func newClusterAdminCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "admin",
		Short: "List each node's admin API URL, as the node advertises it",
		Long: `List the brokers of the cluster -b (or $KLOG_BROKERS) reaches, each with
the URL of its admin HTTP API: the read-only broker config
klog.admin.advertised.url, read with DescribeConfigs, empty (-) when the
node serves none. This is how klog topic compact, klog events, klog clock
and the TUI find the admin API when --admin is not given. Exits 1 when a
broker's configs could not be read, or it is not a klog node.`,
		Example: `  klog cluster admin
  curl -s "$(klog cluster admin --format json | jq -r '.nodes[0].url')/v1/node"`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, nodes, err := g.advertisedAdmin(cmd.Context())
			if err != nil {
				return err
			}
			failed := failures{diag: cmd.ErrOrStderr()}
			doc := clusterAdminJSON{Version: 1, ClusterID: id, Nodes: []nodeAdminJSON{}}
			for _, n := range nodes {
				j := nodeAdminJSON{NodeAdmin: n}
				if n.Err != nil {
					j.Error = n.Err.Error()
					failed.add(j.Error, "node %d", n.NodeID)
				}
				doc.Nodes = append(doc.Nodes, j)
			}
			if err := writeOutput(g, cmd.OutOrStdout(), doc, func(t *table) {
				t.row("NODE\tKAFKA\tADMIN\n")
				for _, n := range doc.Nodes {
					t.row("%d\t%s\t%s\n", n.NodeID, n.Kafka, orDash(n.URL))
				}
			}); err != nil {
				return err
			}
			return failed.err("admin API of %d of %d nodes", failed.n, len(nodes))
		},
	}
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
