// Package fakekafka gives tests a franz-go kfake cluster that behaves as
// Apache Kafka does where klog's own broker behaves otherwise, so that the
// command line and inspect are tested against what they meet on a real
// Kafka cluster: coordinator topics created on first use, topics
// auto-created asynchronously.
//
// It is for tests only and imports nothing of klog.
package fakekafka

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Start starts a one-broker kfake cluster, closed when the test ends, and
// returns it with its address.
func Start(t testing.TB, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

// CoordinatorsNotYet makes c answer its next n FindCoordinator requests
// COORDINATOR_NOT_AVAILABLE, as Kafka answers while it creates
// __consumer_offsets or __transaction_state on their first lookup. It
// returns the count of requests answered so.
func CoordinatorsNotYet(c *kfake.Cluster, n int32) *atomic.Int32 {
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.FindCoordinator), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		if refused.Load() >= n {
			return nil, nil, false
		}
		c.KeepControl()
		refused.Add(1)
		req := kreq.(*kmsg.FindCoordinatorRequest)
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.SetVersion(req.GetVersion())
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		resp.NodeID = -1
		keys := req.CoordinatorKeys
		if len(keys) == 0 {
			keys = []string{req.CoordinatorKey}
		}
		for _, key := range keys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key, rc.NodeID, rc.ErrorCode = key, -1, kerr.CoordinatorNotAvailable.Code
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp, nil, true
	})
	return &refused
}

// AutoCreateAsync makes c auto-create topics as Kafka in KRaft mode does: a
// Metadata request that allows auto-creation of a missing topic is
// answered UNKNOWN_TOPIC_OR_PARTITION (kfake's answer without
// kfake.AllowAutoTopicCreation), and the topic, with partitions
// partitions, is created after the answer, by a CreateTopics request of a
// client of its own. Errors of the creation fail the test.
func AutoCreateAsync(t testing.TB, c *kfake.Cluster, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		wg.Wait()
		cancel()
		cl.Close()
	})
	var mu sync.Mutex
	asked := make(map[string]bool)
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.MetadataRequest)
		if !req.AllowAutoTopicCreation {
			return nil, nil, false
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rt := range req.Topics {
			if rt.Topic == nil || asked[*rt.Topic] {
				continue
			}
			topic := *rt.Topic
			asked[topic] = true
			// After the answer: the control function runs inside the
			// cluster, which must answer this request before it takes
			// the creation.
			wg.Go(func() {
				resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
				if err == nil {
					err = resp.Err
				}
				if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
					t.Errorf("fakekafka: auto-create %q: %v", topic, err)
				}
			})
		}
		return nil, nil, false
	})
}
