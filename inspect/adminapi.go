package inspect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/nodeapi"
)

// AdminURLConfig is the read-only broker config in which a klog node
// advertises its admin API, http://HOST:PORT, empty when it serves none.
// Kafka has no such config.
const AdminURLConfig = "klog.admin.advertised.url"

// ErrNoAdminURL reports brokers that do not advertise an admin API URL:
// not klog's, or nodes that serve no admin API.
var ErrNoAdminURL = errors.New("no admin API advertised")

// NodeAdmin is one broker's admin API as the broker advertises it.
type NodeAdmin struct {
	NodeID int32  `json:"node_id"`
	Kafka  string `json:"kafka"` // host:port
	// URL is klog.admin.advertised.url: empty when the node serves no
	// admin API or when Err is set.
	URL string `json:"url,omitempty"`
	// Err says why the broker's configs could not be read.
	Err error `json:"-"`
}

// AdminAPIs reads the cluster's id and, from every broker its metadata
// lists, the admin API URL the broker advertises (AdminURLConfig in
// DescribeConfigs), sorted by node id. So a command given any Kafka
// address reaches the admin API of exactly the cluster behind it. A broker
// whose configs could not be read carries the error; the returned error
// means the metadata could not be read.
func AdminAPIs(ctx context.Context, adm *kadm.Client) (clusterID string, nodes []NodeAdmin, err error) {
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("metadata: %w", err)
	}
	ids := make([]int32, 0, len(md.Brokers))
	for _, b := range md.Brokers {
		ids = append(ids, b.NodeID)
		nodes = append(nodes, NodeAdmin{NodeID: b.NodeID, Kafka: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))})
	}
	slices.SortFunc(nodes, func(a, b NodeAdmin) int { return int(a.NodeID) - int(b.NodeID) })
	if len(ids) == 0 {
		return md.Cluster, nodes, nil
	}
	// One request per broker, sent at once; those that failed come back
	// without their resource, and the error says why.
	rcs, describeErr := adm.DescribeBrokerConfigs(ctx, ids...)
	for i := range nodes {
		n := &nodes[i]
		rc, err := rcs.On(strconv.Itoa(int(n.NodeID)), nil)
		switch {
		case err != nil && describeErr != nil:
			n.Err = fmt.Errorf("describe broker %d configs: %w", n.NodeID, describeErr)
		case err != nil:
			n.Err = fmt.Errorf("describe broker %d configs: %w", n.NodeID, ErrNoResponse)
		case rc.Err != nil:
			n.Err = fmt.Errorf("describe broker %d configs: %s", n.NodeID, ErrorText(rc.Err, rc.ErrMessage))
		default:
			n.Err = fmt.Errorf("broker %d (%s): %w (%s)", n.NodeID, n.Kafka, ErrNoAdminURL, AdminURLConfig)
			for _, c := range rc.Configs {
				if c.Key == AdminURLConfig {
					n.Err = nil
					if c.Value != nil {
						n.URL = *c.Value
					}
				}
			}
		}
	}
	return md.Cluster, nodes, nil
}

// GroupPrincipals asks the nodes' admin APIs for the principals of
// group's members, by member id, from the node coordinating it (the
// others answer 404). No Kafka API tells them; nil when no node knows the
// group, with the error of a node that failed otherwise.
func GroupPrincipals(ctx context.Context, admins []*nodeapi.Client, group string) (map[string]string, error) {
	var firstErr error
	for _, c := range admins {
		g, err := c.Group(ctx, group)
		if err != nil {
			if !nodeapi.IsNotFound(err) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		out := make(map[string]string, len(g.Members))
		for _, m := range g.Members {
			if m.Principal != "" {
				out[m.MemberID] = m.Principal
			}
		}
		return out, nil
	}
	return nil, firstErr
}

// TransactionPrincipals asks the nodes' admin APIs for the principal
// that got the producer id of each transactional id, from its
// coordinator, by transactional id; what the nodes that answered know,
// with the error of one that failed.
func TransactionPrincipals(ctx context.Context, admins []*nodeapi.Client) (map[string]string, error) {
	out := map[string]string{}
	var firstErr error
	for _, c := range admins {
		txns, err := c.Transactions(ctx)
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		for _, t := range txns.Transactions {
			if t.Principal != "" {
				out[t.TransactionalID] = t.Principal
			}
		}
	}
	return out, firstErr
}
