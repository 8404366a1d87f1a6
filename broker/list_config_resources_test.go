package broker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// listConfigResources sends ListConfigResources at version (0 or 1) with
// types and returns its answer as "ERROR_NAME" or "" followed by one
// "type:name" per resource.
func listConfigResources(t *testing.T, c *brokertest.Cluster, cl *kgo.Client, version int16, types ...int8) []string {
	t.Helper()
	if version == 0 {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(kmsg.ListConfigResources.Int16(), 0)
		cl = c.Client(kgo.MaxVersions(vs))
	}
	req := kmsg.NewPtrListConfigResourcesRequest()
	req.ResourceTypes = types
	resp, err := req.RequestWith(testkit.Context(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Version != version {
		t.Fatalf("sent at v%d, want v%d", resp.Version, version)
	}
	out := []string{""}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		out[0] = err.(*kerr.Error).Message
	}
	for _, r := range resp.ConfigResources {
		out = append(out, fmt.Sprintf("%d:%s", r.Type, r.Name))
	}
	return out
}

// TestListConfigResources checks Kafka 4.4's answers: v1 lists the types
// it names (all when none) in Kafka's order of types, each type once, the
// node as broker logger and broker, every topic; a type it does not
// support fails the request; v0 lists client metrics resources only.
func TestListConfigResources(t *testing.T) {
	c := brokertest.New(t, brokertest.Topic("b", 1, 1), brokertest.Topic("a", 1, 1))
	ctx := testkit.Context(t)
	cl := c.Client()
	topics, err := kadm.NewClient(cl).ListTopicsWithInternal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var topicRows []string
	for _, name := range topics.Names() { // sorted
		topicRows = append(topicRows, "2:"+name)
	}
	if !slices.Contains(topicRows, "2:a") || !slices.Contains(topicRows, "2:b") {
		t.Fatalf("topics %v lack a and b", topicRows)
	}
	self := fmt.Sprint(c.Nodes()[0].ID())
	for _, tc := range []struct {
		version int16
		types   []int8
		want    []string
	}{
		{1, nil, slices.Concat([]string{"", "8:" + self, "4:" + self}, topicRows)},
		{1, []int8{2, 4, 2}, slices.Concat([]string{"", "4:" + self}, topicRows)},
		{1, []int8{16, 32}, []string{""}},
		{1, []int8{8}, []string{"", "8:" + self}},
		{1, []int8{2, 1}, []string{"UNSUPPORTED_VERSION"}},
		{1, []int8{-1}, []string{"UNSUPPORTED_VERSION"}},
		{0, nil, []string{""}},
	} {
		got := listConfigResources(t, c, cl, tc.version, tc.types...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("v%d %v:\n got %s\nwant %s", tc.version, tc.types, strings.Join(got, " "), strings.Join(tc.want, " "))
		}
	}
}

// TestListConfigResourcesAuthorization checks that listing needs
// DESCRIBE_CONFIGS on the cluster, as in Kafka.
func TestListConfigResourcesAuthorization(t *testing.T) {
	c, ctx := aliceCluster(t)
	alice := as(c, "alice")
	if got := listConfigResources(t, c, alice, 1); !slices.Equal(got, []string{"CLUSTER_AUTHORIZATION_FAILED"}) {
		t.Fatalf("alice without DESCRIBE_CONFIGS on the cluster: %v", got)
	}
	mustCreateACLs(t, ctx, kadm.NewClient(as(c, "admin")), kadm.NewACLs().Allow("User:alice").Clusters().Operations(kadm.OpDescribeConfigs))
	if got := listConfigResources(t, c, alice, 1, 4); len(got) != 2 || got[0] != "" {
		t.Fatalf("alice with DESCRIBE_CONFIGS on the cluster: %v", got)
	}
}
