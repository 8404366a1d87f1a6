package adminapi_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/adminapi"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// TestPrincipals checks that the admin API names who each client is,
// which no Kafka API tells: the principal of a classic group's member
// and of a consumer-protocol group's (GET /v1/groups/{group}), of an
// idempotent producer on the partition it writes to and of a
// transactional producer at its coordinator.
func TestPrincipals(t *testing.T) {
	// A client "as-NAME" is User:NAME.
	n := brokertest.Start(t, brokertest.Principal(func(rc *wire.RequestContext) string {
		if name, ok := strings.CutPrefix(rc.ClientID, "as-"); ok {
			return "User:" + name
		}
		return rc.Principal
	}))
	ctx := testkit.Context(t)
	srv := httptest.NewServer(adminapi.Handler(n.Broker(), "admin-test", "test"))
	t.Cleanup(srv.Close)
	c := nodeapi.NewClient(srv.URL, 0)
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "d"); err != nil {
		t.Fatal(err)
	}

	writer := n.Client(kgo.ClientID("as-writer"), kgo.DefaultProduceTopic("d"))
	defer writer.Close()
	if err := writer.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ps, err := c.Producers(ctx, "d", 0)
	if err != nil || len(ps.Producers) != 1 || ps.Producers[0].Principal != "User:writer" {
		t.Fatalf("producers of d/0: %+v, %v", ps, err)
	}

	txer := n.Client(kgo.ClientID("as-txer"), kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("d"))
	defer txer.Close()
	if err := txer.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txer.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	txns, err := c.Transactions(ctx)
	if err != nil || len(txns.Transactions) != 1 || txns.Transactions[0].Principal != "User:txer" {
		t.Fatalf("transactions: %+v, %v", txns, err)
	}

	reader := n.Client(kgo.ClientID("as-reader"), kgo.ConsumerGroup("classic"), kgo.ConsumeTopics("d"))
	defer reader.Close()
	testkit.WaitFor(t, "the classic group's member with its principal", func() (bool, string) {
		g, err := c.Group(ctx, "classic")
		return err == nil && g.Type == "classic" && len(g.Members) == 1 && g.Members[0].Principal == "User:reader", fmtGroup(g, err)
	})

	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "next", "m-1", 0, 30000
	hb.SubscribedTopicNames, hb.Topics = []string{"d"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	next := n.Client(kgo.ClientID("as-next"))
	defer next.Close()
	// Retried until the group coordinator is up.
	testkit.WaitFor(t, "the consumer group's heartbeat", func() (bool, string) {
		resp, err := hb.RequestWith(ctx, next)
		if err != nil {
			return false, err.Error()
		}
		return resp.ErrorCode == 0, fmt.Sprintf("error %d", resp.ErrorCode)
	})
	g, err := c.Group(ctx, "next")
	if err != nil || g.Type != "consumer" || len(g.Members) != 1 || g.Members[0].Principal != "User:next" || g.Members[0].ClientID != "as-next" {
		t.Fatalf("group next: %s", fmtGroup(g, err))
	}
	if _, err := c.Group(ctx, "none"); !nodeapi.IsNotFound(err) {
		t.Fatalf("a group the node does not coordinate: %v", err)
	}
}

func fmtGroup(g nodeapi.Group, err error) string {
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(g.Type + " " + g.State)
	for _, m := range g.Members {
		b.WriteString(" " + m.MemberID + "=" + m.Principal)
	}
	return b.String()
}
