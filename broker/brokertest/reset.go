package brokertest

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/internal/testkit"
)

// Reset empties the cluster for the next test, faster than a new
// cluster: it deletes every consumer group and every topic but the
// internal ones (__consumer_offsets, __transaction_state), and returns
// once every running node's metadata lists none of those topics, so a
// topic created after it, under an old name, starts empty. Groups with
// members cannot be deleted: close the clients first.
func (c *Cluster) Reset() {
	c.t.Helper()
	ctx := testkit.Context(c.t)
	cl := c.Client()
	defer cl.Close()
	adm := kadm.NewClient(cl)
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		c.t.Fatalf("brokertest: reset: list groups: %v", err)
	}
	if names := groups.Groups(); len(names) > 0 {
		resps, err := adm.DeleteGroups(ctx, names...)
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			c.t.Fatalf("brokertest: reset: delete groups %v: %v", names, err)
		}
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		c.t.Fatalf("brokertest: reset: list topics: %v", err)
	}
	if names := topics.Names(); len(names) > 0 {
		resps, err := adm.DeleteTopics(ctx, names...)
		if err == nil {
			err = resps.Error()
		}
		if err != nil {
			c.t.Fatalf("brokertest: reset: delete topics %v: %v", names, err)
		}
	}
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		ncl := n.Client()
		testkit.WaitFor(c.t, fmt.Sprintf("node %d to list no topics", n.id), func() (bool, string) {
			resp, err := metadata(ctx, ncl)
			if err != nil {
				return false, err.Error()
			}
			var left []string
			for _, t := range resp.Topics {
				if !t.IsInternal {
					left = append(left, *t.Topic)
				}
			}
			return len(left) == 0, strings.Join(left, ", ")
		})
		ncl.Close()
	}
}
