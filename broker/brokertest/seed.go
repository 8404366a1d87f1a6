package brokertest

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/internal/testkit"
)

// seed creates the topics of New's Topic options and waits until every
// node's metadata gives each of their partitions a leader.
func (c *Cluster) seed(topics []seedTopic) {
	c.t.Helper()
	ctx := testkit.Context(c.t)
	adm := kadm.NewClient(c.Client())
	for _, st := range topics {
		if len(st.malformed) > 0 {
			c.t.Fatalf("brokertest: topic %s: configs %q are not key=value", st.name, st.malformed)
		}
		resp, err := adm.CreateTopic(ctx, st.partitions, st.rf, st.configs, st.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			c.t.Fatalf("brokertest: create topic %s: %v", st.name, err)
		}
	}
	names := make([]string, len(topics))
	for i, st := range topics {
		names[i] = st.name
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
				if err := kerr.ErrorForCode(t.ErrorCode); err != nil || len(t.Partitions) != int(st.partitions) {
					return false, fmt.Sprintf("%s: %d partitions, %v", st.name, len(t.Partitions), err)
				}
				for _, p := range t.Partitions {
					if p.Leader < 0 || p.ErrorCode != 0 {
						return false, fmt.Sprintf("%s[%d]: leader %d, %v", st.name, p.Partition, p.Leader, kerr.ErrorForCode(p.ErrorCode))
					}
				}
			}
			return true, ""
		})
		cl.Close()
	}
}
