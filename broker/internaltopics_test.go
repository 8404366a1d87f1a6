package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestInternalTopicsCreatedOnFindCoordinator: the first FindCoordinator of
// each key type creates that coordinator's internal topic, compacted, with
// the configured partitions, a replication factor capped by the brokers
// and its own topic configs, and answers with this node.
func TestInternalTopicsCreatedOnFindCoordinator(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t,
		brokertest.Config("offsets.topic.num.partitions", "3"),
		brokertest.Config("transaction.state.log.num.partitions", "5"),
		brokertest.Config("transaction.state.log.segment.bytes", "1048576"))
	cl := n.Client()
	for _, tc := range []struct {
		keyType int8
		key     string
	}{{0, "my-group"}, {1, "my-txn"}, {0, "other-group"}} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType = tc.keyType
		req.CoordinatorKeys = []string{tc.key}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Coordinators) != 1 {
			t.Fatalf("type %d: %d coordinators", tc.keyType, len(resp.Coordinators))
		}
		c := resp.Coordinators[0]
		if c.ErrorCode != 0 || c.Key != tc.key || c.NodeID != 0 || c.Port <= 0 {
			t.Errorf("type %d %q: %+v (%v)", tc.keyType, tc.key, c, kerr.ErrorForCode(c.ErrorCode))
		}
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = 2 // share groups: not supported
	req.CoordinatorKeys = []string{"share"}
	if resp, err := req.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else if code := resp.Coordinators[0].ErrorCode; code != kerr.InvalidRequest.Code {
		t.Errorf("share group key: %v", kerr.ErrorForCode(code))
	}

	adm := kadm.NewClient(cl)
	details, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets", "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]int{"__consumer_offsets": 3, "__transaction_state": 5} {
		d := details[topic]
		if d.Err != nil || !d.IsInternal || len(d.Partitions) != want || d.Partitions.NumReplicas() != 1 {
			t.Errorf("%s: err %v, internal %v, %d partitions, rf %d", topic, d.Err, d.IsInternal, len(d.Partitions), d.Partitions.NumReplicas())
		}
	}
	configs, err := adm.DescribeTopicConfigs(ctx, "__consumer_offsets", "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		"__consumer_offsets":  {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600", "min.insync.replicas": "1"},
		"__transaction_state": {"cleanup.policy": "compact", "compression.type": "uncompressed", "segment.bytes": "1048576", "min.insync.replicas": "1"},
	}
	for _, rc := range configs {
		overridden := map[string]bool{}
		for _, c := range rc.Configs {
			if w, ok := want[rc.Name][c.Key]; ok && c.MaybeValue() != w {
				t.Errorf("%s %s = %q, want %q", rc.Name, c.Key, c.MaybeValue(), w)
			}
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
				overridden[c.Key] = true
			}
		}
		wantOverridden := map[string]bool{"cleanup.policy": true, "compression.type": true, "segment.bytes": true}
		if rc.Name == "__transaction_state" {
			wantOverridden["min.insync.replicas"] = true
		}
		if len(overridden) != len(wantOverridden) {
			t.Errorf("%s overrides %v, want %v", rc.Name, overridden, wantOverridden)
		}
		for k := range wantOverridden {
			if !overridden[k] {
				t.Errorf("%s: %s not set on the topic", rc.Name, k)
			}
		}
	}
}
