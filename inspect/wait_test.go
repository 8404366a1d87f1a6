package inspect

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/fakekafka"
)

func newFake(t *testing.T) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, addr := fakekafka.Start(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl
}

// TestDescribeWaitsForCoordinators: on a cluster still creating its
// coordinator topics (a fresh Kafka), describing a group or a transactional
// id that does not exist says so, not COORDINATOR_NOT_AVAILABLE.
func TestDescribeWaitsForCoordinators(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, cl := newFake(t)
	refused := fakekafka.CoordinatorsNotYet(c, 3)
	infos, err := DescribeGroups(ctx, cl, kadm.NewClient(cl), []string{"nope"})
	if err != nil {
		t.Fatal(err)
	}
	if g := infos["nope"]; !g.NotFound || g.Err != nil {
		t.Errorf("group: NotFound %v, Err %v; want NotFound", g.NotFound, g.Err)
	}
	if refused.Load() != 3 {
		t.Errorf("%d lookups refused, want 3", refused.Load())
	}

	c, cl = newFake(t)
	fakekafka.CoordinatorsNotYet(c, 3)
	txns, err := DescribeTransactions(ctx, kadm.NewClient(cl), []string{"nope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(txns) != 1 || !errors.Is(txns[0].Err, ErrTransactionNotFound) {
		t.Errorf("transaction: %+v, want ErrTransactionNotFound", txns)
	}
}

// TestWaitTopic: a topic created while WaitTopic waits is found, though the
// caller's client had just seen it missing (its metadata cache, good for
// 5 s, must not answer within the 2 s wait); one never created is
// ErrTopicNotFound once the wait ends.
func TestWaitTopic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, cl := newFake(t)
	adm := kadm.NewClient(cl)
	if _, err := LookupTopics(ctx, adm, []string{"later"}); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("before: %v, want ErrTopicNotFound", err)
	}
	// The topic is created as soon as the caller's client saw it missing,
	// as Kafka creates an auto-created topic after answering that it does
	// not exist.
	created := make(chan error, 1)
	var lookups atomic.Int32
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		for _, rt := range kreq.(*kmsg.MetadataRequest).Topics {
			if rt.Topic != nil && *rt.Topic == "later" && lookups.Add(1) == 1 {
				go func() {
					_, err := adm.CreateTopic(ctx, 2, 1, nil, "later")
					created <- err
				}()
			}
		}
		return nil, nil, false
	})
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) {
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	}
	details, err := WaitTopic(ctx, newClient, "later", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if cerr := <-created; cerr != nil {
		t.Fatal(cerr)
	}
	if n := len(details["later"].Partitions); n != 2 {
		t.Errorf("%d partitions, want 2", n)
	}
	if _, err := WaitTopic(ctx, newClient, "never", 300*time.Millisecond); !errors.Is(err, ErrTopicNotFound) {
		t.Errorf("never created: %v, want ErrTopicNotFound", err)
	}
}
