package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// setBrokerConfig sets (value non-nil) or deletes a dynamic broker config
// with IncrementalAlterConfigs: on the cluster-wide default resource when
// no broker is named, else on those brokers (kadm sends each its own).
func setBrokerConfig(t *testing.T, ctx context.Context, adm *kadm.Client, name string, value *string, brokers ...int32) {
	t.Helper()
	op := kadm.SetConfig
	if value == nil {
		op = kadm.DeleteConfig
	}
	resps, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: name, Value: value}}, brokers...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resps {
		if r.Err != nil {
			t.Fatalf("alter broker %q config %s: %v (%s)", r.Name, name, r.Err, r.ErrMessage)
		}
	}
}

// waitRetention waits until the log of topic's partition 0 on node n runs
// with retention.ms want.
func waitRetention(t *testing.T, n *brokertest.Node, topic string, want int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("node %s's log of %s to have retention.ms %d", n.Addr(), topic, want), func() (bool, string) {
		cfg, ok := n.Broker().LogConfigForTest(topic, 0)
		return ok && cfg.RetentionMs == want, fmt.Sprintf("log %v, retention.ms %d", ok, cfg.RetentionMs)
	})
}

// describedConfig is a config as DescribeConfigs (with synonyms) gives it
// for a topic or, topic "", for broker 0.
func describedConfig(t *testing.T, ctx context.Context, cl *kgo.Client, topic, name string) kmsg.DescribeConfigsResponseResourceConfig {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeTopic, topic, []string{name}
	if topic == "" {
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "0"
	}
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Resources) != 1 || len(resp.Resources[0].Configs) != 1 {
		t.Fatalf("describe %q %s: %+v", topic, name, resp.Resources)
	}
	return resp.Resources[0].Configs[0]
}

// synonymsOf shows a described config's synonyms as name=value(source).
func synonymsOf(c kmsg.DescribeConfigsResponseResourceConfig) []string {
	var out []string
	for _, s := range c.ConfigSynonyms {
		v := "<null>"
		if s.Value != nil {
			v = *s.Value
		}
		out = append(out, fmt.Sprintf("%s=%s(%s)", s.Name, v, s.Source))
	}
	return out
}

// TestDynamicBrokerConfigAppliesLive: a cluster-wide log.retention.ms set
// while a topic exists reaches that topic's log at once, a per-broker value
// wins over it, a topic's own override wins over both, and deleting them
// goes back down the chain; DescribeConfigs shows the chain in Kafka's
// order. The values survive a restart.
func TestDynamicBrokerConfigAppliesLive(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("log.segment.bytes", "1048576"))
	cl := n.Client()
	adm := kadm.NewClient(cl)
	own := "5000"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": &own}, "own"); err != nil {
		t.Fatal(err)
	}
	waitRetention(t, n, "plain", 604800000)

	hour, twoHours := "3600000", "7200000"
	setBrokerConfig(t, ctx, adm, "log.retention.ms", &hour)
	segment := "2097152"
	setBrokerConfig(t, ctx, adm, "log.segment.bytes", &segment)
	waitRetention(t, n, "plain", 3600000)
	if cfg, _ := n.Broker().LogConfigForTest("plain", 0); cfg.SegmentBytes != 2097152 {
		t.Errorf("segment.bytes %d, want the cluster default 2097152 over the static 1048576", cfg.SegmentBytes)
	}
	setBrokerConfig(t, ctx, adm, "log.retention.ms", &twoHours, 0)
	waitRetention(t, n, "plain", 7200000)
	waitRetention(t, n, "own", 5000)

	c := describedConfig(t, ctx, cl, "plain", "retention.ms")
	want := []string{
		"log.retention.ms=7200000(DYNAMIC_BROKER_CONFIG)",
		"log.retention.ms=3600000(DYNAMIC_DEFAULT_BROKER_CONFIG)",
		"log.retention.hours=168(DEFAULT_CONFIG)",
	}
	if *c.Value != "7200000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig || !slices.Equal(synonymsOf(c), want) {
		t.Errorf("retention.ms = %s (%s), synonyms %v; want 7200000 (DYNAMIC_BROKER_CONFIG), %v", *c.Value, c.Source, synonymsOf(c), want)
	}
	c = describedConfig(t, ctx, cl, "", "log.segment.bytes")
	want = []string{"log.segment.bytes=2097152(DYNAMIC_DEFAULT_BROKER_CONFIG)", "log.segment.bytes=1048576(STATIC_BROKER_CONFIG)", "log.segment.bytes=1073741824(DEFAULT_CONFIG)"}
	if c.ReadOnly || !slices.Equal(synonymsOf(c), want) {
		t.Errorf("broker log.segment.bytes read-only %v, synonyms %v; want %v", c.ReadOnly, synonymsOf(c), want)
	}

	n.Restart()
	waitRetention(t, n, "plain", 7200000)
	if cfg, _ := n.Broker().LogConfigForTest("plain", 0); cfg.SegmentBytes != 2097152 {
		t.Errorf("after a restart segment.bytes %d, want 2097152", cfg.SegmentBytes)
	}

	setBrokerConfig(t, ctx, adm, "log.retention.ms", nil, 0)
	waitRetention(t, n, "plain", 3600000)
	setBrokerConfig(t, ctx, adm, "log.retention.ms", nil)
	waitRetention(t, n, "plain", 604800000)
	waitRetention(t, n, "own", 5000)
}

// TestDynamicBrokerConfigReachesEveryNode: a cluster-wide default set on
// one node of three reaches the logs of every node; a per-broker value
// only that broker's.
func TestDynamicBrokerConfigReachesEveryNode(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.StartCluster(t, 3)
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctx, 1, 3, nil, "t"); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		waitRetention(t, n, "t", 604800000)
	}
	hour, minute := "3600000", "60000"
	setBrokerConfig(t, ctx, adm, "log.retention.ms", &hour)
	for _, n := range c.Nodes() {
		waitRetention(t, n, "t", 3600000)
	}
	setBrokerConfig(t, ctx, adm, "log.retention.ms", &minute, 2)
	waitRetention(t, c.Node(2), "t", 60000)
	for _, id := range []int32{0, 1} {
		waitRetention(t, c.Node(id), "t", 3600000)
	}
}

// TestBrokerConfigRefusals: Kafka 4.4's codes and words for changes of
// broker configs it refuses, and for list operations on other configs.
func TestBrokerConfigRefusals(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ        kmsg.ConfigResourceType
		resource   string
		op         kmsg.IncrementalAlterConfigOp
		name, val  string
		code       int16
		msg        string
		validating bool
	}{
		{kmsg.ConfigResourceTypeBroker, "0", kmsg.IncrementalAlterConfigOpSet, "broker.id", "5", kerr.InvalidRequest.Code, "Cannot update these configs dynamically: [broker.id]", false},
		{kmsg.ConfigResourceTypeBroker, "", kmsg.IncrementalAlterConfigOpSet, "log.retention.hours", "5", kerr.InvalidRequest.Code, "Cannot update these configs dynamically: [log.retention.hours]", false},
		{kmsg.ConfigResourceTypeBroker, "0", kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", "abc", kerr.InvalidRequest.Code, "Invalid value abc for configuration log.retention.ms: Not a number of type LONG", false},
		{kmsg.ConfigResourceTypeBroker, "7", kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", "5", kerr.InvalidRequest.Code, "Unexpected broker id, expected 0, but received 7", false},
		{kmsg.ConfigResourceTypeBroker, "x", kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", "5", kerr.InvalidRequest.Code, "Node id must be an integer, but it is: x", false},
		{kmsg.ConfigResourceTypeBroker, "0", kmsg.IncrementalAlterConfigOpSubtract, "log.retention.ms", "5", kerr.InvalidConfig.Code, "Config value subtract is not allowed for config key: log.retention.ms", false},
		{kmsg.ConfigResourceTypeTopic, "t", kmsg.IncrementalAlterConfigOpAppend, "retention.ms", "5", kerr.InvalidConfig.Code, "Can't APPEND to key retention.ms because its type is not LIST.", false},
		{kmsg.ConfigResourceTypeTopic, "t", kmsg.IncrementalAlterConfigOpSet, "foo", "1", kerr.InvalidConfig.Code, "Unknown topic config name: foo", false},
		// Kafka takes a name it does not define, and deleting a
		// read-only config that is not set.
		{kmsg.ConfigResourceTypeBroker, "0", kmsg.IncrementalAlterConfigOpSet, "foo", "1", 0, "", true},
		{kmsg.ConfigResourceTypeBroker, "0", kmsg.IncrementalAlterConfigOpDelete, "broker.id", "", 0, "", false},
		{kmsg.ConfigResourceTypeBroker, "", kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", "1234", 0, "", true},
	} {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.ValidateOnly = tc.validating
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = tc.typ, tc.resource
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = tc.name, tc.op, kmsg.StringPtr(tc.val)
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		resp, err := cl.Broker(0).Request(ctx, req) // the client would route broker 7's to broker 7
		if err != nil {
			t.Fatal(err)
		}
		r := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		if r.ErrorCode != tc.code || msg != tc.msg {
			t.Errorf("%v %q %s %s=%s: %v %q, want %v %q", tc.typ, tc.resource, tc.op, tc.name, tc.val,
				kerr.ErrorForCode(r.ErrorCode), msg, kerr.ErrorForCode(tc.code), tc.msg)
		}
	}
	// Nothing above was set: the default resource lists only the config
	// the cluster started with.
	rcs, err := kadm.NewClient(cl).DescribeBrokerConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		if len(rc.Configs) != 1 || rc.Configs[0].Key != "min.insync.replicas" {
			t.Errorf("cluster-wide dynamic configs after refusals and validate-only changes: %+v", rc.Configs)
		}
	}
}

// TestClusterStartsWithMinInsyncReplicas: a new cluster holds its
// min.insync.replicas as a cluster-wide dynamic config, at the static
// value, as Kafka 4's storage format writes it: DescribeConfigs gives it
// source DYNAMIC_DEFAULT_BROKER_CONFIG on a topic and a broker. Deleted,
// the static value takes over again.
func TestClusterStartsWithMinInsyncReplicas(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("min.insync.replicas", "1"))
	cl := n.Client()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"min.insync.replicas=1(DYNAMIC_DEFAULT_BROKER_CONFIG)",
		"min.insync.replicas=1(STATIC_BROKER_CONFIG)",
		"min.insync.replicas=1(DEFAULT_CONFIG)",
	}
	for _, resource := range []string{"t", ""} {
		c := describedConfig(t, ctx, cl, resource, "min.insync.replicas")
		if c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || !slices.Equal(synonymsOf(c), want) {
			t.Errorf("%q min.insync.replicas from %s, synonyms %v; want DYNAMIC_DEFAULT_BROKER_CONFIG, %v", resource, c.Source, synonymsOf(c), want)
		}
	}
	setBrokerConfig(t, ctx, adm, "min.insync.replicas", nil)
	if c := describedConfig(t, ctx, cl, "t", "min.insync.replicas"); c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("min.insync.replicas from %s once the cluster's is deleted, want STATIC_BROKER_CONFIG", c.Source)
	}
}
