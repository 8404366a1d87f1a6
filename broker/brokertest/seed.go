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
	counts := make([]int32, len(topics))
	for i, st := range topics {
		names[i], counts[i] = st.Name, max(st.Partitions, 1)
	}
	c.waitLeaders(names, counts)
}

// waitLeaders waits until every running node's metadata has a leader for
// each partition of topics (nil: of every topic, the internal ones too)
// and, unless partitions is nil, topics[i] has partitions[i] of them.
func (c *Cluster) waitLeaders(topics []string, partitions []int32) {
	c.t.Helper()
	ctx := testkit.Context(c.t)
	what := "every topic"
	if topics != nil {
		what = strings.Join(topics, ", ")
	}
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		cl := n.Client()
		testkit.WaitFor(c.t, fmt.Sprintf("node %d to lead every partition of %s", n.id, what), func() (bool, string) {
			resp, err := metadata(ctx, cl, topics...)
			if err != nil {
				return false, err.Error()
			}
			for i, t := range resp.Topics {
				name := ""
				if t.Topic != nil {
					name = *t.Topic
				}
				if err := kerr.ErrorForCode(t.ErrorCode); err != nil || partitions != nil && len(t.Partitions) != int(partitions[i]) {
					return false, fmt.Sprintf("%s: %d partitions, %v", name, len(t.Partitions), err)
				}
				for _, p := range t.Partitions {
					if p.Leader < 0 || p.ErrorCode != 0 {
						return false, fmt.Sprintf("%s[%d]: leader %d, %v", name, p.Partition, p.Leader, kerr.ErrorForCode(p.ErrorCode))
					}
				}
			}
			return true, ""
		})
		cl.Close()
	}
}
