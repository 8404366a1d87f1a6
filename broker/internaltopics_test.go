package broker_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/metadata"
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

// TestClientCreatedInternalTopicsServe: a client may create
// __transaction_state and __consumer_offsets itself, with any partition
// count, as Kafka allows (only __cluster_metadata is refused, with
// INVALID_REQUEST). The coordinators then hash over the count the topic
// has, not the configured one, so InitProducerID and offset commits work
// at once, with no restart.
func TestClientCreatedInternalTopicsServe(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t) // the configured counts: 50 partitions each
	cl := n.Client()
	adm := kadm.NewClient(cl)
	for _, topic := range []string{"__transaction_state", "__consumer_offsets"} {
		created, err := adm.CreateTopic(ctx, 1, -1, nil, topic)
		if err != nil || created.NumPartitions != 1 {
			t.Fatalf("create %s: %v %s, %d partitions", topic, err, created.ErrMessage, created.NumPartitions)
		}
	}
	created, err := adm.CreateTopic(ctx, 1, -1, nil, "__cluster_metadata")
	if !errors.Is(err, kerr.InvalidRequest) || created.ErrMessage != "Creation of internal topic __cluster_metadata is prohibited." {
		t.Errorf("create __cluster_metadata: %v %q", err, created.ErrMessage)
	}

	// Keys that hash to a partition other than 0 over the configured 50.
	const txnID, groupID = "my-txn", "my-group"
	if metadata.CoordinatorPartition(txnID, 50) == 0 || metadata.CoordinatorPartition(groupID, 50) == 0 {
		t.Fatal("test keys hash to partition 0 of 50")
	}
	if pid, _ := initTransactional(ctx, t, cl, txnID); pid < 0 {
		t.Errorf("producer id %d", pid)
	}
	var offsets kadm.Offsets
	offsets.Add(kadm.Offset{Topic: "t", Partition: 0, At: 7, LeaderEpoch: -1})
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	if resp, err := adm.CommitOffsets(ctx, groupID, offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	fetched, err := adm.FetchOffsets(ctx, groupID)
	if err != nil || fetched.Error() != nil {
		t.Fatalf("fetch: %v %v", err, fetched.Error())
	}
	if o, _ := fetched.Lookup("t", 0); o.At != 7 {
		t.Errorf("fetched offset %d, want 7", o.At)
	}
}

// TestDeleteInternalTopic: DeleteTopics deletes an internal topic as Kafka
// does (no authorizer: no refusal). The coordinator lets go of it, and the
// next FindCoordinator creates it again with the configured partitions;
// the coordinator serves the new topic, whose partition count differs.
func TestDeleteInternalTopic(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("transaction.state.log.num.partitions", "5"))
	cl := n.Client()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "__transaction_state"); err != nil {
		t.Fatal(err)
	}
	const txnID = "txn-a"
	if metadata.CoordinatorPartition(txnID, 5) == 0 {
		t.Fatal("test key hashes to partition 0 of 5")
	}
	first, _ := initTransactional(ctx, t, cl, txnID)

	if resp, err := adm.DeleteTopic(ctx, "__transaction_state"); err != nil {
		t.Fatalf("delete: %v %s", err, resp.ErrMessage)
	}
	if code, _, parts := topicMetadata(ctx, t, cl, "__transaction_state"); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("after delete: %v, %d partitions", kerr.ErrorForCode(code), parts)
	}

	if second, _ := initTransactional(ctx, t, cl, txnID); second == first {
		t.Errorf("producer id %d again after the transaction state was deleted", second)
	}
	if code, internal, parts := topicMetadata(ctx, t, cl, "__transaction_state"); code != 0 || !internal || parts != 5 {
		t.Errorf("recreated: %v, internal %v, %d partitions", kerr.ErrorForCode(code), internal, parts)
	}
}

// TestInternalTopicPartitionCountIsFixed: CreatePartitions on an internal
// topic is refused with POLICY_VIOLATION, since its keys hash over the
// count and would lose their state. Kafka allows it and remaps the keys at
// its next restart.
func TestInternalTopicPartitionCountIsFixed(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("offsets.topic.num.partitions", "3"))
	cl := n.Client()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	var offsets kadm.Offsets
	offsets.Add(kadm.Offset{Topic: "t", Partition: 0, At: 1, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "g", offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	resp, err := adm.UpdatePartitions(ctx, 4, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	r := resp["__consumer_offsets"]
	if !errors.Is(r.Err, kerr.PolicyViolation) || !strings.Contains(r.ErrMessage, "internal topic __consumer_offsets") {
		t.Errorf("create partitions: %v %q", r.Err, r.ErrMessage)
	}
	if code, _, parts := topicMetadata(ctx, t, cl, "__consumer_offsets"); code != 0 || parts != 3 {
		t.Errorf("%v, %d partitions, want 3", kerr.ErrorForCode(code), parts)
	}
}

// topicMetadata asks the node itself for a topic (kadm answers from the
// client's metadata cache): its error code, internal flag and partition
// count.
func topicMetadata(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) (code int16, internal bool, partitions int) {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Broker(0).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	mt := resp.(*kmsg.MetadataResponse).Topics[0]
	return mt.ErrorCode, mt.IsInternal, len(mt.Partitions)
}
