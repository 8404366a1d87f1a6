package broker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// alterClientMetrics sends one IncrementalAlterConfigs of client metrics
// resource name with ops "set:key=value", "delete:key" or
// "append:key=value", and returns its answer as "ERROR_NAME: message", ""
// when it passed.
func alterClientMetrics(t *testing.T, cl *kgo.Client, name string, ops ...string) string {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	for _, op := range ops {
		kind, kv, _ := strings.Cut(op, ":")
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		k, v, hasValue := strings.Cut(kv, "=")
		c.Name = k
		if hasValue {
			c.Value = &v
		}
		c.Op = map[string]kmsg.IncrementalAlterConfigOp{"set": kmsg.IncrementalAlterConfigOpSet, "delete": kmsg.IncrementalAlterConfigOpDelete,
			"append": kmsg.IncrementalAlterConfigOpAppend}[kind]
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(testkit.Context(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Resources[0]
	if r.ErrorCode == 0 {
		return ""
	}
	s := kerr.ErrorForCode(r.ErrorCode).(*kerr.Error).Message
	if r.ErrorMessage != nil {
		s += ": " + *r.ErrorMessage
	}
	return s
}

// describeClientMetrics returns DescribeConfigs' answer for client
// metrics resource name as "name=value source [synonyms]" lines, or the
// error.
func describeClientMetrics(t *testing.T, cl *kgo.Client, name string) []string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	req.Resources, req.IncludeSynonyms = append(req.Resources, rr), true
	resp, err := req.RequestWith(testkit.Context(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Resources[0]
	if r.ErrorCode != 0 {
		return []string{fmt.Sprintf("%s: %s", kerr.ErrorForCode(r.ErrorCode).(*kerr.Error).Message, *r.ErrorMessage)}
	}
	var out []string
	for _, c := range r.Configs {
		line := fmt.Sprintf("%s=%s %s %s", c.Name, *c.Value, c.Source, c.ConfigType)
		for _, s := range c.ConfigSynonyms {
			line += fmt.Sprintf(" [%s=%s %s]", s.Name, *s.Value, s.Source)
		}
		out = append(out, line)
	}
	return out
}

// TestClientMetricsResources checks client metrics resources (KIP-714
// subscriptions, what kafka-client-metrics --alter sets) as Kafka 4.4
// keeps them: set, described with every config, listed while they have
// configs, their configs checked in Kafka's order and words.
func TestClientMetricsResources(t *testing.T) {
	c := brokertest.New(t)
	cl := c.Client()
	if got := alterClientMetrics(t, cl, "sub1", "set:interval.ms=1000", "set:metrics=org.apache.kafka.producer."); got != "" {
		t.Fatalf("set sub1: %s", got)
	}
	want := []string{
		"interval.ms=1000 CLIENT_METRICS_CONFIG INT [interval.ms=1000 CLIENT_METRICS_CONFIG]",
		"match= DEFAULT_CONFIG LIST",
		"metrics=org.apache.kafka.producer. CLIENT_METRICS_CONFIG LIST [metrics=org.apache.kafka.producer. CLIENT_METRICS_CONFIG]",
	}
	if got := describeClientMetrics(t, cl, "sub1"); !slices.Equal(got, want) {
		t.Errorf("describe sub1:\n got %q\nwant %q", got, want)
	}
	if got, want := describeClientMetrics(t, cl, "nosuch"), []string{"interval.ms=300000 DEFAULT_CONFIG INT", "match= DEFAULT_CONFIG LIST", "metrics= DEFAULT_CONFIG LIST"}; !slices.Equal(got, want) {
		t.Errorf("describe nosuch:\n got %q\nwant %q", got, want)
	}
	if got, want := describeClientMetrics(t, cl, ""), []string{"INVALID_REQUEST: Client metrics subscription name must not be empty"}; !slices.Equal(got, want) {
		t.Errorf("describe the empty name: %q", got)
	}
	for _, tc := range []struct {
		name string
		ops  []string
		want string
	}{
		{"s", []string{"set:nosuch=1"}, "INVALID_REQUEST: Unknown client metrics configuration: nosuch"},
		{"s", []string{"set:interval.ms=abc"}, "INVALID_CONFIG: Invalid value abc for configuration interval.ms: Not a number of type INT"},
		{"s", []string{"set:interval.ms=99"}, "INVALID_REQUEST: Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)"},
		{"", []string{"set:interval.ms=1000"}, "INVALID_REQUEST: Subscription name can't be empty"},
		{"s", []string{"set:interval.ms"}, "INVALID_REQUEST: Null value not supported for : interval.ms"},
		{"s", []string{"append:metrics=a"}, "INVALID_CONFIG: Can't APPEND to key metrics because its type is not LIST."},
		{"s", []string{"set:match=client_id"}, "INVALID_CONFIG: Illegal client matching pattern: client_id"},
		{"s", []string{"set:match=bogus=x"}, "INVALID_CONFIG: Illegal client matching pattern: bogus=x"},
		{"s", []string{"set:match=client_id=["}, "INVALID_CONFIG: Illegal client matching pattern: client_id=["},
		{"sub2", []string{"set:match=client_id=a, client_software_name=b.*", "set:interval.ms=3600000"}, ""},
	} {
		if got := alterClientMetrics(t, cl, tc.name, tc.ops...); got != tc.want {
			t.Errorf("%q %v:\n got %s\nwant %s", tc.name, tc.ops, got, tc.want)
		}
	}
	if got := listConfigResources(t, c, cl, 0); !slices.Equal(got, []string{"", "16:sub1", "16:sub2"}) {
		t.Errorf("ListConfigResources v0: %v", got)
	}
	// A resource without configs is gone.
	if got := alterClientMetrics(t, cl, "sub1", "delete:interval.ms", "delete:metrics"); got != "" {
		t.Fatalf("delete sub1's configs: %s", got)
	}
	if got := listConfigResources(t, c, cl, 1, 16); !slices.Equal(got, []string{"", "16:sub2"}) {
		t.Errorf("ListConfigResources v1 of client metrics: %v", got)
	}
}

// TestClientMetricsAuthorization checks that client metrics resources are
// the cluster's: DESCRIBE_CONFIGS and ALTER_CONFIGS on it, as in Kafka.
func TestClientMetricsAuthorization(t *testing.T) {
	c, _ := aliceCluster(t)
	alice := as(c, "alice")
	if got := alterClientMetrics(t, alice, "sub", "set:interval.ms=1000"); !strings.HasPrefix(got, "CLUSTER_AUTHORIZATION_FAILED") {
		t.Errorf("alice alters a client metrics resource: %q", got)
	}
	if got := describeClientMetrics(t, alice, "sub"); len(got) != 1 || !strings.HasPrefix(got[0], "CLUSTER_AUTHORIZATION_FAILED") {
		t.Errorf("alice describes a client metrics resource: %q", got)
	}
}
