package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// ApiVersions' feature flags and versions, as Kafka 4.4 answers them.

// TestApiVersionsFeatures: v4 advertises every feature klog knows with
// the levels it supports, and finalizes on a fresh cluster what Kafka 4.4
// finalizes of them (features at level 0 are not listed, as Kafka lists
// none); the epoch is the metadata image's index, above -1 so that
// clients take it; v3 leaves out the supported features whose minimum is
// 0 (KAFKA-17492) but still finalizes them; v2 has none.
func TestApiVersionsFeatures(t *testing.T) {
	n := brokertest.Start(t)
	r := dialRaw(t, n.Addr())
	v4 := askApiVersions(t, r, 4)
	supported := map[string][2]int16{}
	for _, f := range v4.SupportedFeatures {
		supported[f.Name] = [2]int16{f.MinVersion, f.MaxVersion}
	}
	if want := map[string][2]int16{"group.version": {0, 1}, "transaction.version": {0, 2}, "metadata.version": {7, 33},
		"kraft.version": {0, 0}, "share.version": {0, 1}, "streams.version": {0, 0}, "eligible.leader.replicas.version": {0, 0}}; !equalMaps(supported, want) {
		t.Errorf("v4 supported features %v, want %v", supported, want)
	}
	if want := map[string][2]int16{"group.version": {1, 1}, "transaction.version": {2, 2}, "metadata.version": {33, 33}, "share.version": {1, 1}}; !equalMaps(finalizedOf(v4), want) {
		t.Errorf("v4 finalized features %v, want %v", finalizedOf(v4), want)
	}
	if v4.FinalizedFeaturesEpoch <= 0 {
		t.Errorf("finalized features epoch %d, want the image's index", v4.FinalizedFeaturesEpoch)
	}
	if v3 := askApiVersions(t, r, 3); len(v3.SupportedFeatures) != 1 || v3.SupportedFeatures[0].Name != "metadata.version" || len(v3.FinalizedFeatures) != 4 {
		t.Errorf("v3: supported %v, finalized %v; want metadata.version alone supported (the others' minimum is 0) and four finalized", v3.SupportedFeatures, v3.FinalizedFeatures)
	}
}

// askApiVersions sends ApiVersions at version on r.
func askApiVersions(t *testing.T, r *rawConn, version int16) *kmsg.ApiVersionsResponse {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "klog-test", "1"
	resp, err := r.do(req)
	if err != nil {
		t.Fatal(err)
	}
	v := resp.(*kmsg.ApiVersionsResponse)
	if v.ErrorCode != 0 {
		t.Fatalf("v%d: %v", version, kerr.ErrorForCode(v.ErrorCode))
	}
	return v
}

// finalizedOf is an ApiVersions answer's finalized features by name.
func finalizedOf(v *kmsg.ApiVersionsResponse) map[string][2]int16 {
	finalized := map[string][2]int16{}
	for _, f := range v.FinalizedFeatures {
		finalized[f.Name] = [2]int16{f.MinVersionLevel, f.MaxVersionLevel}
	}
	return finalized
}

func equalMaps(a, b map[string][2]int16) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestApiVersionsClusterAndNode: from v5 (KIP-1242) a client names the
// cluster and node it believes it reached, both or neither; a wrong one
// answers REBOOTSTRAP_REQUIRED.
func TestApiVersionsClusterAndNode(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, n.Client())
	if err != nil || meta.ClusterID == nil || len(meta.Brokers) != 1 {
		t.Fatalf("metadata: %v %+v", err, meta)
	}
	cluster, node := *meta.ClusterID, meta.Brokers[0].NodeID
	r := dialRaw(t, n.Addr())
	for _, tc := range []struct {
		name    string
		cluster *string
		node    int32
		want    *kerr.Error
	}{
		{"neither", nil, -1, nil},
		{"both right", &cluster, node, nil},
		{"cluster only", &cluster, -1, kerr.InvalidRequest},
		{"node only", nil, node, kerr.InvalidRequest},
		{"another cluster", kmsg.StringPtr("another"), node, kerr.RebootstrapRequired},
		{"another node", &cluster, node + 1, kerr.RebootstrapRequired},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(5)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "klog-test", "1"
		req.ClusterID, req.NodeID = tc.cluster, tc.node
		resp, err := r.do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		v := resp.(*kmsg.ApiVersionsResponse)
		if got := kerr.ErrorForCode(v.ErrorCode); got != tc.want && !(tc.want == nil && got == nil) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if (tc.want == nil) != (len(v.ApiKeys) > 0) {
			t.Errorf("%s: %d API keys", tc.name, len(v.ApiKeys))
		}
	}
}

// TestProduceV0To2ListedButRefused: Kafka 4 lists Produce v0-2 (old
// librdkafka refuses a broker without them) and closes the connection of a
// request at one of them.
func TestProduceV0To2ListedButRefused(t *testing.T) {
	n := brokertest.Start(t)
	for v := int16(0); v <= 2; v++ {
		r := dialRaw(t, n.Addr())
		req := txnProduce("any", nil, rawBatch("a"))
		req.SetVersion(v)
		if resp, err := r.do(req); err == nil {
			t.Fatalf("Produce v%d answered %+v; want the connection closed", v, resp)
		}
	}
}

// TestListOffsetsV0KeptForBurrow: ListOffsets v0, which Kafka 4 removed,
// is served for Burrow 1.2.1, with the offset in OldStyleOffsets.
func TestListOffsetsV0KeptForBurrow(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "burrow"); err != nil {
		t.Fatal(err)
	}
	produceRaw(ctx, t, cl, "burrow", 0, rawBatch("a", "b"))
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(0)
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "burrow"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.MaxNumOffsets = -1, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := rawDo[*kmsg.ListOffsetsResponse](t, dialRaw(t, n.Addr()), req)
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != 0 || len(sp.OldStyleOffsets) != 1 || sp.OldStyleOffsets[0] != 2 {
		t.Fatalf("ListOffsets v0: %v, offsets %v; want [2]", kerr.ErrorForCode(sp.ErrorCode), sp.OldStyleOffsets)
	}
}
