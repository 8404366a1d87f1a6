package brokertest

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/seed"
)

// seed creates the topics of New's Topic and Seed options and produces
// their records (package seed, as klog up --seed), and waits until every
// node's metadata gives each of their partitions a leader.
func (c *Cluster) seed(topics []seedTopic) {
	c.t.Helper()
	ctx := testkit.Context(c.t)
	var spec seed.Spec
	for _, st := range topics {
		if len(st.malformed) > 0 {
			c.t.Fatalf("brokertest: topic %s: configs %q are not key=value", st.Name, st.malformed)
		}
		spec.Topics = append(spec.Topics, st.Topic)
	}
	if _, err := seed.Apply(ctx, c.Client(seed.ProducerOpts()...), spec); err != nil {
		c.t.Fatalf("brokertest: %v", err)
	}
	names := make([]string, len(topics))
	for i, st := range topics {
		names[i] = st.Name
	}
	for _, n := range c.nodes {
		cl := n.Client()
		testkit.WaitFor(c.t, fmt.Sprintf("node %d to lead every partition of %s", n.id, strings.Join(names, ", ")), func() (bool, string) {
			resp, err := metadata(ctx, cl, names...)
			if err != nil {
				return false, err.Error()
			}
			for i, t := range resp.Topics {
				st := topics[i]
				if err := kerr.ErrorForCode(t.ErrorCode); err != nil || len(t.Partitions) != int(max(st.Partitions, 1)) {
					return false, fmt.Sprintf("%s: %d partitions, %v", st.Name, len(t.Partitions), err)
				}
				for _, p := range t.Partitions {
					if p.Leader < 0 || p.ErrorCode != 0 {
						return false, fmt.Sprintf("%s[%d]: leader %d, %v", st.Name, p.Partition, p.Leader, kerr.ErrorForCode(p.ErrorCode))
					}
				}
			}
			return true, ""
		})
		cl.Close()
	}
}
