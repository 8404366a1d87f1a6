package broker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/internal/testkit"
)

// aliceCluster starts a secured node with topics orders and secret and
// gives User:alice WRITE on the topics prefixed "orders" and READ on
// orders and on the group g.
func aliceCluster(t *testing.T) (*brokertest.Cluster, context.Context) {
	c := brokertest.New(t, securedOptions(brokertest.Topic("orders", 1, 1), brokertest.Topic("secret", 1, 1))...)
	ctx := testkit.Context(t)
	admin := kadm.NewClient(as(c, "admin"))
	mustCreateACLs(t, ctx, admin, kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite))
	mustCreateACLs(t, ctx, admin, kadm.NewACLs().Allow("User:alice").Topics("orders").Groups("g").Operations(kadm.OpRead))
	return c, ctx
}

// TestAuthorizationProduceAndFetch checks Kafka's answers to a principal
// with and without the ACLs: an idempotent produce with WRITE on a topic
// only (KIP-679), TOPIC_AUTHORIZATION_FAILED for a topic it may not write
// or read, and the topic it may not see hidden from Metadata.
func TestAuthorizationProduceAndFetch(t *testing.T) {
	c, ctx := aliceCluster(t)
	alice := as(c, "alice", kgo.DefaultProduceTopic("orders"))
	if err := alice.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("idempotent produce to orders: %v", err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "secret", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce to secret: %v", err)
	}

	meta := kmsg.NewPtrMetadataRequest()
	resp, err := meta.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, st := range resp.Topics {
		seen = append(seen, *st.Topic)
	}
	if !slices.Equal(seen, []string{"orders"}) {
		t.Errorf("alice's metadata of all topics lists %v, want [orders]", seen)
	}
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("secret")}, {Topic: kmsg.StringPtr("nosuch")}}
	if resp, err = meta.RequestWith(ctx, alice); err != nil {
		t.Fatal(err)
	}
	for _, st := range resp.Topics {
		if st.ErrorCode != kerr.TopicAuthorizationFailed.Code || st.TopicID != ([16]byte{}) {
			t.Errorf("alice's metadata of %s: error %d, id %v; want TOPIC_AUTHORIZATION_FAILED without an id", *st.Topic, st.ErrorCode, st.TopicID)
		}
	}

	ids := map[[16]byte]string{}
	details, err := kadm.NewClient(as(c, "admin")).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxWaitMillis, fetch.MaxBytes = 0, 1<<20
	for _, name := range []string{"orders", "secret"} {
		ids[details[name].ID] = name
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = name, details[name].ID
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
		fetch.Topics = append(fetch.Topics, ft)
	}
	fresp, err := fetch.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range fresp.Topics {
		name := ids[st.TopicID]
		want := int16(0)
		if name == "secret" {
			want = kerr.TopicAuthorizationFailed.Code
		}
		if got := st.Partitions[0].ErrorCode; got != want {
			t.Errorf("alice's fetch of %s: error %d, want %d", name, got, want)
		}
	}
}

// TestAuthorizationGroups checks the group APIs: READ on the group to
// join it, DESCRIBE to find its coordinator, GROUP_AUTHORIZATION_FAILED
// otherwise.
func TestAuthorizationGroups(t *testing.T) {
	c, ctx := aliceCluster(t)
	alice := as(c, "alice")
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.Version, find.CoordinatorKeys = 4, []string{"g", "other"}
	fresp, err := find.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, co := range fresp.Coordinators {
		denied := co.ErrorCode == kerr.GroupAuthorizationFailed.Code
		if denied != (co.Key == "other") {
			t.Errorf("FindCoordinator %s: error %d", co.Key, co.ErrorCode)
		}
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "other", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
	// kgo turns the group's error into the request's.
	if jresp, err := join.RequestWith(ctx, alice); !errors.Is(err, kerr.GroupAuthorizationFailed) && (err != nil || jresp.ErrorCode != kerr.GroupAuthorizationFailed.Code) {
		t.Fatalf("join other: %+v, %v", jresp, err)
	}
	details, err := kadm.NewClient(as(c, "admin")).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[[16]byte]string{}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "g", -1
	for _, name := range []string{"orders", "secret"} {
		names[details[name].ID] = name
		ct := kmsg.NewOffsetCommitRequestTopic()
		ct.Topic, ct.TopicID = name, details[name].ID
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Offset = 0
		ct.Partitions = append(ct.Partitions, cp)
		commit.Topics = append(commit.Topics, ct)
	}
	cresp, err := commit.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range cresp.Topics {
		name := names[st.TopicID] + st.Topic
		want := int16(0)
		if name == "secret" {
			want = kerr.TopicAuthorizationFailed.Code
		}
		if got := st.Partitions[0].ErrorCode; got != want {
			t.Errorf("alice's commit to g of %s: error %d, want %d", name, got, want)
		}
	}
}

// TestAuthorizationDenialEvents checks that a denial reaches the event
// ring with who, what and the rule that decided, and that a client
// hammering a denied topic adds one event, not one a request.
func TestAuthorizationDenialEvents(t *testing.T) {
	c, ctx := aliceCluster(t)
	alice := as(c, "alice")
	meta := kmsg.NewPtrMetadataRequest()
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("secret")}}
	for range 20 {
		if _, err := meta.RequestWith(ctx, alice); err != nil {
			t.Fatal(err)
		}
	}
	var denials []events.Event
	for _, e := range c.Nodes()[0].Broker().Events().Since(0, 0).Events {
		if e.Kind == events.AuthorizationDenied && e.Topic == "secret" {
			denials = append(denials, e)
		}
	}
	if len(denials) != 1 {
		t.Fatalf("%d denial events of secret, want 1: %+v", len(denials), denials)
	}
	d := denials[0].Detail
	if d["principal"] != "User:alice" || d["client_id"] != "as-alice" || d["api"] != "Metadata" || d["operation"] != "DESCRIBE" ||
		d["resource_type"] != "TOPIC" || d["rule"] != "NoAcl" || d["address"] == "" {
		t.Errorf("denial event detail %v", d)
	}
}

// securityEvents are the events of kind on node 0 of c about topic ("" for
// any).
func securityEvents(c *brokertest.Cluster, kind events.Kind, topic string) []events.Event {
	var out []events.Event
	for _, e := range c.Nodes()[0].Broker().Events().Since(0, 0).Events {
		if e.Kind == kind && (topic == "" || e.Topic == topic) {
			out = append(out, e)
		}
	}
	return out
}

// repeatsOf sums the events' repeats: the denials or failed logins each
// stands for beyond itself.
func repeatsOf(evs []events.Event) int64 {
	var n int64
	for _, e := range evs {
		if r, ok := e.Detail["repeats"].(int64); ok {
			n += r
		}
	}
	return n
}

// TestAuthorizationDenialFlood checks that a denied produce makes an
// event naming who, from where, the API, the resource and the rule, that
// a thousand more make one event more, counting them, once the window
// ended, and that denials of a thousand distinct topics are cut to the
// budget, the next event counting those suppressed; an all-topics
// Metadata, which hides what the principal may not see, records none.
func TestAuthorizationDenialFlood(t *testing.T) {
	c, ctx := aliceCluster(t)
	// Produce v12, which names topics by name.
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.Produce.Int16(), 12)
	alice := as(c, "alice", kgo.MaxVersions(vs))
	node := c.Nodes()[0].Broker()
	produce := func(topic string) {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = 1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.TopicAuthorizationFailed.Code {
			t.Fatalf("produce to %s: error %d, want TOPIC_AUTHORIZATION_FAILED", topic, code)
		}
	}
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, alice); err != nil {
		t.Fatal(err)
	}
	if got := securityEvents(c, events.AuthorizationDenied, ""); len(got) != 0 {
		t.Fatalf("an all-topics Metadata recorded denials: %+v", got)
	}
	produce("secret")
	got := securityEvents(c, events.AuthorizationDenied, "secret")
	if len(got) != 1 {
		t.Fatalf("%d denial events of secret, want 1: %+v", len(got), got)
	}
	d := got[0].Detail
	want := map[string]any{
		"principal": "User:alice", "client_id": "as-alice", "api": "Produce", "operation": "WRITE",
		"resource_type": "TOPIC", "resource_name": "secret", "pattern_type": "LITERAL", "rule": "NoAcl",
		"reason": "no ACL names the resource and allow.everyone.if.no.acl.found is false",
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("denial detail %s = %v, want %v", k, d[k], v)
		}
	}
	if a, _ := d["address"].(string); a == "" {
		t.Errorf("denial without the client's address: %v", d)
	}
	for range 1000 {
		produce("secret")
	}
	if got := securityEvents(c, events.AuthorizationDenied, "secret"); len(got) != 1 {
		t.Fatalf("%d denial events of secret within the window, want 1", len(got))
	}
	if _, err := node.AdvanceClock(ctx, 11*time.Second); err != nil {
		t.Fatal(err)
	}
	got = securityEvents(c, events.AuthorizationDenied, "secret")
	if len(got) != 2 || repeatsOf(got) != 999 {
		t.Fatalf("after the window: %d events with %d repeats, want 2 with 999: %+v", len(got), repeatsOf(got), got)
	}

	// A thousand topics: distinct denials, cut to the budget: its burst
	// and its refill over the seconds the loop took. Each denial is
	// recorded or counted as suppressed on a later event, the last once
	// the budget refilled.
	before := len(securityEvents(c, events.AuthorizationDenied, ""))
	start := time.Now()
	for i := range 1000 {
		produce(fmt.Sprintf("other-%d", i))
	}
	took := time.Since(start)
	added := len(securityEvents(c, events.AuthorizationDenied, "")) - before
	if bound := 50 + int(took/time.Second) + 1; added > bound {
		t.Fatalf("1000 distinct denials in %v added %d events, want at most %d", took, added, bound)
	}
	if _, err := node.AdvanceClock(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	produce("secret")
	var suppressed int64
	for _, e := range securityEvents(c, events.AuthorizationDenied, "")[before:] {
		s, _ := e.Detail["suppressed"].(int64)
		suppressed += s
	}
	if int64(added)+suppressed != 1000 {
		t.Fatalf("%d events and %d suppressed, want 1000 denials in all", added, suppressed)
	}
}

// TestAuthorizationCreateTopics checks CreateTopics: CREATE on the topic
// (or the cluster) to create it, TOPIC_AUTHORIZATION_FAILED otherwise,
// and the configs of a topic created hidden without DESCRIBE_CONFIGS.
func TestAuthorizationCreateTopics(t *testing.T) {
	c, ctx := aliceCluster(t)
	mustCreateACLs(t, ctx, kadm.NewClient(as(c, "admin")), kadm.NewACLs().Allow("User:alice").Topics("new-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpCreate))
	alice := as(c, "alice")
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	for _, name := range []string{"new-one", "other"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range resp.Topics {
		switch st.Topic {
		case "new-one":
			// Without DESCRIBE_CONFIGS nothing of the topic is told.
			if st.ErrorCode != 0 || st.ConfigErrorCode != kerr.TopicAuthorizationFailed.Code || len(st.Configs) != 0 ||
				st.NumPartitions != -1 || st.ReplicationFactor != -1 {
				t.Errorf("create new-one: error %d, config error %d, %d configs, %d partitions, RF %d",
					st.ErrorCode, st.ConfigErrorCode, len(st.Configs), st.NumPartitions, st.ReplicationFactor)
			}
		case "other":
			if st.ErrorCode != kerr.TopicAuthorizationFailed.Code {
				t.Errorf("create other: error %d, want TOPIC_AUTHORIZATION_FAILED", st.ErrorCode)
			}
		}
	}
}

// TestAuthorizationSCRAMCredentials checks that describing SCRAM
// credentials needs DESCRIBE on the cluster and altering them ALTER, as
// Kafka asks.
func TestAuthorizationSCRAMCredentials(t *testing.T) {
	c, ctx := aliceCluster(t)
	alice := as(c, "alice")
	describe := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	dresp, err := describe.RequestWith(ctx, alice)
	if err != nil || dresp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice describes SCRAM credentials: %+v, %v", dresp, err)
	}
	alter := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	up.Name, up.Mechanism, up.Iterations, up.Salt, up.SaltedPassword = "bob", 2, 4096, []byte("salt"), []byte("salted-password-of-bob")
	alter.Upsertions = append(alter.Upsertions, up)
	aresp, err := alter.RequestWith(ctx, alice)
	if err != nil || len(aresp.Results) != 1 || aresp.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice alters SCRAM credentials: %+v, %v", aresp, err)
	}
	if aresp, err = alter.RequestWith(ctx, as(c, "admin")); err != nil || aresp.Results[0].ErrorCode != 0 {
		t.Fatalf("admin alters SCRAM credentials: %+v, %v", aresp, err)
	}
}

// TestAuthorizationClientQuotas checks that describing client quotas
// needs DESCRIBE_CONFIGS on the cluster and altering them ALTER_CONFIGS,
// as Kafka asks, and that a refused alteration changes nothing.
func TestAuthorizationClientQuotas(t *testing.T) {
	c, ctx := aliceCluster(t)
	alice, admin := as(c, "alice"), as(c, "admin")
	describe := kmsg.NewPtrDescribeClientQuotasRequest()
	dresp, err := describe.RequestWith(ctx, alice)
	if err != nil || dresp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice describes client quotas: %+v, %v", dresp, err)
	}
	alter := kmsg.NewPtrAlterClientQuotasRequest()
	e := kmsg.NewAlterClientQuotasRequestEntry()
	ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
	ent.Type, ent.Name = "client-id", kmsg.StringPtr("app")
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value = "producer_byte_rate", 1024
	e.Entity, e.Ops = append(e.Entity, ent), append(e.Ops, op)
	alter.Entries = append(alter.Entries, e)
	aresp, err := alter.RequestWith(ctx, alice)
	if err != nil || len(aresp.Entries) != 1 || aresp.Entries[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice alters client quotas: %+v, %v", aresp, err)
	}
	if dresp, err = describe.RequestWith(ctx, admin); err != nil || dresp.ErrorCode != 0 || dresp.Entries == nil || len(dresp.Entries) != 0 {
		t.Fatalf("admin describes client quotas after alice's refused change: %+v, %v (want no entry, [] not null)", dresp, err)
	}
	if aresp, err = alter.RequestWith(ctx, admin); err != nil || aresp.Entries[0].ErrorCode != 0 {
		t.Fatalf("admin alters client quotas: %+v, %v", aresp, err)
	}
}

// TestAuthorizationDeleteTopicsTellsNothing: a topic the principal may
// not delete is answered with only the name it asked for, not its id.
func TestAuthorizationDeleteTopicsTellsNothing(t *testing.T) {
	c, ctx := aliceCluster(t)
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 10000
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr("secret")
	req.Topics = append(req.Topics, dt)
	resp, err := req.RequestWith(ctx, as(c, "alice"))
	if err != nil || len(resp.Topics) != 1 {
		t.Fatalf("alice deletes secret: %+v, %v", resp, err)
	}
	if st := resp.Topics[0]; st.ErrorCode != kerr.TopicAuthorizationFailed.Code || st.TopicID != [16]byte{} {
		t.Errorf("alice deletes secret: error %d, topic id %x, want TOPIC_AUTHORIZATION_FAILED and no id", st.ErrorCode, st.TopicID)
	}
}

// TestAuthorizationUpdateFeatures checks that UpdateFeatures needs ALTER
// on the cluster, as Kafka's controller asks.
func TestAuthorizationUpdateFeatures(t *testing.T) {
	c, ctx := aliceCluster(t)
	req := kmsg.NewPtrUpdateFeaturesRequest()
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = "group.version", 0, 2
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	resp, err := req.RequestWith(ctx, as(c, "alice"))
	if err != nil || resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice updates features: %+v, %v", resp, err)
	}
	if resp, err = req.RequestWith(ctx, as(c, "admin")); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("admin updates features: %+v, %v", resp, err)
	}
}
