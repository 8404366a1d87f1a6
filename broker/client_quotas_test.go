package broker_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// quotaEntry is an AlterClientQuotas entry: entity parts as "type=name"
// ("type" alone for the default) and ops as "key=value" ("key" alone
// removes).
func quotaEntry(entity []string, ops ...kmsg.AlterClientQuotasRequestEntryOp) kmsg.AlterClientQuotasRequestEntry {
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for _, p := range entity {
		ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
		typ, name, named := strings.Cut(p, "=")
		ent.Type = typ
		if named {
			ent.Name = &name
		}
		e.Entity = append(e.Entity, ent)
	}
	e.Ops = ops
	return e
}

func setOp(key string, v float64) kmsg.AlterClientQuotasRequestEntryOp {
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value = key, v
	return op
}

func removeOp(key string) kmsg.AlterClientQuotasRequestEntryOp {
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Remove = key, true
	return op
}

// alterQuotas sends entries and returns each answer as
// "ERROR_NAME: message" ("" when it passed).
func alterQuotas(t *testing.T, cl *kgo.Client, validateOnly bool, entries ...kmsg.AlterClientQuotasRequestEntry) []string {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries, req.ValidateOnly = entries, validateOnly
	resp, err := req.RequestWith(testkit.Context(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range resp.Entries {
		s := ""
		if err := kerr.ErrorForCode(e.ErrorCode); err != nil {
			s = err.(*kerr.Error).Message
			if e.ErrorMessage != nil {
				s += ": " + *e.ErrorMessage
			}
		}
		out = append(out, s)
	}
	return out
}

// describeQuotas returns the quotas the filter matches as "entity: k=v"
// lines, or the request's error.
func describeQuotas(t *testing.T, adm *kadm.Client, strict bool, comps ...kadm.DescribeClientQuotaComponent) []string {
	t.Helper()
	qs, err := adm.DescribeClientQuotas(testkit.Context(t), strict, comps)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var out []string
	for _, q := range qs {
		for _, v := range q.Values {
			out = append(out, q.Entity.String()+": "+v.String())
		}
	}
	slices.Sort(out)
	return out
}

// TestClientQuotas sets, describes and removes client quotas with
// Kafka's checks and filters.
func TestClientQuotas(t *testing.T) {
	n := brokertest.Start(t)
	cl := n.Client()
	adm := kadm.NewClient(cl)
	got := alterQuotas(t, cl, false,
		quotaEntry([]string{"user=alice"}, setOp("producer_byte_rate", 1024)),
		quotaEntry([]string{"user=alice", "client-id=app"}, setOp("consumer_byte_rate", 2048), setOp("request_percentage", 12.5)),
		quotaEntry([]string{"user"}, setOp("producer_byte_rate", 100)),
		quotaEntry([]string{"client-id"}, setOp("controller_mutation_rate", 5)),
		quotaEntry([]string{"ip=10.0.0.1"}, setOp("connection_creation_rate", 3)),
	)
	if !slices.Equal(got, []string{"", "", "", "", ""}) {
		t.Fatalf("alter: %q", got)
	}
	name := func(s string) *string { return &s }
	for _, c := range []struct {
		strict bool
		comps  []kadm.DescribeClientQuotaComponent
		want   []string
	}{
		{false, nil, []string{
			"{client-id=<default>}: controller_mutation_rate=5.000000", "{ip=10.0.0.1}: connection_creation_rate=3.000000",
			"{user=<default>}: producer_byte_rate=100.000000", "{user=alice, client-id=app}: consumer_byte_rate=2048.000000",
			"{user=alice, client-id=app}: request_percentage=12.500000", "{user=alice}: producer_byte_rate=1024.000000",
		}},
		{false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: name("alice")}}, []string{
			"{user=alice, client-id=app}: consumer_byte_rate=2048.000000", "{user=alice, client-id=app}: request_percentage=12.500000",
			"{user=alice}: producer_byte_rate=1024.000000",
		}},
		{true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: name("alice")}}, []string{
			"{user=alice}: producer_byte_rate=1024.000000",
		}},
		{true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: kmsg.QuotasMatchTypeDefault}}, []string{
			"{user=<default>}: producer_byte_rate=100.000000",
		}},
		{false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: kmsg.QuotasMatchTypeAny}}, []string{
			"{client-id=<default>}: controller_mutation_rate=5.000000",
			"{user=alice, client-id=app}: consumer_byte_rate=2048.000000", "{user=alice, client-id=app}: request_percentage=12.500000",
		}},
		{false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: kmsg.QuotasMatchTypeDefault, MatchName: name("x")}},
			[]string{"error: INVALID_REQUEST: Request specified MATCH_TYPE_DEFAULT, but also specified a match string."}},
		{false, []kadm.DescribeClientQuotaComponent{{Type: "user"}},
			[]string{"error: INVALID_REQUEST: Request specified MATCH_TYPE_EXACT, but set match string to null."}},
		{false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: 2}, {Type: "user", MatchType: 2}},
			[]string{"error: INVALID_REQUEST: Entity type user cannot appear more than once in the filter."}},
		{false, []kadm.DescribeClientQuotaComponent{{Type: "group", MatchType: 2}},
			[]string{"error: UNSUPPORTED_VERSION: Unsupported entity type group"}},
		{false, []kadm.DescribeClientQuotaComponent{{Type: "ip", MatchType: 2}, {Type: "user", MatchType: 2}},
			[]string{"error: INVALID_REQUEST: Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."}},
	} {
		if got := describeQuotas(t, adm, c.strict, c.comps...); !slices.Equal(got, c.want) {
			t.Errorf("describe strict=%v %v:\n%q\nwant\n%q", c.strict, c.comps, got, c.want)
		}
	}

	// Kafka's refusals, each of its entry only.
	got = alterQuotas(t, cl, false,
		quotaEntry(nil, setOp("producer_byte_rate", 1)),
		quotaEntry([]string{"group=g"}, setOp("producer_byte_rate", 1)),
		quotaEntry([]string{"user="}, setOp("producer_byte_rate", 1)),
		quotaEntry([]string{"user=bob"}, setOp("no_such_rate", 1)),
		quotaEntry([]string{"user=carol"}, setOp("producer_byte_rate", -1)),
		quotaEntry([]string{"user=dave"}, setOp("producer_byte_rate", 1.5)),
		quotaEntry([]string{"user=erin"}, setOp("producer_byte_rate", 1), setOp("producer_byte_rate", 2)),
		quotaEntry([]string{"ip=10.0.0.2", "user=frank"}, setOp("connection_creation_rate", 1)),
		quotaEntry([]string{"user=gina"}, setOp("request_percentage", 0.5)),
		quotaEntry([]string{"user=gina"}, setOp("producer_byte_rate", 7)),
	)
	want := []string{
		"INVALID_REQUEST: Invalid empty client quota entity",
		"INVALID_REQUEST: Unhandled client quota entity type: group",
		"INVALID_REQUEST: Empty user not supported",
		"INVALID_REQUEST: Invalid configuration key no_such_rate",
		"INVALID_REQUEST: Quota producer_byte_rate must be greater than 0",
		"INVALID_REQUEST: producer_byte_rate cannot be a fractional value.",
		"INVALID_REQUEST: Ignoring duplicate entity ClientQuotaEntity(entries={user=erin})",
		"INVALID_REQUEST: Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
		"INVALID_REQUEST: Ignoring duplicate entity ClientQuotaEntity(entries={user=gina})",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("refusals:\n%q\nwant\n%q", got, want)
	}
	// The first entry of a duplicated entity was applied, as in Kafka;
	// validate-only changes nothing; removing the last key removes the
	// entity.
	alterQuotas(t, cl, true, quotaEntry([]string{"user=alice"}, setOp("producer_byte_rate", 9)))
	alterQuotas(t, cl, false, quotaEntry([]string{"user=alice", "client-id=app"}, removeOp("consumer_byte_rate"), removeOp("request_percentage")))
	got = describeQuotas(t, adm, false, kadm.DescribeClientQuotaComponent{Type: "user", MatchType: kmsg.QuotasMatchTypeAny})
	want = []string{
		"{user=<default>}: producer_byte_rate=100.000000", "{user=alice}: producer_byte_rate=1024.000000",
		"{user=gina}: request_percentage=0.500000",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after removals:\n%q\nwant\n%q", got, want)
	}
}

// TestClientQuotasReachEveryNode alters quotas through each node of a
// cluster in turn (the others forward to the active controller) and
// sees them in every node's DescribeClientQuotas.
func TestClientQuotasReachEveryNode(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	cl := c.Client()
	ctx := testkit.Context(t)
	for _, n := range c.Nodes() {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		user := "via-" + n.Addr()
		req.Entries = append(req.Entries, quotaEntry([]string{"user=" + user}, setOp("producer_byte_rate", float64(n.ID()+1))))
		resp, err := req.RequestWith(ctx, cl.Broker(int(n.ID())))
		if err == nil {
			err = kerr.ErrorForCode(resp.Entries[0].ErrorCode)
		}
		if err != nil {
			t.Fatalf("alter through node %d: %v", n.ID(), err)
		}
	}
	for _, n := range c.Nodes() {
		testkit.WaitFor(t, "node's quotas", func() (bool, string) {
			resp, err := kmsg.NewPtrDescribeClientQuotasRequest().RequestWith(ctx, cl.Broker(int(n.ID())))
			if err != nil {
				return false, err.Error()
			}
			return len(resp.Entries) == len(c.Nodes()), strings.Repeat("entry ", len(resp.Entries))
		})
	}
}

// TestClientQuotasNoMatchIsEmpty: a filter that matches nothing is
// answered with an empty array of entries, not the null of an error,
// which Kafka's kafka-configs --describe --entity-type users cannot read.
func TestClientQuotasNoMatchIsEmpty(t *testing.T) {
	n := brokertest.Start(t)
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.MatchType, c.Match = "user", 0, kmsg.StringPtr("nobody")
	req.Components = append(req.Components, c)
	resp, err := req.RequestWith(testkit.Context(t), n.Client())
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.Entries == nil || len(resp.Entries) != 0 {
		t.Fatalf("error %d, entries %v (nil %v): want no error and an empty array", resp.ErrorCode, resp.Entries, resp.Entries == nil)
	}
}

// TestRequestPercentageThrottles: a client over a request_percentage is
// told to wait, in the answers that carry a throttle time, for at most
// one quota window.
func TestRequestPercentageThrottles(t *testing.T) {
	n := brokertest.Start(t)
	cl := n.Client()
	ctx := testkit.Context(t)
	if got := alterQuotas(t, cl, false, quotaEntry([]string{"client-id"}, setOp("request_percentage", 0.001))); got[0] != "" {
		t.Fatal(got)
	}
	testkit.WaitFor(t, "a throttled Metadata answer", func() (bool, string) {
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil {
			return false, err.Error()
		}
		if resp.ThrottleMillis > 1000 {
			t.Fatalf("throttled %d ms, more than the 1 s window", resp.ThrottleMillis)
		}
		return resp.ThrottleMillis > 0, "not throttled"
	})
}
