package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// A node that closes answers the produce it is handling: the client learns
// its records were appended, and has nothing to send again after a restart
// (where a retry of any batch but a producer's last would be refused
// OUT_OF_ORDER_SEQUENCE_NUMBER, and an idempotent client may then write
// it again under a new epoch).
func TestCloseAnswersTheRequestInFlight(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.New(t)
	n := c.Nodes()[0]
	if _, err := kadm.NewClient(n.Client()).CreateTopic(ctx, 1, 1, nil, "drain"); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	c.Control(kmsg.Produce, func(context.Context, int32, kmsg.Request) (kmsg.Response, bool, error) {
		first.Do(func() {
			close(entered)
			<-release
		})
		return nil, false, nil
	})
	// Without a drain the answer is lost and every retry finds the node
	// gone: the record fails once its delivery timeout has passed.
	cl := n.Client(kgo.DefaultProduceTopic("drain"), kgo.RecordDeliveryTimeout(5*time.Second))
	produced := make(chan kgo.ProduceResults, 1)
	go func() { produced <- cl.ProduceSync(ctx, &kgo.Record{Value: []byte("in flight")}) }()
	<-entered

	closed := make(chan error, 1)
	go func() { closed <- n.Broker().Close() }()
	testkit.WaitFor(t, "the node to drain its connections", func() (bool, string) {
		return n.Broker().DrainingForTest(), ""
	})
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	// The answer was written before Close returned. Without it the client
	// keeps looking for a broker that is gone, so bound the wait and close
	// the client, which fails the record.
	var rs kgo.ProduceResults
	select {
	case rs = <-produced:
	case <-time.After(10 * time.Second):
		cl.Close()
		rs = <-produced
	}
	if err := rs.FirstErr(); err != nil {
		t.Fatalf("the produce in flight when the node closed: %v", err)
	}
	if r := rs[0].Record; r.Offset != 0 {
		t.Fatalf("acknowledged at offset %d, want 0", r.Offset)
	}
}
